import { InvalidInputError } from '../common/errors';

// Why: the sizes an issue, a comment and their requests may have, shared by the routes that read them and the
// services that check them.

/**
 * Largest issue body or comment kept, in UTF-8 bytes: longer is a 422 and nothing is written. Forgejo sets no
 * bound of its own; Renovate cuts its dependency dashboard at a million characters, which this holds.
 */
export const MAX_ISSUE_BODY_BYTES = 4 * 1024 * 1024;

/** Requests that carry a body or comment may be this large (413 beyond): the text, JSON-escaped, and the rest. */
export function issueBodyLimit(config: { maxBodyBytes: number }): number {
  return Math.max(config.maxBodyBytes, 2 * MAX_ISSUE_BODY_BYTES + 64 * 1024);
}
/** Titles are cut to this many bytes, at a character boundary. */
export const MAX_TITLE_BYTES = 255;
/** Labels, assignees and milestones of one query or body beyond these are refused (422). */
export const MAX_NAMES = 50;

/** Cut at `max` UTF-8 bytes without splitting a character. */
export function cutToBytes(value: string, max: number): string {
  if (Buffer.byteLength(value) <= max) return value;
  let result = '';
  let bytes = 0;
  for (const character of value) {
    const size = Buffer.byteLength(character);
    if (bytes + size > max) break;
    result += character;
    bytes += size;
  }
  return result;
}

export function assertBodySize(body: string): void {
  if (Buffer.byteLength(body) > MAX_ISSUE_BODY_BYTES) throw new InvalidInputError(`body is too long: at most ${MAX_ISSUE_BODY_BYTES} bytes`);
}
