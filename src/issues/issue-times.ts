import { InvalidInputError } from '../common/errors';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

/** Seconds of an RFC 3339 time (`2025-01-31T12:00:00Z`, `…+02:00`), or undefined when it is not one. */
export function parseRfc3339(value: string): number | undefined {
  const match = RFC3339.exec(value.trim());
  if (!match) return undefined;
  const millis = Date.parse(value.trim());
  return Number.isFinite(millis) ? Math.floor(millis / 1000) : undefined;
}

/** A query's `since`/`before`: absent or empty is no bound, anything but RFC 3339 a 422, as Forgejo. */
export function queryTime(raw: unknown, name: string): number | undefined {
  const value = typeof raw === 'string' ? raw.trim() : Array.isArray(raw) && typeof raw[0] === 'string' ? raw[0].trim() : '';
  if (value === '') return undefined;
  const seconds = parseRfc3339(value);
  if (seconds === undefined) throw new InvalidInputError(`parsing time "${value}" as "2006-01-02T15:04:05Z07:00": cannot parse ${name}`);
  return seconds || undefined;
}

/**
 * A due date as Forgejo stores it: the last second (23:59:59) of the given day, in the time zone the date was
 * written in. Undefined when the text is not a time (422 by the caller).
 */
export function endOfDay(value: string): number | undefined {
  const match = RFC3339.exec(value.trim());
  if (!match || parseRfc3339(value) === undefined) return undefined;
  const zone = match[8];
  const offsetMinutes = zone === 'Z' ? 0 : (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
  const utc = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]), 23, 59, 59);
  return Math.floor(utc / 1000) - offsetMinutes * 60;
}
