import { formatGoDuration, parseGoDuration } from './go-duration';

describe('Go durations', () => {
  it.each([
    ['8h', '8h0m0s'],
    ['10m', '10m0s'],
    ['1h30m', '1h30m0s'],
    ['0', '0s'],
    ['-0', '0s'],
    ['90m', '1h30m0s'],
    ['1.5h', '1h30m0s'],
    ['.5h', '30m0s'],
    ['100ms', '100ms'],
    ['1.5s', '1.5s'],
    ['-1h', '-1h0m0s'],
    ['2µs', '2µs'],
    ['3us', '3µs'],
    ['45s', '45s'],
    ['1h2m3s4ms', '1h2m3.004s'],
  ])('parses %s and writes it as %s', (input, output) => {
    expect(formatGoDuration(parseGoDuration(input)!)).toBe(output);
  });

  it.each(['', '1', 'h', '.h', '1x', '1hh', 'abc', '1 h', '+', '10m ', '9999999999999999999h', '1constructor', '2toString', '1__proto__'])(
    'refuses %j',
    (input) => {
      expect(parseGoDuration(input)).toBeUndefined();
    },
  );
});
