import { InvalidInputError } from '../common/errors';

const COLOR = /^#?(?:[0-9a-f]{6}|[0-9a-f]{3})$/;

/**
 * A label colour as Forgejo normalizes it: trimmed, lower-cased, `#` added, three digits doubled to six;
 * anything else is a 422 with Forgejo's message.
 */
export function normalizeColor(raw: string): string {
  let color = raw.trim().toLowerCase();
  if (color.length === 6 || color.length === 3) color = `#${color}`;
  if (!COLOR.test(color)) throw new InvalidInputError(`bad color code: ${color}`);
  if (color.length === 4) color = `#${color[1]}${color[1]}${color[2]}${color[2]}${color[3]}${color[3]}`;
  return color;
}
