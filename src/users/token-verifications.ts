import { LRUCache } from 'lru-cache';

/** A verified token's id, or `undefined` for a token that matched a stored last-eight but not its hash. */
export interface Verification {
  id: number | undefined;
}

/**
 * What verifying each presented token found, by sha256(token): so PBKDF2 runs once per token, not per request.
 * Bounded: the least recently used entries go first. Many requests presenting the same new token at the same
 * moment share one verification. A verification that finds nothing to compare (no stored token has those
 * last eight characters) is not kept, so random tokens cannot crowd out real ones.
 */
export class TokenVerifications {
  private readonly cache: LRUCache<string, Verification, string>;

  constructor(max: number, verify: (plaintext: string) => Promise<Verification | undefined>) {
    this.cache = new LRUCache<string, Verification, string>({ max, fetchMethod: (_digest, _stale, { context }) => verify(context) });
  }

  get(digest: string, plaintext: string): Promise<Verification | undefined> {
    return this.cache.fetch(digest, { context: plaintext });
  }

  forget(digest: string): void {
    this.cache.delete(digest);
  }

  has(digest: string): boolean {
    return this.cache.has(digest);
  }

  /** Whether this token was verified as a stored token's (kept, not expired); asks nothing. */
  knownValid(digest: string): boolean {
    return this.cache.peek(digest)?.id !== undefined;
  }
}
