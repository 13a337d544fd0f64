import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { RepositoryPolicy } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { BranchProtectionsModule } from '../branch-protections/branch-protections.module';
import { BranchProtectionsService } from '../branch-protections/branch-protections.service';
import { GitChanges } from '../git/git-changes';
import { GitTreeBudget } from '../git/git-tree-budget';
import { PushRefused, RefUpdate } from '../git/push-hooks';
import { QuotaAdminService } from '../quota/quota-admin.service';
import type { UserEntity } from '../users/user.entity';
import { UsersService } from '../users/users.service';
import { RepositoryCreation } from './repository-creation.service';
import { RepositoryDirectory } from './repository-directory';
import type { RepositoryEntity } from './repository.entity';
import { RepositoryPushes } from './repository-pushes.service';

// The rules of pre-receive (docs/git-transports.md, "Pushes") on the real stores, quota and branch protection
// (SQLite :memory:). What git would say of an update (force push, changed paths, tree sizes) comes from fakes of
// the git readers, set per test: the transports and real git objects are the e2e tier's.

const ZERO = '0'.repeat(40);
const A = 'a'.repeat(40);
const B = 'b'.repeat(40);
const update = (ref: string, oldId: string, newId: string): RefUpdate => ({ ref, oldId, newId });

/** What the fake git readers answer for the next push. */
const git = { forcePush: false, changedPaths: [] as string[], treeOver: null as string | null, readings: 0 };

