import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

const GO = 'package main\n\nfunc main() {}\n';
const PYTHON = 'print("hi")\n';

describe('git data routes: git/refs, git/tags, git/trees, git/blobs, and /languages', () => {
  let t: TestApp;
  let client: GitClient;
  let baseUrl: string;
  let owner: TestUser;
  let stranger: TestUser;
  let full: string;
  let api: string;
  let work: string;
  let head: string;
  let tagSha: string;

  const get = (url: string, who?: TestUser) => (who ? t.http.get(t.api(url)).set(withToken(who.token)) : t.http.get(t.api(url)));
  const git = (...args: string[]) => client.ok(args, { cwd: work });

  beforeAll(async () => {
    t = await startTestApp();
    baseUrl = await t.listen();
    client = new GitClient();
    owner = await makeUser(t);
    stranger = await makeUser(t);
    const repo = await makeRepo(t, owner);
    full = repo.full_name;
    api = `http://anvil.test/api/v1/repos/${full}`;
    work = await client.workingCopy('main', { 'main.go': GO, 'README.md': '# readme\n' });
    fs.mkdirSync(path.join(work, 'lib', 'deep'), { recursive: true });
    fs.writeFileSync(path.join(work, 'lib', 'util.py'), PYTHON);
    fs.writeFileSync(path.join(work, 'lib', 'deep', 'more.go'), GO);
    await git('add', '.');
    await git('commit', '--quiet', '-m', 'more files');
    await git('tag', '-a', 'v1.0', '-m', 'release one');
    await git('tag', 'light');
    await git('branch', 'feature/x');
    const remote = withCredentials(baseUrl, `${full}.git`, owner.name, owner.token);
    await git('push', '--quiet', remote, 'main', 'feature/x', '--tags');
    head = (await git('rev-parse', 'HEAD')).trim();
    tagSha = (await git('rev-parse', 'v1.0')).trim();
  });
  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('git/refs', () => {
    it('lists every ref with its object, typed, and filters by prefix', async () => {
      const all = await get(`/repos/${full}/git/refs`).expect(200);
      expect(all.body.map((ref: { ref: string }) => ref.ref)).toEqual(['refs/heads/feature/x', 'refs/heads/main', 'refs/tags/light', 'refs/tags/v1.0']);
      const annotated = all.body.find((ref: { ref: string }) => ref.ref === 'refs/tags/v1.0');
      expect(annotated).toEqual({
        ref: 'refs/tags/v1.0',
        url: `${api}/git/refs/tags/v1.0`,
        object: { type: 'tag', sha: tagSha, url: `${api}/git/tags/${tagSha}` },
      });
      const main = all.body.find((ref: { ref: string }) => ref.ref === 'refs/heads/main');
      expect(main.object).toEqual({ type: 'commit', sha: head, url: `${api}/git/commits/${head}` });
      const heads = await get(`/repos/${full}/git/refs/heads`).expect(200);
      expect(heads.body.map((ref: { ref: string }) => ref.ref)).toEqual(['refs/heads/feature/x', 'refs/heads/main']);
      // A complete name answers the one object, not a list (as Forgejo).
      const one = await get(`/repos/${full}/git/refs/heads/main`).expect(200);
      expect(one.body).toEqual(main);
      const nested = await get(`/repos/${full}/git/refs/heads/feature/x`).expect(200);
      expect(nested.body.ref).toBe('refs/heads/feature/x');
      const partial = await get(`/repos/${full}/git/refs/heads/ma`).expect(200);
      expect(partial.body.map((ref: { ref: string }) => ref.ref)).toEqual(['refs/heads/main']);
      await get(`/repos/${full}/git/refs/heads/nope`).expect(404);
    });

    it('follows the repository read rule', async () => {
      const hidden = await makeRepo(t, owner, { private: true, autoInit: true });
      await get(`/repos/${hidden.full_name}/git/refs`, stranger).expect(404);
      await get(`/repos/${hidden.full_name}/git/refs`, owner).expect(200);
      const empty = await makeRepo(t, owner);
      await get(`/repos/${empty.full_name}/git/refs`, owner).expect(404);
    });
  });

  it('git/tags/{sha} answers the annotated tag object; other ids are 400', async () => {
    const tag = await get(`/repos/${full}/git/tags/${tagSha}`).expect(200);
    expect(tag.body).toMatchObject({
      tag: 'v1.0',
      sha: tagSha,
      url: `${api}/git/tags/${tagSha}`,
      message: 'release one\n',
      tagger: { name: 'Test Author', email: 'author@example.com' },
      object: { type: 'commit', sha: head, url: `${api}/git/commits/${head}` },
      verification: { verified: false },
    });
    expect(Date.parse(tag.body.tagger.date)).toBeGreaterThan(0);
    await get(`/repos/${full}/git/tags/${head}`).expect(400);
    await get(`/repos/${full}/git/tags/${'0'.repeat(40)}`).expect(400);
  });

  it('git/trees/{sha}: one level, or every entry with recursive, paged with truncated and total_count', async () => {
    const top = await get(`/repos/${full}/git/trees/${head}`).expect(200);
    expect(top.body.sha).toBe(head);
    expect(top.body.tree.map((entry: { path: string; type: string }) => `${entry.type} ${entry.path}`)).toEqual(['blob README.md', 'tree lib', 'blob main.go']);
    expect(top.body).toMatchObject({ truncated: false, page: 1, total_count: 3 });
    const goFile = top.body.tree.find((entry: { path: string }) => entry.path === 'main.go');
    expect(goFile).toMatchObject({ mode: '100644', size: GO.length, url: `${api}/git/blobs/${goFile.sha}` });
    const lib = top.body.tree.find((entry: { path: string }) => entry.path === 'lib');
    expect(lib).toMatchObject({ mode: '040000', size: 0, url: `${api}/git/trees/${lib.sha}` });
    const all = await get(`/repos/${full}/git/trees/${head}?recursive=true`).expect(200);
    expect(all.body.tree.map((entry: { path: string }) => entry.path)).toEqual(['README.md', 'lib', 'lib/deep', 'lib/deep/more.go', 'lib/util.py', 'main.go']);
    const page = await get(`/repos/${full}/git/trees/${head}?recursive=1&per_page=2&page=2`).expect(200);
    expect(page.body.tree.map((entry: { path: string }) => entry.path)).toEqual(['lib/deep', 'lib/deep/more.go']);
    expect(page.body).toMatchObject({ truncated: true, page: 2, total_count: 6 });
    const past = await get(`/repos/${full}/git/trees/${head}?per_page=2&page=9`).expect(200);
    expect(past.body.tree).toEqual([]);
    const byBranch = await get(`/repos/${full}/git/trees/main`).expect(200);
    expect(byBranch.body.tree).toHaveLength(3);
    const sub = await get(`/repos/${full}/git/trees/${lib.sha}`).expect(200);
    expect(sub.body.tree.map((entry: { path: string }) => entry.path)).toEqual(['deep', 'util.py']);
    await get(`/repos/${full}/git/trees/${'0'.repeat(40)}`).expect(400);
    await get(`/repos/${full}/git/trees/--output=x`).expect(400);
  });

  it('git/blobs/{sha} answers the content in base64 with its size', async () => {
    const top = await get(`/repos/${full}/git/trees/${head}`).expect(200);
    const goFile = top.body.tree.find((entry: { path: string }) => entry.path === 'main.go');
    const blob = await get(`/repos/${full}/git/blobs/${goFile.sha}`).expect(200);
    expect(blob.body).toEqual({
      content: Buffer.from(GO).toString('base64'),
      encoding: 'base64',
      url: `${api}/git/blobs/${goFile.sha}`,
      sha: goFile.sha,
      size: GO.length,
    });
    await get(`/repos/${full}/git/blobs/${head}`).expect(400);
  });

  it('/languages counts bytes per language at the default branch, stored once per head', async () => {
    const first = await eventually(
      async () => (await get(`/repos/${full}/languages`).expect(200)).body,
      (body) => Object.keys(body).length > 0,
    );
    expect(first).toEqual({ Go: GO.length * 2, Python: PYTHON.length });
    const rows = await t.dataSource.query('SELECT language, commit_id FROM language_stat WHERE repo_id = (SELECT id FROM repository WHERE lower_name = ?)', [
      full.split('/')[1].toLowerCase(),
    ]);
    expect(rows.map((row: { commit_id: string }) => row.commit_id)).toEqual([head, head]);
    expect((await get(`/repos/${full}`).expect(200)).body.language).toBe('Go');
    // The stored figures answer while the head stays: a changed row shows through.
    await t.dataSource.query("UPDATE language_stat SET size = 1 WHERE language = 'Python' AND commit_id = ?", [head]);
    expect((await get(`/repos/${full}/languages`).expect(200)).body.Python).toBe(1);
    // A push moves the head: measured again.
    fs.writeFileSync(path.join(work, 'big.py'), PYTHON.repeat(20));
    await git('add', 'big.py');
    await git('commit', '--quiet', '-m', 'python grows');
    await git('push', '--quiet', withCredentials(baseUrl, `${full}.git`, owner.name, owner.token), 'main');
    // Measured behind the request: until then the last measured head's figures answer.
    const after = await eventually(
      async () => (await get(`/repos/${full}/languages`).expect(200)).body,
      (body) => body.Python === PYTHON.length * 21,
    );
    expect(after).toEqual({ Go: GO.length * 2, Python: PYTHON.length * 21 });
    expect((await get(`/repos/${full}`).expect(200)).body.language).toBe('Python');
    const empty = await makeRepo(t, owner);
    expect((await get(`/repos/${empty.full_name}/languages`, owner).expect(200)).body).toEqual({});
    const hidden = await makeRepo(t, owner, { private: true });
    await get(`/repos/${hidden.full_name}/languages`, stranger).expect(404);
  });

  it('/languages records a tree past the measuring budget as measured with no language, without walking it', async () => {
    const wide = await makeRepo(t, owner);
    const copy = await client.workingCopy('main', { 'one.go': GO });
    const run = (...args: string[]) => client.ok(args, { cwd: copy });
    const mktree = async (lines: string[]) => (await client.ok(['mktree'], { cwd: copy, input: `${lines.join('\n')}\n` })).trim();
    // 500 directories naming one tree of 500 files: 250 500 paths from a few objects.
    const blob = (await client.ok(['hash-object', '-w', 'one.go'], { cwd: copy })).trim();
    const leaf = await mktree(Array.from({ length: 500 }, (_, i) => `100644 blob ${blob}\tf${i}.go`));
    const root = await mktree(Array.from({ length: 500 }, (_, i) => `040000 tree ${leaf}\td${i}`));
    const commit = (await run('commit-tree', root, '-m', 'wide')).trim();
    await run('push', '--quiet', withCredentials(baseUrl, `${wide.full_name}.git`, owner.name, owner.token), `${commit}:refs/heads/main`);
    const rows = await eventually(
      () => t.dataSource.query('SELECT language, size, commit_id FROM language_stat WHERE repo_id = ?', [wide.id]),
      (found: unknown[]) => found.length > 0,
      () => get(`/repos/${wide.full_name}/languages`).expect(200),
    );
    expect(rows).toEqual([{ language: '', size: 0, commit_id: commit }]);
    expect((await get(`/repos/${wide.full_name}/languages`).expect(200)).body).toEqual({});
  });

  it('git/trees pages a recursive listing without walking the tree past the page', async () => {
    const sparse = await makeRepo(t, owner);
    const copy = await client.workingCopy('main', { 'a.txt': 'first\n', 'b.txt': 'second file\n' });
    fs.mkdirSync(path.join(copy, 'z'));
    fs.writeFileSync(path.join(copy, 'z', 'c.txt'), 'third file here\n');
    await client.ok(['add', 'z'], { cwd: copy });
    await client.ok(['commit', '--quiet', '-m', 'z'], { cwd: copy });
    await client.ok(['push', '--quiet', withCredentials(baseUrl, `${sparse.full_name}.git`, owner.name, owner.token), 'main'], { cwd: copy });
    const tip = (await client.ok(['rev-parse', 'HEAD'], { cwd: copy })).trim();
    const listing = await get(`/repos/${sparse.full_name}/git/trees/${tip}?recursive=1`).expect(200);
    expect(listing.body.tree.map((entry: { path: string; size: number }) => [entry.path, entry.size])).toEqual([
      ['a.txt', 6],
      ['b.txt', 12],
      ['z', 0],
      ['z/c.txt', 16],
    ]);
    // The server's copy loses the directory `z` (its tree and blob): a walk of the whole tree now fails, yet the
    // first page is answered, so answering it cannot have walked past it.
    const bare = repositoryDir(t.dataDir, owner.name, sparse.name);
    const objects = path.join(bare, 'objects');
    const root = (await client.ok(['rev-parse', `${tip}^{tree}`], { cwd: copy })).trim();
    const kept = [tip, root, listing.body.tree[0].sha, listing.body.tree[1].sha];
    const before = fs.readdirSync(path.join(objects, 'pack'));
    await client.ok(['--git-dir', bare, 'pack-objects', '-q', path.join(objects, 'pack', 'pack')], { input: `${kept.join('\n')}\n` });
    for (const name of before) fs.rmSync(path.join(objects, 'pack', name));
    for (const name of fs.readdirSync(objects)) if (/^[0-9a-f]{2}$/.test(name)) fs.rmSync(path.join(objects, name), { recursive: true });
    expect((await client.run(['--git-dir', bare, 'ls-tree', '-r', '-t', tip])).code).not.toBe(0);
    const first = await get(`/repos/${sparse.full_name}/git/trees/${tip}?recursive=1&per_page=2`).expect(200);
    expect(first.body.tree.map((entry: { path: string; size: number }) => [entry.path, entry.size])).toEqual([
      ['a.txt', 6],
      ['b.txt', 12],
    ]);
    expect(first.body.truncated).toBe(true);
  });
});

/** Polls `read` until `done` holds of its answer (nudging with `poke` between reads); the last answer. */
async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, poke?: () => Promise<unknown>): Promise<T> {
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    await poke?.();
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
