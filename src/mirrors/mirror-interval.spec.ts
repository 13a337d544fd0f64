import { parseMirrorInterval } from './mirror-interval';

describe('mirror interval', () => {
  it.each([
    [undefined, 0 + 8 * 3600, '8h0m0s'],
    ['', 8 * 3600, '8h0m0s'],
    ['0', 0, '0s'],
    ['10m', 600, '10m0s'],
    ['1h30m', 5400, '1h30m0s'],
    ['10m0.9s', 600, '10m0s'],
  ])('%j is stored as %i s and written %s', (value, seconds, display) => {
    expect(parseMirrorInterval(value)).toEqual({ seconds, display });
  });

  it.each([
    ['1', 'time: invalid duration "1"'],
    ['soon', 'time: invalid duration "soon"'],
    ['5m', 'invalid mirror interval: 5m0s is below minimum interval: 10m0s'],
    ['-1h', 'invalid mirror interval: -1h0m0s is below minimum interval: 10m0s'],
    ['100ms', 'invalid mirror interval: 100ms is below minimum interval: 10m0s'],
  ])('refuses %j', (value, message) => {
    expect(() => parseMirrorInterval(value)).toThrow(message);
  });
});
