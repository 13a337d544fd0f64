import { formatTime } from './time';

describe('formatTime', () => {
  it('writes RFC 3339 UTC seconds, Go zero time for 0, and far years unchanged but without milliseconds', () => {
    expect(formatTime(0)).toBe('0001-01-01T00:00:00Z');
    expect(formatTime(1_700_000_000)).toBe('2023-11-14T22:13:20Z');
    expect(formatTime(1)).toBe('1970-01-01T00:00:01Z');
    expect(formatTime(253_402_300_800)).toBe('+010000-01-01T00:00:00Z');
  });
});
