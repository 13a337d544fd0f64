import { InvalidInputError } from '../common/errors';
import { formatGoDuration, NANOS_PER_SECOND, parseGoDuration } from './go-duration';

/** Fixed: the interval of a mirror that names none, and the smallest one besides 0. */
export const DEFAULT_MIRROR_INTERVAL = '8h';
const MINIMUM_NANOS = 10n * 60n * NANOS_PER_SECOND;

export interface MirrorInterval {
  /** Whole seconds; 0 = no periodic sync. */
  seconds: number;
  /** Go's `Duration.String` of the stored value: `8h0m0s`, `0s`. */
  display: string;
}

/**
 * docs/mirrors.md, the texts of Forgejo's PATCH: unparsable → `time: invalid duration "<v>"`;
 * not 0 and below 10m (negatives included) → `invalid mirror interval: <d> is below minimum interval: 10m0s`.
 * The value is truncated to whole seconds.
 */
export function parseMirrorInterval(value: string | undefined | null): MirrorInterval {
  const text = value === undefined || value === null || value === '' ? DEFAULT_MIRROR_INTERVAL : value;
  const nanos = parseGoDuration(text);
  if (nanos === undefined) throw new InvalidInputError(`time: invalid duration ${JSON.stringify(text)}`);
  if (nanos !== 0n && nanos < MINIMUM_NANOS) {
    throw new InvalidInputError(`invalid mirror interval: ${formatGoDuration(nanos)} is below minimum interval: ${formatGoDuration(MINIMUM_NANOS)}`);
  }
  const seconds = nanos / NANOS_PER_SECOND;
  return { seconds: Number(seconds), display: formatGoDuration(seconds * NANOS_PER_SECOND) };
}
