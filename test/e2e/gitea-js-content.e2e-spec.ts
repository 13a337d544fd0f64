import { giteaApi } from 'gitea-js';
import { makeRepo, makeUser, TestUser } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * gitea-js (the generated TypeScript client many Forgejo/Gitea scripts use) against the running app over real
 * HTTP: it lists branches, reads a file and commits a change.
 */
describe('gitea-js client', () => {
  let t: TestApp;
  let alice: TestUser;
  let api: ReturnType<typeof giteaApi>;
  let repoName: string;

  beforeAll(async () => {
    t = await startTestApp();
    const base = await t.listen();
    alice = await makeUser(t);
    repoName = (await makeRepo(t, alice, { autoInit: true })).name;
    api = giteaApi(base.replace(/\/$/, ''), { token: alice.token, customFetch: fetch });
  });
  afterAll(() => t.close());

  it('lists branches', async () => {
    const branches = await api.repos.repoListBranches(alice.name, repoName);
    expect(branches.status).toBe(200);
    expect(branches.data.map((branch) => branch.name)).toEqual(['main']);
    expect(branches.data[0].commit?.message).toBe('Initial commit\n');
  });

  it('reads a file', async () => {
    const file = await api.repos.repoGetContents(alice.name, repoName, 'README.md', { ref: 'main' });
    expect(file.status).toBe(200);
    expect(file.data.type).toBe('file');
    expect(Buffer.from(file.data.content ?? '', 'base64').toString()).toContain(repoName);
  });

  it('commits a change (create, then update with the sha it read)', async () => {
    const created = await api.repos.repoCreateFile(alice.name, repoName, 'docs/notes.md', {
      content: Buffer.from('first\n').toString('base64'),
      message: 'Add notes from gitea-js',
    });
    expect(created.status).toBe(201);
    const sha = created.data.content?.sha ?? '';
    const updated = await api.repos.repoUpdateFile(alice.name, repoName, 'docs/notes.md', {
      content: Buffer.from('second\n').toString('base64'),
      sha,
      message: 'Update notes from gitea-js',
    });
    expect(updated.status).toBe(200);
    const dir = repositoryDir(t.dataDir, alice.name, repoName);
    expect(git(dir, 'show', 'main:docs/notes.md')).toBe('second\n');
    expect(git(dir, 'log', '-1', '--format=%s', 'main').trim()).toBe('Update notes from gitea-js');
    // The client reports a stale sha as a failed request with Forgejo's status.
    await expect(api.repos.repoUpdateFile(alice.name, repoName, 'docs/notes.md', { content: 'eA==', sha })).rejects.toMatchObject({ status: 409 });
  });
});
