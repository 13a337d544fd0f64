/**
 * Go's `time.ParseDuration` and `Duration.String`, because mirror intervals are read and written in Go's
 * form (docs/mirrors.md): `8h0m0s`, `10m0s`, `1h30m0s`, `0s`. Durations are nanoseconds held in a bigint
 * so that every value Go accepts (up to about 292 years) round-trips exactly.
 */
const UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  µs: 1_000n, // U+00B5 micro sign
  μs: 1_000n, // U+03BC Greek mu
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

const MAX_NANOS = (1n << 63n) - 1n;
export const NANOS_PER_SECOND = 1_000_000_000n;

/** Returns the duration in nanoseconds, or undefined where Go's ParseDuration answers an error. */
export function parseGoDuration(text: string): bigint | undefined {
  let rest = text;
  let negative = false;
  if (rest.startsWith('-') || rest.startsWith('+')) {
    negative = rest.startsWith('-');
    rest = rest.slice(1);
  }
  if (rest === '0') return 0n;
  if (rest === '') return undefined;
  let total = 0n;
  while (rest !== '') {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest)!;
    const whole = number[1];
    const fraction = number[2];
    if (whole === '' && (fraction === undefined || fraction === '')) return undefined;
    rest = rest.slice(number[0].length);
    const unitMatch = /^[^\d.]+/.exec(rest);
    if (!unitMatch) return undefined;
    // Own keys only: a unit such as `constructor` must not find Object.prototype's.
    const unit = Object.hasOwn(UNITS, unitMatch[0]) ? UNITS[unitMatch[0]] : undefined;
    if (unit === undefined) return undefined;
    rest = rest.slice(unitMatch[0].length);
    let value = BigInt(whole === '' ? '0' : whole) * unit;
    if (fraction) {
      // Go keeps the fraction with float precision; exact decimal scaling differs from it only below 1 ns.
      const scale = 10n ** BigInt(fraction.length);
      value += (BigInt(fraction) * unit) / scale;
    }
    total += value;
    if (total > MAX_NANOS) return undefined;
  }
  return negative ? -total : total;
}

/** Go's `Duration.String`. */
export function formatGoDuration(nanos: bigint): string {
  if (nanos === 0n) return '0s';
  const negative = nanos < 0n;
  let u = negative ? -nanos : nanos;
  const sign = negative ? '-' : '';
  if (u < NANOS_PER_SECOND) {
    // Below one second Go uses the largest of ms, µs, ns and a decimal fraction.
    const [unit, size] = u < 1_000n ? ['ns', 1n] : u < 1_000_000n ? ['µs', 1_000n] : ['ms', 1_000_000n];
    return `${sign}${decimal(u, size)}${unit}`;
  }
  const hours = u / 3_600_000_000_000n;
  u -= hours * 3_600_000_000_000n;
  const minutes = u / 60_000_000_000n;
  u -= minutes * 60_000_000_000n;
  const seconds = decimal(u, NANOS_PER_SECOND);
  if (hours > 0n) return `${sign}${hours}h${minutes}m${seconds}s`;
  if (minutes > 0n) return `${sign}${minutes}m${seconds}s`;
  return `${sign}${seconds}s`;
}

function decimal(value: bigint, unit: bigint): string {
  const whole = value / unit;
  const fraction = value % unit;
  if (fraction === 0n) return String(whole);
  const digits = String(unit).length - 1;
  return `${whole}.${String(fraction).padStart(digits, '0').replace(/0+$/, '')}`;
}
