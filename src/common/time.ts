import { Injectable } from '@nestjs/common';

/** RFC 3339 in UTC with seconds precision; a time never set (0) is Go's zero time, as Forgejo writes it. */
export function formatTime(unixSeconds: number): string {
  if (!unixSeconds) return '0001-01-01T00:00:00Z';
  // Lists format two or three times per row: the date part comes from a small cache of days, the time of day
  // is arithmetic, so no Date and no ISO string is built per call (same text as `isoSeconds`).
  if (!Number.isInteger(unixSeconds)) return isoSeconds(unixSeconds);
  const day = Math.floor(unixSeconds / SECONDS_PER_DAY);
  const secondOfDay = unixSeconds - day * SECONDS_PER_DAY;
  const hours = Math.floor(secondOfDay / 3600);
  const minutes = Math.floor((secondOfDay % 3600) / 60);
  return `${datePrefix(day)}${TWO_DIGITS[hours]}:${TWO_DIGITS[minutes]}:${TWO_DIGITS[secondOfDay % 60]}Z`;
}

const SECONDS_PER_DAY = 86_400;
const TWO_DIGITS = Array.from({ length: 60 }, (_, index) => String(index).padStart(2, '0'));
/** `YYYY-MM-DDT` by day since the epoch; bounded, emptied when full (a day's entry is a few dozen bytes). */
const DATE_PREFIXES = new Map<number, string>();
const DATE_PREFIX_LIMIT = 4096;

function datePrefix(day: number): string {
  let prefix = DATE_PREFIXES.get(day);
  if (prefix === undefined) {
    const iso = isoSeconds(day * SECONDS_PER_DAY);
    prefix = iso.slice(0, iso.indexOf('T') + 1);
    if (DATE_PREFIXES.size >= DATE_PREFIX_LIMIT) DATE_PREFIXES.clear();
    DATE_PREFIXES.set(day, prefix);
  }
  return prefix;
}

function isoSeconds(unixSeconds: number): string {
  const iso = new Date(unixSeconds * 1000).toISOString();
  // `YYYY-MM-DDTHH:mm:ss.sssZ` (24 characters) for years 0–9999: cut the milliseconds; other years as they come.
  return iso.length === 24 ? `${iso.slice(0, 19)}Z` : iso.replace(/\.\d{3}Z$/, 'Z');
}

/** The clock adapter, so that tests can pin time. */
@Injectable()
export class Clock {
  nowUnix(): number {
    return Math.floor(Date.now() / 1000);
  }
}
