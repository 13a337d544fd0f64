import type { Claim } from '../claims/claims';
import type { QuotaSubject } from './quota-subjects';

/** Who a quota check is about: the user or organisation that owns what is being written. */
export interface QuotaTarget {
  id: number;
  /** The name shown in the 413 body (the organisation's name for an organisation). */
  name: string;
}

/**
 * The one interface through which other modules ask the quota engine (docs/quota.md). Nothing outside
 * src/quota reads the quota tables. Every method answers "allowed" while QUOTA_ENABLED is false. Usage is the
 * stored usage at the moment of the call (repository sizes as last recorded), so one accepted write can take a
 * target over its limit and the next one is refused.
 */
export interface QuotaGate {
  /** True when `subject` is allowed for the target `ownerId` (docs/quota.md); false when refused. */
  canWrite(ownerId: number, subject: QuotaSubject): Promise<boolean>;

  /** Throws QuotaExceededError (413 with Forgejo's quota body) when `subject` is refused for `owner`. */
  assertCanWrite(owner: QuotaTarget, subject: QuotaSubject): Promise<void>;

  /**
   * The pre-receive quota rule (docs/git-transports.md): `newObjectIds` are the new values of the pushed ref updates.
   * A push made only of deletions (every new value the zero id) is always accepted; otherwise the repository
   * owner must be allowed `size:repos:all`. False means: refuse the whole push with `Anvil: Quota exceeded`.
   */
  canAcceptPush(ownerId: number, newObjectIds: string[]): Promise<boolean>;

  /** POST /user/repos, /orgs/{org}/repos, /org/{org}/repos and /repos/migrate: `size:repos:all`, else 413. */
  assertCanCreateRepository(owner: QuotaTarget): Promise<void>;

  /**
   * The check of `assertCanWrite` (413 when refused), with what other writes have in flight counted as used,
   * and the write's own size reserved, in one step that concurrent writes on any instance cannot interleave:
   * `bytes` is the most the write can add (a declared length, else the size cap); 'remaining' reserves what
   * the owner has left of `subject` (the byte budget of a push, a migration or a mirror sync). Every caller
   * releases the reservation when done (in a `finally`), after settling it where the write is recorded.
   */
  reserve(owner: QuotaTarget, subject: QuotaSubject, item: ReservedItem, bytes: number | 'remaining', options?: ReserveOptions): Promise<QuotaReservation>;
}

export interface ReserveOptions {
  /**
   * The write's exact size is known before it starts (an LFS object): refuse it unless all of it fits in what
   * the owner has left, rather than only while the owner is under the limit.
   */
  whole?: boolean;
}

/** The usage item that bytes reserved for a write will be counted under once recorded. */
export type ReservedItem = 'reposPublic' | 'reposPrivate' | 'lfs' | 'attachmentsReleases' | 'packages';

/**
 * Quota held for a write in flight: it counts as usage (for every instance on the database) from before the
 * write's bytes are read until it is settled in the transaction that records the write, or released. `amount`
 * is the number of bytes reserved, Infinity when nothing limits the write.
 */
export type QuotaReservation = Claim;

export const QUOTA_GATE = Symbol('QUOTA_GATE');
