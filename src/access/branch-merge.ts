import { compileGlob, globError } from './branch-globs';
import type { ProtectionRule } from './branch-protection';

/**
 * Whether a pull request may be merged into a protected branch: the merge half of branch protection, a pure
 * function of the rule governing the base branch and the facts of the pull request, for the merge engine and
 * auto-merge to call (docs/branch-protection.md). The texts are Forgejo's; the merge route answers 405 with them.
 */

export type CommitState = 'pending' | 'success' | 'error' | 'failure' | 'warning';

/** Worst first: a combined state is the worst of its parts. */
const STATE_PRIORITY: Record<CommitState, number> = { error: 0, failure: 1, warning: 2, pending: 3, success: 4 };

export interface MergeReview {
  type: 'approve' | 'reject' | 'request' | 'comment';
  /** Given by an official reviewer (isOfficialReviewer when the review was made). */
  official: boolean;
  dismissed: boolean;
  /** Made on a head commit that is no longer the pull request's head. */
  stale: boolean;
}

export interface MergeFacts {
  doerId: number;
  /** The doer may write code in the base repository. */
  canWriteCode: boolean;
  isSiteAdmin: boolean;
  isRepoAdmin: boolean;
  /** The doer's teams (ids) in the base repository's organisation. */
  teamIds: number[];
  reviews: MergeReview[];
  /** The latest status of each context on the head commit, newest first. */
  statuses: { context: string; state: CommitState }[];
  /** Commits of the base branch the head branch does not have. */
  commitsBehind: number;
  /** Files the pull request changes that match the rule's protected file patterns. */
  changedProtectedFiles: string[];
  /** `force_merge` of the merge request: administrators skip the rule's checks unless it applies to them. */
  forceMerge: boolean;
}

export type MergeVerdict = { allowed: true } | { allowed: false; message: string };

export const USER_NOT_ALLOWED_TO_MERGE = 'User not allowed to merge PR';

/** The reasons Forgejo gives, in the order it checks them. */
export const MERGE_REASONS = {
  statusChecks: 'Not all required status checks successful',
  approvals: 'Does not have enough approvals',
  rejected: 'There are requested changes',
  reviewRequests: 'There are official review requests',
  outdated: 'The head branch is behind the base branch',
  protectedFiles: 'Changed protected files',
} as const;

/** Whether `doer` is on the merge whitelist (or, without one, may write code). */
export function isMergeWhitelisted(rule: ProtectionRule, facts: Pick<MergeFacts, 'doerId' | 'canWriteCode' | 'teamIds'>): boolean {
  if (!rule.enableMergeWhitelist) return facts.canWriteCode;
  return rule.mergeWhitelistUserIds.includes(facts.doerId) || rule.mergeWhitelistTeamIds.some((id) => facts.teamIds.includes(id));
}

/** Whether a review by this user counts as official under `rule` (the approvals whitelist, or write access). */
export function isOfficialReviewer(rule: ProtectionRule, userId: number, canWriteCode: boolean, teamIds: number[]): boolean {
  if (!rule.enableApprovalsWhitelist) return canWriteCode;
  return rule.approvalsWhitelistUserIds.includes(userId) || rule.approvalsWhitelistTeamIds.some((id) => teamIds.includes(id));
}

/** Whether a push that changes the pull request's diff dismisses its approvals. */
export function dismissesStaleApprovals(rule: ProtectionRule | null): boolean {
  return rule?.dismissStaleApprovals ?? false;
}

/**
 * The combined state of the required contexts (globs over context names): the worst state among them, pending
 * when one has no status yet; with no context required or matched, the worst of all statuses ('' when none).
 */
export function requiredContextsState(statuses: MergeFacts['statuses'], requiredContexts: string[]): CommitState | '' {
  let matched = 0;
  let result: CommitState = 'success';
  const worse = (a: CommitState, b: CommitState) => STATE_PRIORITY[a] <= STATE_PRIORITY[b];
  for (const context of requiredContexts) {
    if (globError(context, '') !== null) continue;
    const glob = compileGlob(context, '');
    const found = statuses.find((status) => glob.test(status.context));
    if (!found) {
      if (worse('pending', result)) result = 'pending';
      break;
    }
    matched++;
    if (worse(found.state, result)) result = found.state;
  }
  if (matched === 0 && result === 'success') {
    if (statuses.length === 0) return '';
    let worst = statuses[0].state;
    for (const status of statuses.slice(1)) if (worse(status.state, worst)) worst = status.state;
    return worst;
  }
  return result;
}

/** The first reason the rule blocks the merge, or null. */
export function mergeBlockedBy(rule: ProtectionRule, facts: MergeFacts): string | null {
  if (rule.enableStatusCheck && requiredContextsState(facts.statuses, rule.statusCheckContexts) !== 'success') return MERGE_REASONS.statusChecks;
  if (rule.requiredApprovals > 0) {
    const approvals = facts.reviews.filter(
      (review) => review.type === 'approve' && review.official && !review.dismissed && !(rule.ignoreStaleApprovals && review.stale),
    ).length;
    if (approvals < rule.requiredApprovals) return MERGE_REASONS.approvals;
  }
  if (rule.blockOnRejectedReviews && facts.reviews.some((review) => review.type === 'reject' && review.official && !review.dismissed))
    return MERGE_REASONS.rejected;
  if (rule.blockOnOfficialReviewRequests && facts.reviews.some((review) => review.type === 'request' && review.official)) return MERGE_REASONS.reviewRequests;
  if (rule.blockOnOutdatedBranch && facts.commitsBehind > 0) return MERGE_REASONS.outdated;
  if (rule.protectedFilePatterns.trim() !== '' && facts.changedProtectedFiles.length > 0) return MERGE_REASONS.protectedFiles;
  return null;
}

/**
 * May `facts.doerId` merge now? First the permission (merge whitelist, or write access without a rule), then
 * the rule's checks; `force_merge` lets a site administrator through, and a repository administrator unless the
 * rule applies to administrators. The refusal's `message` is the body of the merge route's 405.
 */
export function canMerge(rule: ProtectionRule | null, facts: MergeFacts): MergeVerdict {
  const allowed = rule ? isMergeWhitelisted(rule, facts) : facts.canWriteCode;
  if (!allowed) return { allowed: false, message: USER_NOT_ALLOWED_TO_MERGE };
  if (!rule) return { allowed: true };
  const reason = mergeBlockedBy(rule, facts);
  if (reason === null) return { allowed: true };
  if (facts.forceMerge && (facts.isSiteAdmin || (!rule.applyToAdmins && facts.isRepoAdmin))) return { allowed: true };
  return { allowed: false, message: `not allowed to merge [reason: ${reason}]` };
}
