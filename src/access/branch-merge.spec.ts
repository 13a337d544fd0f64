import { canMerge, isOfficialReviewer, MergeFacts, requiredContextsState } from './branch-merge';
import type { BranchProtectionEntity } from './branch-protection.entity';

function rule(overrides: Partial<BranchProtectionEntity> = {}): BranchProtectionEntity {
  return {
    id: 1,
    repoId: 1,
    ruleName: 'main',
    canPush: false,
    enableWhitelist: false,
    whitelistUserIds: [],
    whitelistTeamIds: [],
    whitelistDeployKeys: false,
    enableMergeWhitelist: false,
    mergeWhitelistUserIds: [],
    mergeWhitelistTeamIds: [],
    enableStatusCheck: false,
    statusCheckContexts: [],
    enableApprovalsWhitelist: false,
    approvalsWhitelistUserIds: [],
    approvalsWhitelistTeamIds: [],
    requiredApprovals: 0,
    blockOnRejectedReviews: false,
    blockOnOfficialReviewRequests: false,
    blockOnOutdatedBranch: false,
    dismissStaleApprovals: false,
    ignoreStaleApprovals: false,
    requireSignedCommits: false,
    protectedFilePatterns: '',
    unprotectedFilePatterns: '',
    applyToAdmins: false,
    createdUnix: 100,
    updatedUnix: 100,
    ...overrides,
  };
}

const facts = (overrides: Partial<MergeFacts> = {}): MergeFacts => ({
  doerId: 7,
  canWriteCode: true,
  isSiteAdmin: false,
  isRepoAdmin: false,
  teamIds: [],
  reviews: [],
  statuses: [],
  commitsBehind: 0,
  changedProtectedFiles: [],
  forceMerge: false,
  ...overrides,
});

const approve = { type: 'approve' as const, official: true, dismissed: false, stale: false };

describe('canMerge', () => {
  it('needs write access without a rule, the merge whitelist with one', () => {
    expect(canMerge(null, facts())).toEqual({ allowed: true });
    expect(canMerge(null, facts({ canWriteCode: false }))).toEqual({ allowed: false, message: 'User not allowed to merge PR' });
    const listed = rule({ enableMergeWhitelist: true, mergeWhitelistUserIds: [3], mergeWhitelistTeamIds: [9] });
    expect(canMerge(listed, facts())).toEqual({ allowed: false, message: 'User not allowed to merge PR' });
    expect(canMerge(listed, facts({ doerId: 3 }))).toEqual({ allowed: true });
    expect(canMerge(listed, facts({ teamIds: [9] }))).toEqual({ allowed: true });
  });

  it("gives Forgejo's reasons in its order", () => {
    const strict = rule({
      enableStatusCheck: true,
      statusCheckContexts: ['ci/*'],
      requiredApprovals: 2,
      blockOnRejectedReviews: true,
      blockOnOfficialReviewRequests: true,
      blockOnOutdatedBranch: true,
      protectedFilePatterns: 'x/**',
    });
    const reason = (f: Partial<MergeFacts>) => canMerge(strict, facts(f));
    const green = [{ context: 'ci/build', state: 'success' as const }];
    expect(reason({})).toEqual({ allowed: false, message: 'not allowed to merge [reason: Not all required status checks successful]' });
    expect(reason({ statuses: green })).toEqual({ allowed: false, message: 'not allowed to merge [reason: Does not have enough approvals]' });
    const approved = [approve, approve, { ...approve, dismissed: true }];
    expect(reason({ statuses: green, reviews: [...approved, { type: 'reject', official: true, dismissed: false, stale: false }] })).toEqual({
      allowed: false,
      message: 'not allowed to merge [reason: There are requested changes]',
    });
    expect(reason({ statuses: green, reviews: [...approved, { type: 'request', official: true, dismissed: false, stale: false }] })).toEqual({
      allowed: false,
      message: 'not allowed to merge [reason: There are official review requests]',
    });
    expect(reason({ statuses: green, reviews: approved, commitsBehind: 1 })).toEqual({
      allowed: false,
      message: 'not allowed to merge [reason: The head branch is behind the base branch]',
    });
    expect(reason({ statuses: green, reviews: approved, changedProtectedFiles: ['x/a'] })).toEqual({
      allowed: false,
      message: 'not allowed to merge [reason: Changed protected files]',
    });
    expect(reason({ statuses: green, reviews: approved })).toEqual({ allowed: true });
  });

  it('counts official, undismissed approvals; stale ones only when not ignored', () => {
    const r = rule({ requiredApprovals: 1, ignoreStaleApprovals: true });
    expect(canMerge(r, facts({ reviews: [{ ...approve, stale: true }] })).allowed).toBe(false);
    expect(canMerge({ ...r, ignoreStaleApprovals: false }, facts({ reviews: [{ ...approve, stale: true }] })).allowed).toBe(true);
    expect(canMerge(r, facts({ reviews: [{ ...approve, official: false }] })).allowed).toBe(false);
  });

  it('lets administrators force a merge unless the rule applies to them', () => {
    const r = rule({ requiredApprovals: 1 });
    expect(canMerge(r, facts({ forceMerge: true, isRepoAdmin: true })).allowed).toBe(true);
    expect(canMerge({ ...r, applyToAdmins: true }, facts({ forceMerge: true, isRepoAdmin: true })).allowed).toBe(false);
    expect(canMerge({ ...r, applyToAdmins: true }, facts({ forceMerge: true, isSiteAdmin: true })).allowed).toBe(true);
    expect(canMerge(r, facts({ isRepoAdmin: true })).allowed).toBe(false);
  });

  it('combines the latest status of required contexts, globs included', () => {
    expect(
      requiredContextsState(
        [
          { context: 'ci/a', state: 'success' },
          { context: 'ci/b', state: 'failure' },
        ],
        ['ci/a'],
      ),
    ).toBe('success');
    expect(requiredContextsState([{ context: 'ci/a', state: 'success' }], ['ci/a', 'lint'])).toBe('pending');
    expect(
      requiredContextsState(
        [
          { context: 'ci/a', state: 'success' },
          { context: 'ci/b', state: 'error' },
        ],
        ['ci/*'],
      ),
    ).toBe('success');
    expect(requiredContextsState([{ context: 'x', state: 'warning' }], [])).toBe('warning');
    expect(requiredContextsState([], [])).toBe('');
  });

  it('tells official reviewers by the approvals whitelist or write access', () => {
    expect(isOfficialReviewer(rule(), 1, true, [])).toBe(true);
    const listed = rule({ enableApprovalsWhitelist: true, approvalsWhitelistUserIds: [1], approvalsWhitelistTeamIds: [4] });
    expect(isOfficialReviewer(listed, 2, true, [])).toBe(false);
    expect(isOfficialReviewer(listed, 2, false, [4])).toBe(true);
  });
});
