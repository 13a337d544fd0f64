import { Injectable } from '@nestjs/common';
import { QuotaExceededError } from '../common/errors';
import { QuotaConfig } from '../config/slices';
import { ActiveClaim } from '../claims/claim.store';
import { Claims } from '../claims/claims';
import { EvaluatedGroup, isAllowed, remainingFor, usageNeededFor } from './quota-evaluation';
import type { QuotaGate, QuotaReservation, QuotaTarget, ReservedItem, ReserveOptions } from './quota-gate';
import { measuredItemsOf, NO_USAGE, QuotaSubject, QuotaUsage } from './quota-subjects';
import { QuotaUsageStore } from './quota-usage.store';
import { QuotaGroupWithRules, QuotaStore } from './quota.store';

/** What a target sees of its quota: usage and the groups listed in /user/quota (docs/quota.md). */
export interface QuotaState {
  used: QuotaUsage;
  /** Explicit groups, else the existing default groups, else none (the built-in default is never listed). */
  groups: QuotaGroupWithRules[];
}

const ZERO_ID = /^0+$/;

/**
 * Evaluation (docs/quota.md) and the gate other modules call. A check is two indexed queries, the
 * target's groups with their rules and its usage, whatever the number of its repositories; for a subject that
 * counts repositories (creation, push, migration, mirror sync) both are sent at once, so a client/server
 * database is waited on once, not twice.
 */
@Injectable()
export class QuotaEngine implements QuotaGate {
  constructor(
    private readonly store: QuotaStore,
    private readonly usage: QuotaUsageStore,
    private readonly claims: Claims,
    private readonly quotaConfig: QuotaConfig,
  ) {}

  get enabled(): boolean {
    return this.quotaConfig.enabled;
  }

  /** Explicit groups; otherwise the QUOTA_DEFAULT_GROUPS that exist; otherwise none. */
  async listedGroups(targetId: number): Promise<QuotaGroupWithRules[]> {
    const explicit = await this.store.explicitGroupsOf(targetId);
    if (explicit.length > 0) return explicit;
    return this.store.groupsNamed(this.quotaConfig.defaultGroups);
  }

  async state(targetId: number): Promise<QuotaState> {
    const [used, groups] = await Promise.all([this.usage.usageOf(targetId), this.listedGroups(targetId)]);
    return { used, groups };
  }

  /**
   * The quota rule (docs/quota.md); the effective groups fall back to the built-in `size:all` rule when none is listed. Only the
   * usage that the matching limited rules sum is read (none when every matching rule is unlimited or no rule
   * matches), after the groups; the repositories' row (one primary-key read) is read beside the groups when the
   * subject counts repositories, since it is needed unless every matching rule is unlimited.
   */
  async evaluate(targetId: number, subject: QuotaSubject): Promise<boolean> {
    if (!this.enabled) return true;
    const [groups, repos] = await Promise.all([
      this.listedGroups(targetId),
      measuredItemsOf(subject).includes('repos') ? this.usage.usageOf(targetId, ['repos']) : undefined,
    ]);
    const effective: EvaluatedGroup[] = groups.length > 0 ? groups : [{ rules: [{ limit: this.quotaConfig.defaultTotal, subjects: ['size:all'] }] }];
    const rest = usageNeededFor(effective, subject).filter((item) => !(repos && item === 'repos'));
    const used = rest.length > 0 ? await this.usage.usageOf(targetId, rest) : NO_USAGE;
    return isAllowed(effective, subject, repos ? { ...used, reposPublic: repos.reposPublic, reposPrivate: repos.reposPrivate } : used);
  }

  canWrite(ownerId: number, subject: QuotaSubject): Promise<boolean> {
    return this.evaluate(ownerId, subject);
  }

  async assertCanWrite(owner: QuotaTarget, subject: QuotaSubject): Promise<void> {
    if (!(await this.evaluate(owner.id, subject))) throw new QuotaExceededError(owner.id, owner.name);
  }

  async canAcceptPush(ownerId: number, newObjectIds: string[]): Promise<boolean> {
    if (newObjectIds.every((id) => ZERO_ID.test(id))) return true;
    return this.evaluate(ownerId, 'size:repos:all');
  }

  assertCanCreateRepository(owner: QuotaTarget): Promise<void> {
    return this.assertCanWrite(owner, 'size:repos:all');
  }

  /**
   * Decided on the owner's groups, stored usage and the reservations in flight (claims of scope
   * `quota:<owner id>`), and recorded only if no other reservation or settlement came in between (Claims).
   */
  async reserve(
    owner: QuotaTarget,
    subject: QuotaSubject,
    item: ReservedItem,
    bytes: number | 'remaining',
    options: ReserveOptions = {},
  ): Promise<QuotaReservation> {
    const unlimited: QuotaReservation = { amount: Infinity, settle: () => Promise.resolve(), release: () => Promise.resolve() };
    if (!this.enabled) return unlimited;
    const claim = await this.claims.take(`quota:${owner.id}`, async (active) => {
      const groups = await this.listedGroups(owner.id);
      const effective: EvaluatedGroup[] = groups.length > 0 ? groups : [{ rules: [{ limit: this.quotaConfig.defaultTotal, subjects: ['size:all'] }] }];
      const needed = usageNeededFor(effective, subject);
      const used = withReserved(needed.length > 0 ? await this.usage.usageOf(owner.id, needed) : NO_USAGE, active);
      if (!isAllowed(effective, subject, used)) throw new QuotaExceededError(owner.id, owner.name);
      if (options.whole && bytes !== 'remaining' && remainingFor(effective, subject, used) < bytes) throw new QuotaExceededError(owner.id, owner.name);
      const amount = bytes === 'remaining' ? remainingFor(effective, subject, used) : bytes;
      if (needed.length === 0 || amount === Infinity) return 'unlimited';
      return { item, ownerId: owner.id, amount: Math.max(0, Math.ceil(amount)) };
    });
    if (claim === 'full') throw new QuotaExceededError(owner.id, owner.name);
    return claim;
  }
}

/** Stored usage plus what reservations in flight will add, each under its item. */
function withReserved(used: QuotaUsage, active: ActiveClaim[]): QuotaUsage {
  if (active.length === 0) return used;
  const total = { ...used };
  for (const claim of active) {
    if (claim.item in total) total[claim.item as keyof QuotaUsage] += claim.amount;
  }
  return total;
}
