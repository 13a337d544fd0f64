import type { QuotaSubject } from './quota-subjects';

/** Who a quota check is about: the user or organisation that owns what is being written. */
export interface QuotaTarget {
  id: number;
  /** The name shown in the 413 body (the organisation's name for an organisation). */
  name: string;
}

/**
 * The one interface through which other modules ask the quota engine (behaviour 11.5, 11.6). Nothing outside
 * src/quota reads the quota tables. Every method answers "allowed" while QUOTA_ENABLED is false. Usage is the
 * stored usage at the moment of the call (repository sizes as last recorded), so one accepted write can take a
 * target over its limit and the next one is refused.
 */
export interface QuotaGate {
  /** True when `subject` is allowed for the target `ownerId` (11.5); false when refused. */
  canWrite(ownerId: number, subject: QuotaSubject): Promise<boolean>;

  /** Throws QuotaExceededError (413 with the body of 11.6) when `subject` is refused for `owner`. */
  assertCanWrite(owner: QuotaTarget, subject: QuotaSubject): Promise<void>;

  /**
   * The pre-receive rule of git-transport.md 0.4: `newObjectIds` are the new values of the pushed ref updates.
   * A push made only of deletions (every new value the zero id) is always accepted; otherwise the repository
   * owner must be allowed `size:repos:all`. False means: refuse the whole push with `Anvil: Quota exceeded`.
   */
  canAcceptPush(ownerId: number, newObjectIds: string[]): Promise<boolean>;

  /** POST /user/repos, /orgs/{org}/repos, /org/{org}/repos and /repos/migrate: `size:repos:all`, else 413. */
  assertCanCreateRepository(owner: QuotaTarget): Promise<void>;
}

export const QUOTA_GATE = Symbol('QUOTA_GATE');