describe('RepositoryPushes.preReceive (SQLite :memory:)', () => {
  let harness: ServiceHarness;
  let pushes: RepositoryPushes;
  let owner: UserEntity;
  let counter = 0;

  async function repository(): Promise<RepositoryEntity> {
    counter += 1;
    const created = await harness
      .get(RepositoryCreation)
      .createForCaller(new AuthContext(owner, 'password', null), { name: `repo${counter}`, auto_init: false });
    return (await harness.get(RepositoryDirectory).byId(created.id))!;
  }
  const push = (repo: RepositoryEntity, ...updates: RefUpdate[]) => pushes.preReceive({ repositoryId: repo.id, pusherId: owner.id }, updates);
  const refusal = async (work: Promise<void>): Promise<string | null> =>
    work.then(
      () => null,
      (error: unknown) => {
        if (error instanceof PushRefused) return error.message;
        throw error;
      },
    );
  async function protect(repo: RepositoryEntity, option: Record<string, unknown>): Promise<void> {
    const viewer = new AuthContext(owner, 'password', null);
    const target = await harness.get(RepositoryPolicy).open(viewer, repo, owner);
    await harness.get(BranchProtectionsService).create(target, option);
  }

  beforeAll(async () => {
    harness = await serviceHarness({
      imports: [BranchProtectionsModule],
      override: (builder) =>
        builder
          .overrideProvider(GitChanges)
          .useValue({
            reading: (_dir: string, _oldId: string, newId: string) => ({
              deletion: /^0+$/.test(newId),
              isForcePush: async () => {
                git.readings += 1;
                return git.forcePush;
              },
              firstChangedPath: async (test: (path: string) => boolean) => {
                git.readings += 1;
                return git.changedPaths.find(test) ?? null;
              },
            }),
          })
          .overrideProvider(GitTreeBudget)
          .useValue({ limit: 1000, firstOverPushed: async () => git.treeOver }),
    });
    pushes = harness.get(RepositoryPushes);
    owner = await harness.get(UsersService).create({ username: 'pat', email: 'pat@example.com', password: 'a-long-password' });
  });
  afterAll(() => harness?.close());
  beforeEach(() => Object.assign(git, { forcePush: false, changedPaths: [], treeOver: null, readings: 0 }));

  it('refuses deleting the default branch, refs/for/ and refs/pull/, and lets other branches and tags go', async () => {
    const repo = await repository();
    expect(await refusal(push(repo, update(`refs/heads/${repo.defaultBranch}`, A, ZERO)))).toBe(
      `branch ${repo.defaultBranch} is the default branch and cannot be deleted`,
    );
    expect(await refusal(push(repo, update('refs/for/main', ZERO, A)))).toBe('refs/for/ (AGit pull requests) is not supported');
    expect(await refusal(push(repo, update('refs/pull/1/head', ZERO, A)))).toBe('refs/pull/ is reserved for pull requests and cannot be pushed');
    // One refused update refuses the whole push.
    expect(await refusal(push(repo, update('refs/heads/feature', ZERO, A), update('refs/pull/2/head', ZERO, B)))).toMatch(/^refs\/pull\//);
    expect(
      await refusal(push(repo, update('refs/heads/feature', A, ZERO), update('refs/tags/v1', ZERO, A), update(`refs/heads/${repo.defaultBranch}`, A, B))),
    ).toBeNull();
  });

  it('refuses any write of an owner over quota, and still lets it delete', async () => {
    const repo = await repository();
    const admin = harness.get(QuotaAdminService);
    await admin.createGroup('none-left', [{ name: 'zero', limit: 0, subjects: ['size:repos:all'] }]);
    await admin.addUserToGroup('none-left', 'pat');
    try {
      expect(await refusal(push(repo, update('refs/heads/feature', ZERO, A)))).toBe('Quota exceeded');
      expect(await refusal(push(repo, update('refs/heads/feature', A, ZERO), update('refs/tags/old', A, ZERO)))).toBeNull();
      // A push that found nothing left when it started is refused even if room appears meanwhile.
      const context = { repositoryId: repo.id, pusherId: owner.id };
      expect(await pushes.allowance(context)).toBeNull();
      await admin.removeUserFromGroup('none-left', 'pat');
      expect(await refusal(pushes.preReceive(context, [update('refs/heads/feature', ZERO, A)]))).toBe('Quota exceeded');
      expect(await refusal(push(repo, update('refs/heads/feature', ZERO, A)))).toBeNull();
    } finally {
      await admin.removeUserFromGroup('none-left', 'pat').catch(() => undefined);
    }
  });

  it('caps the pack of a push at what the owner has left, and refuses nothing under it', async () => {
    const repo = await repository();
    const admin = harness.get(QuotaAdminService);
    await admin.createGroup('some-left', [{ name: 'ten-mib', limit: 10 * 1024 * 1024, subjects: ['size:repos:all'] }]);
    await admin.addUserToGroup('some-left', 'pat');
    try {
      const context = { repositoryId: repo.id, pusherId: owner.id };
      const allowance = await pushes.allowance(context);
      expect(allowance?.maxInputBytes).toBeGreaterThan(0);
      expect(allowance?.maxInputBytes).toBeLessThanOrEqual(10 * 1024 * 1024);
      // What this push holds counts as used for the next one of the same owner.
      const second = await pushes.allowance({ repositoryId: repo.id, pusherId: owner.id });
      expect(second).toBeNull();
      expect(await refusal(pushes.preReceive(context, [update('refs/heads/feature', ZERO, A)]))).toBeNull();
      await allowance?.release();
    } finally {
      await admin.removeUserFromGroup('some-left', 'pat');
    }
  });

  it('refuses a push to a protected branch without push enabled, and reads no git for an unprotected one', async () => {
    const repo = await repository();
    await protect(repo, { rule_name: 'release/*' });
    expect(await refusal(push(repo, update('refs/heads/feature', A, B)))).toBeNull();
    expect(git.readings).toBe(0);
    expect(await refusal(push(repo, update('refs/heads/release/1.0', A, B)))).toBe('Not allowed to push to protected branch release/1.0');
    expect(await refusal(push(repo, update('refs/heads/release/1.0', A, ZERO)))).toBe('branch release/1.0 is protected from deletion');
    expect(await refusal(push(repo, update('refs/tags/release/1.0', ZERO, A)))).toBeNull();
  });

  it('with push enabled, still refuses a force push and a change of a protected file', async () => {
    const repo = await repository();
    await protect(repo, { rule_name: 'main', enable_push: true, protected_file_patterns: 'secrets/*' });
    git.changedPaths = ['docs/readme.md'];
    expect(await refusal(push(repo, update('refs/heads/main', A, B)))).toBeNull();
    git.forcePush = true;
    expect(await refusal(push(repo, update('refs/heads/main', A, B)))).toBe('branch main is protected from force push');
    git.forcePush = false;
    git.changedPaths = ['docs/readme.md', 'secrets/token'];
    expect(await refusal(push(repo, update('refs/heads/main', A, B)))).toBe('branch main is protected from changing file secrets/token');
    // As in Forgejo, `*` stops at a dot as at a slash: secrets/key.pem is not under `secrets/*`.
    git.changedPaths = ['secrets/key.pem'];
    expect(await refusal(push(repo, update('refs/heads/main', A, B)))).toBeNull();
  });

  it('refuses, last, a push that brings a tree over the entry budget', async () => {
    const repo = await repository();
    git.treeOver = 'c'.repeat(40);
    expect(await refusal(push(repo, update('refs/heads/feature', ZERO, A)))).toBe(
      `tree ${'c'.repeat(40)} has more than 1000 files and directories: refusing the push (tree too large)`,
    );
    // A refusal of an earlier rule wins.
    expect(await refusal(push(repo, update('refs/for/main', ZERO, A)))).toMatch(/^refs\/for\//);
    // Deletions bring no tree.
    expect(await refusal(push(repo, update('refs/heads/feature', A, ZERO)))).toBeNull();
  });
});
