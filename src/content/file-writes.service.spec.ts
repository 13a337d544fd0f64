import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { BranchProtectionsModule } from '../branch-protections/branch-protections.module';
import { BranchProtectionsService } from '../branch-protections/branch-protections.service';
import { ConflictError, InvalidInputError, NotFoundError, QuotaExceededError } from '../common/errors';
import { GitReads } from '../git/git-reads';
import type { TreeEntry } from '../git/git-trees';
import { GitWrites, RefChangedError } from '../git/git-writes';
import { QuotaAdminService } from '../quota/quota-admin.service';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { UserEntity } from '../users/user.entity';
import { UsersService } from '../users/users.service';
import type { ChangeFilesOption, CreateFileOption, DeleteFileOption, UpdateFileOption } from './content.options';
import { ContentModule } from './content.module';
import { FileWritesService } from './file-writes.service';

// The rules of the contents API's writes (docs/content.md) that refuse before anything is written, on the real
// stores, quota and branch protection (SQLite :memory:). Git is a fake of its readers (the branch head, the
// entries of the parent tree) and of the two writes, which record what they were asked and may lose the race
// for the branch: no git process runs. The commits themselves are proved by the e2e tier (contents*.e2e-spec).

const HEAD = '1'.repeat(40);
const NEW_COMMIT = '2'.repeat(40);
const README_SHA = '3'.repeat(40);
const content = Buffer.from('hello').toString('base64');

/** What the fake git holds: branches and the parent tree's entries by path; what it was asked to write. */
const git = {
  branches: new Map<string, string>(),
  entries: new Map<string, TreeEntry>(),
  commits: 0,
  refUpdates: [] as string[],
  loseRace: false,
};
const blob = (path: string, oid: string): TreeEntry => ({ mode: '100644', type: 'blob', oid, size: 5, path });
const tree = (path: string): TreeEntry => ({ mode: '040000', type: 'tree', oid: '4'.repeat(40), size: 0, path });

