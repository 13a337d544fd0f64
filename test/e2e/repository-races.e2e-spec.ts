import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitRepositories } from '../../src/git/git-repositories';
import { RepositoryPushes } from '../../src/repos/repository-pushes.service';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { git, regularFileBytes, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { databaseUrl, startTestApp, TestApp } from '../support/test-app';

/**
 * A repository deleted and created again under the same name while the deletion is
 * between its row and its directory must not lose the new repository's directory.
 */
describe('delete and re-create under the same name', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  it('a repository created while the old one is being deleted keeps its directory', async () => {
    const create = () => t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name: 'phoenix', auto_init: true });
    for (let round = 0; round < 12; round++) {
      await create().expect(201);
      // The creation retries until the deletion's row is gone, so it lands as close behind it as it can.
      const deletion = t.http
        .delete(t.api(`/repos/${owner.name}/phoenix`))
        .set(withToken(owner.token))
        .then((response) => response.status);
      let created;
      do created = await create();
      while (created.status === 409);
      expect(await deletion).toBe(204);
      expect(created.status).toBe(201);
      const dir = repositoryDir(t.dataDir, owner.name, 'phoenix');
      expect(fs.existsSync(path.join(dir, 'HEAD'))).toBe(true);
      expect(git(dir, 'rev-parse', 'refs/heads/main')).toMatch(/^[0-9a-f]{40}/);
      await t.http
        .delete(t.api(`/repos/${owner.name}/phoenix`))
        .set(withToken(owner.token))
        .expect(204);
    }
  });
});

/**
 * Concurrent pushes to one repository: each measured the directory while the others' quarantine directories
 * came and went, and stored what it measured whenever it finished, so the last to store could hold a size from
 * before another's objects arrived (or fail on a vanished file, or on another's commit-graph lock).
 */
describe('concurrent pushes to one repository', () => {
  let t: TestApp;
  let owner: TestUser;
  let base: string;
  const client = new GitClient();

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    base = await t.listen();
  });
  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('every push is accepted, the stored size is the size on disk, and git fsck finds nothing wrong', async () => {
    await t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name: 'busy', auto_init: true }).expect(201);
    const url = withCredentials(base, `${owner.name}/busy.git`, owner.name, owner.token);
    const branches = Array.from({ length: 8 }, (_, index) => `b${index}`);
    const copies = await Promise.all(
      branches.map((branch) =>
        client.workingCopy(
          branch,
          Object.fromEntries(Array.from({ length: 3 }, (_, file) => [`${branch}-${file}.txt`, `${branch} ${file} ${'x'.repeat(2000 * (file + 1))}\n`])),
        ),
      ),
    );
    const outcomes = await Promise.all(copies.map((dir, index) => client.run(['push', '--quiet', url, `${branches[index]}:${branches[index]}`], { cwd: dir })));
    expect(outcomes.map((outcome) => [outcome.code, outcome.stderr.includes('internal error')])).toEqual(branches.map(() => [0, false]));
    const dir = repositoryDir(t.dataDir, owner.name, 'busy');
    const [row]: { git_size: number | string }[] = await t.dataSource.query('SELECT git_size FROM repository WHERE lower_name = ?', ['busy']);
    expect(Number(row.git_size)).toBe(regularFileBytes(dir));
    expect(() => git(dir, 'fsck', '--strict', '--no-progress')).not.toThrow();
    for (const branch of branches) expect(git(dir, 'rev-parse', `refs/heads/${branch}`)).toMatch(/^[0-9a-f]{40}/);
  });
});

/**
 * Two instances on one database and DATA_DIR measure a repository's size after their pushes. Should the lease
 * that orders them lapse (a stalled instance), the measurement begun last must still be the one stored.
 */
describe('size measurements of two instances', () => {
  it("a measurement begun before another instance's but written after it does not replace it", async () => {
    const first = await startTestApp();
    const second = await startTestApp({ DATA_DIR: first.dataDir, DATABASE_URL: databaseUrl(first.config) });
    try {
      const owner = await makeUser(first);
      const repo = await makeRepo(first, owner, { autoInit: true });
      const dir = repositoryDir(first.dataDir, owner.name, repo.name);
      // The first instance's walk ends, then stalls before its write until released.
      const firstGit = first.app.get(GitRepositories);
      const walk = firstGit.size.bind(firstGit);
      let walked: () => void = () => undefined;
      const measured = new Promise<void>((resolve) => (walked = resolve));
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      const spy = jest.spyOn(firstGit, 'size').mockImplementation(async (target: string) => {
        const bytes = await walk(target);
        walked();
        await released;
        return bytes;
      });
      const stale = first.app.get(RepositoryPushes).recordRefChanges(repo.id, [], owner.user.id);
      await measured;
      // Its lease lapses meanwhile; the second instance adds to the directory and measures after it.
      await first.dataSource.query("DELETE FROM lease WHERE name LIKE 'repository-refs:%'");
      fs.writeFileSync(path.join(dir, 'description'), 'a description written after the first measurement\n'.repeat(40));
      await second.app.get(RepositoryPushes).recordRefChanges(repo.id, [], owner.user.id);
      release();
      await stale;
      spy.mockRestore();
      const [row] = (await first.dataSource.query('SELECT git_size FROM repository WHERE id = ?', [repo.id])) as { git_size: number | string }[];
      expect(Number(row.git_size)).toBe(regularFileBytes(dir));
    } finally {
      await second.close();
      await first.close();
    }
  });
});
