import { Injectable } from '@nestjs/common';

/** RFC 3339 in UTC with seconds precision; a time never set (0) is Go's zero time, as Forgejo writes it. */
export function formatTime(unixSeconds: number): string {
  if (!unixSeconds) return '0001-01-01T00:00:00Z';
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