describe('FileWritesService (SQLite :memory:, git faked)', () => {
  let harness: ServiceHarness;
  let files: FileWritesService;
  let owner: UserEntity;
  let target: RepositoryTarget;

  // The service's calls in one place: the way a body reaches it is the route's business.
  const write = {
    create: (path: string, body: Partial<CreateFileOption>) => files.create(target, path, { content, ...body } as CreateFileOption),
    update: (path: string, body: Partial<UpdateFileOption>) => files.update(target, path, { content, ...body } as UpdateFileOption),
    delete: (path: string, body: Partial<DeleteFileOption>) => files.delete(target, path, body as DeleteFileOption),
    change: (body: Partial<ChangeFilesOption>) => files.change(target, body as ChangeFilesOption),
  };
  const refused = async (work: Promise<unknown>): Promise<unknown> =>
    work.then(
      () => 'written',
      (error: unknown) => error,
    );

  beforeAll(async () => {
    harness = await serviceHarness({
      imports: [ContentModule, BranchProtectionsModule],
      override: (builder) =>
        builder
          .overrideProvider(GitReads)
          .useValue({
            refs: { resolveCommit: async (_dir: string, revision: string) => git.branches.get(revision.replace('refs/heads/', '')) ?? null },
            trees: {
              entries: async (_dir: string, _commit: string, paths: string[]) =>
                new Map(paths.filter((path) => git.entries.has(path)).map((path) => [path, git.entries.get(path)!])),
            },
          })
          .overrideProvider(GitWrites)
          .useValue({
            commit: async () => {
              git.commits += 1;
              return NEW_COMMIT;
            },
            updateRef: async (_dir: string, ref: string) => {
              if (git.loseRace) throw new RefChangedError(ref);
              git.refUpdates.push(ref);
            },
          }),
    });
    files = harness.get(FileWritesService);
    owner = await harness.get(UsersService).create({ username: 'wren', email: 'wren@example.com', password: 'a-long-password' });
    const viewer = new AuthContext(owner, 'password', null);
    const created = await harness.get(RepositoryCreation).createForCaller(viewer, { name: 'notes' });
    // A repository with one commit on main, as far as the service can tell.
    await harness.dataSource.query('UPDATE repository SET is_empty = 0 WHERE id = ?', [created.id]);
    const repo = (await harness.get(RepositoryDirectory).byId(created.id))!;
    target = await harness.get(RepositoryPolicy).open(viewer, repo, owner);
  });
  afterAll(() => harness?.close());
  beforeEach(() => {
    git.branches = new Map([['main', HEAD]]);
    git.entries = new Map([
      ['README.md', blob('README.md', README_SHA)],
      ['docs', tree('docs')],
    ]);
    Object.assign(git, { commits: 0, refUpdates: [], loseRace: false });
  });

  it('refuses a path that leaves the tree or names .git (422), before reading git', async () => {
    for (const path of ['/etc/passwd', 'a/../b', './a', 'a//b', '.git/config', 'sub/.GIT/hooks', 'tab\there', '']) {
      expect([path, await refused(write.create(path, {}))]).toEqual([path, expect.any(InvalidInputError)]);
    }
    const change = await refused(
      write.change({
        files: [
          { operation: 'create', path: 'ok.txt', content },
          { operation: 'create', path: '../escape', content },
        ],
      }),
    );
    expect(change).toBeInstanceOf(InvalidInputError);
    expect(git.commits).toBe(0);
  });

  it('refuses the same path twice, an unknown operation, a missing sha and content that is not base64 (422)', async () => {
    const twice = await refused(
      write.change({
        files: [
          { operation: 'create', path: 'a.txt', content },
          { operation: 'delete', path: 'a.txt', sha: README_SHA },
        ],
      }),
    );
    expect(twice).toEqual(new InvalidInputError('the same path is changed twice [path: a.txt]'));
    expect(await refused(write.change({ files: [{ operation: 'rename', path: 'a.txt' }] }))).toEqual(new InvalidInputError('[Files][0].Operation: In'));
    expect(await refused(write.change({ files: [] }))).toEqual(new InvalidInputError('[Files]: Required'));
    expect(await refused(write.update('README.md', {}))).toEqual(new InvalidInputError('[SHA]: Required'));
    expect(await refused(write.create('b.txt', { content: 'not base64!' }))).toEqual(new InvalidInputError('invalid base64 content [path: b.txt]'));
    expect(git.commits).toBe(0);
  });

  it('answers a stale sha with 409 and a missing file with 404, writing nothing', async () => {
    const stale = await refused(write.update('README.md', { sha: 'f'.repeat(40) }));
    expect(stale).toEqual(new ConflictError(`sha does not match [given: ${'f'.repeat(40)}, expected: ${README_SHA}]`));
    expect(await refused(write.delete('missing.md', { sha: README_SHA }))).toBeInstanceOf(NotFoundError);
    // A directory is not a file to update.
    expect(await refused(write.update('docs', { sha: '4'.repeat(40) }))).toBeInstanceOf(NotFoundError);
    expect(git.commits).toBe(0);
  });

  it('refuses creating over a file, or under a file as if it were a directory (422)', async () => {
    expect(await refused(write.create('README.md', {}))).toEqual(new InvalidInputError('repository file already exists [path: README.md]'));
    expect(await refused(write.create('README.md/inner.txt', {}))).toEqual(
      new InvalidInputError("a file exists where you're trying to create a subdirectory [path: README.md]"),
    );
    // Moving a file onto an existing one is creating over it.
    git.entries.set('other.md', blob('other.md', '5'.repeat(40)));
    expect(await refused(write.update('other.md', { sha: README_SHA, from_path: 'README.md' }))).toBeInstanceOf(InvalidInputError);
    expect(git.commits).toBe(0);
  });

  it('refuses an unknown or invalid branch, and a new branch that exists', async () => {
    expect(await refused(write.create('a.txt', { branch: 'nope' }))).toEqual(new NotFoundError('branch does not exist [name: nope]'));
    expect(await refused(write.create('a.txt', { branch: 'bad..name' }))).toEqual(new InvalidInputError('[BranchName]: GitRefName'));
    expect(await refused(write.create('a.txt', { new_branch: 'has space' }))).toEqual(new InvalidInputError('[BranchName]: GitRefName'));
    git.branches.set('taken', HEAD);
    expect(await refused(write.create('a.txt', { new_branch: 'taken' }))).toEqual(new InvalidInputError('branch already exists [name: taken]'));
  });

  it('answers 409 when another writer moved the branch between the read and the update', async () => {
    git.loseRace = true;
    const lost = await refused(write.create('race.txt', {}));
    expect(lost).toEqual(new ConflictError('branch main was changed by another writer; read it again and retry'));
    expect([git.commits, git.refUpdates]).toEqual([1, []]);
  });

  it('refuses a write to a protected branch by its paths, and one over quota (413), before any commit', async () => {
    await harness
      .get(BranchProtectionsService)
      .create(target, { rule_name: 'main', enable_push: true, protected_file_patterns: 'ci/**', unprotected_file_patterns: '' });
    expect(await refused(write.create('ci/deploy.yml', {}))).toEqual(
      expect.objectContaining({ message: 'path is protected and can not be changed [path: ci/deploy.yml]' }),
    );
    // The same file on a branch no rule governs.
    git.branches.set('feature', HEAD);
    git.loseRace = true; // stop right after the checks: the rules let it through to the ref update
    expect(await refused(write.create('ci/deploy.yml', { branch: 'feature' }))).toBeInstanceOf(ConflictError);
    git.loseRace = false;
    expect(git.commits).toBe(1);

    const admin = harness.get(QuotaAdminService);
    await admin.createGroup('full', [{ name: 'none', limit: 0, subjects: ['size:repos:all'] }]);
    await admin.addUserToGroup('full', 'wren');
    expect(await refused(write.create('docs/new.md', { branch: 'feature' }))).toBeInstanceOf(QuotaExceededError);
    expect(git.commits).toBe(1);
  });
});
