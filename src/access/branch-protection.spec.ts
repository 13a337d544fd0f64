import type { BranchProtectionEntity } from './branch-protection.entity';
import { BranchChange, BranchUpdateFacts, governingRule, judgeBranchChange, orderRules, Pusher, ruleMatches } from './branch-protection';

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

const writer = (userId = 7, teams: number[] = []): Pusher => ({
  kind: 'user',
  userId,
  lowerName: `u${userId}`,
  canWriteCode: async () => true,
  memberOf: async (ids) => ids.some((id) => teams.includes(id)),
});

function facts(options: { deletion?: boolean; force?: boolean; paths?: string[] } = {}): BranchUpdateFacts & { asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    deletion: options.deletion ?? false,
    isForcePush: async () => {
      asked.push('force');
      return options.force ?? false;
    },
    firstChangedPath: async (test) => {
      asked.push('diff');
      return (options.paths ?? []).find(test) ?? null;
    },
  };
}

const change = (f: BranchUpdateFacts, pusher: Pusher = writer(), extra: Partial<BranchChange> = {}): BranchChange => ({
  door: 'git',
  branch: 'main',
  pusher,
  facts: f,
  ...extra,
});

describe('branch protection rules', () => {
  it('orders plain names before globs, then older first; plain names match without case', () => {
    const ordered = orderRules([
      rule({ id: 1, ruleName: '**', createdUnix: 1 }),
      rule({ id: 2, ruleName: 'release/*', createdUnix: 2 }),
      rule({ id: 3, ruleName: 'Main', createdUnix: 3 }),
      rule({ id: 4, ruleName: 'dev', createdUnix: 3 }),
    ]);
    expect(ordered.map((r) => r.ruleName)).toEqual(['Main', 'dev', '**', 'release/*']);
    expect(governingRule(ordered, 'main')?.ruleName).toBe('Main');
    expect(governingRule(ordered, 'release/1')?.ruleName).toBe('**');
    expect(ruleMatches('release/*', 'release/1/x')).toBe(false);
    expect(governingRule([], 'main')).toBeNull();
  });

  it('refuses in order: deletion, force push, protected file, push permission', async () => {
    const open = rule({ canPush: true, protectedFilePatterns: 'ci/**' });
    expect(await judgeBranchChange(open, change(facts({ deletion: true, force: true })))).toBe('branch main is protected from deletion');
    expect(await judgeBranchChange(open, change(facts({ force: true, paths: ['ci/a'] })))).toBe('branch main is protected from force push');
    expect(await judgeBranchChange(open, change(facts({ paths: ['src/x', 'CI/A.yml'] })))).toBe('branch main is protected from changing file ci/a.yml');
    expect(await judgeBranchChange(open, change(facts({ paths: ['src/x'] })))).toBeNull();
    expect(await judgeBranchChange(rule(), change(facts({ paths: ['src/x'] })))).toBe('Not allowed to push to protected branch main');
    expect(await judgeBranchChange(null, change(facts({ deletion: true })))).toBeNull();
  });

  it("leaves a pull request's merge to the merge rules once deletion and force push are ruled out", async () => {
    const merge = (f: BranchUpdateFacts) => judgeBranchChange(rule({ protectedFilePatterns: 'a' }), change(f, writer(), { pullRequestMerge: true }));
    expect(await merge(facts({ paths: ['a'] }))).toBeNull();
    expect(await merge(facts({ force: true }))).toBe('branch main is protected from force push');
  });

  it('asks git only what the rule needs', async () => {
    const f = facts({ paths: ['a'] });
    expect(await judgeBranchChange(rule({ canPush: true }), change(f))).toBeNull();
    expect(f.asked).toEqual(['force']);
    const deletion = facts({ deletion: true });
    expect(await judgeBranchChange(rule({ canPush: true, protectedFilePatterns: 'a' }), change(deletion))).not.toBeNull();
    expect(deletion.asked).toEqual([]);
  });

  it('lets unprotected-only changes through when pushing is not allowed', async () => {
    const r = rule({ unprotectedFilePatterns: 'docs/**;*.md' });
    expect(await judgeBranchChange(r, change(facts({ paths: ['docs/a.txt', 'README.md'] })))).toBeNull();
    expect(await judgeBranchChange(r, change(facts({ paths: ['docs/a.txt', 'src/x.ts'] })))).toBe('Not allowed to push to protected branch main');
  });

  it('reads whitelists of users, teams and deploy keys; nobody is exempt', async () => {
    const r = rule({ canPush: true, enableWhitelist: true, whitelistUserIds: [5], whitelistTeamIds: [9] });
    expect(await judgeBranchChange(r, change(facts(), writer(5)))).toBeNull();
    expect(await judgeBranchChange(r, change(facts(), writer(6, [9])))).toBeNull();
    expect(await judgeBranchChange(r, change(facts(), writer(6, [8])))).toBe('Not allowed to push to protected branch main');
    expect(await judgeBranchChange(r, change(facts(), { kind: 'deploy-key' }))).toBe('Not allowed to push to protected branch main');
    expect(await judgeBranchChange({ ...r, whitelistDeployKeys: true }, change(facts(), { kind: 'deploy-key' }))).toBeNull();
    expect(await judgeBranchChange(rule({ canPush: true }), change(facts(), { kind: 'deploy-key' }))).toBeNull();
    const noWrite: Pusher = { kind: 'user', userId: 1, lowerName: 'x', canWriteCode: async () => false, memberOf: async () => false };
    expect(await judgeBranchChange(rule({ canPush: true }), change(facts(), noWrite))).toBe('Not allowed to push to protected branch main');
  });

  it("words the other doors' refusals as Forgejo does", async () => {
    expect(await judgeBranchChange(rule({ canPush: true }), change(facts({ deletion: true }), writer(), { door: 'branch-api' }))).toBe('branch protected');
    const r = rule({ canPush: true, enableWhitelist: true, whitelistUserIds: [5], protectedFilePatterns: 'secret/*', unprotectedFilePatterns: 'docs/*' });
    const contents = (pusher: Pusher, paths: string[]) => judgeBranchChange(r, change(facts(), pusher, { door: 'contents', paths }));
    expect(await contents(writer(6), ['src/a'])).toBe('user cannot commit to repo [user: u6]');
    expect(await contents(writer(6), ['docs/a'])).toBeNull();
    expect(await contents(writer(5), ['secret/a'])).toBe('path is protected and can not be changed [path: secret/a]');
    expect(await contents(writer(5), ['src/a'])).toBeNull();
  });
});
