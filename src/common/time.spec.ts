import { formatTime } from './time';

describe('formatTime', () => {
  it('writes RFC 3339 UTC seconds, Go zero time for 0, and far years unchanged but without milliseconds', () => {
    expect(formatTime(0)).toBe('0001-01-01T00:00:00Z');
    expect(formatTime(1_700_000_000)).toBe('2023-11-14T22:13:20Z');
    expect(formatTime(1)).toBe('1970-01-01T00:00:01Z');
    expect(formatTime(253_402_300_800)).toBe('+010000-01-01T00:00:00Z');
  });
});

describe('formatTime against the Date-based form', () => {
  const viaDate = (unix: number) => new Date(unix * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

  it('writes the same text as Date for times across eras, day boundaries and leap days', () => {
    const samples = [
      1, 59, 60, 3599, 3600, 86_399, 86_400, 951_782_400, 951_868_799, 1_700_000_000, 4_102_444_799, 253_402_300_799, -1, -86_400, -86_401, -62_135_596_800,
    ];
    for (let unix = -5_000_000_000; unix < 10_000_000_000; unix += 7_777_777) samples.push(unix);
    for (const unix of samples) expect([unix, formatTime(unix)]).toEqual([unix, viaDate(unix)]);
  });

  it('keeps seconds truncated for fractional times, as before', () => {
    expect(formatTime(1_700_000_000.75)).toBe('2023-11-14T22:13:20Z');
  });
});
