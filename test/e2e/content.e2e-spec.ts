import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

const UNICODE_DIR = 'dir with space';
const UNICODE_FILE = 'ünïcødé file.txt';
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8ffff3f0005fe02fea7d6a9a40000000049454e44ae426082',
  'hex',
);

/** Repository content over the API: branches, tags, commits, contents, raw, archives. */
describe('repository content (Forgejo API v1)', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let bob: TestUser;
  /** alice's public repository, with history pushed by the git client. */
  let full: string;
  let dir: string;
  let headSha: string;
  let firstSha: string;

  const get = (apiPath: string, user: TestUser | null = alice) => {
    const request = t.http.get(t.api(apiPath));
    return user ? request.set(withToken(user.token)) : request;
  };
  const send = (method: 'post' | 'put' | 'delete', apiPath: string, body: object, user: TestUser = alice) =>
    t.http[method](t.api(apiPath)).set(withToken(user.token)).send(body);
  const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
  const encodePath = (p: string) => p.split('/').map(encodeURIComponent).join('/');
  const binary = (request: import('supertest').Test) =>
    request.buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks)));
    });

  async function pushed(files: Record<string, string | Buffer>, options: { name?: string } = {}): Promise<{ full: string; work: string }> {
    const name = options.name ?? uniqueName('repo');
    await makeRepo(t, alice, { name });
    const repoPath = `${alice.name}/${name}`;
    const work = await client.workingCopy('main', {});
    for (const [file, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(work, file)), { recursive: true });
      fs.writeFileSync(path.join(work, file), content);
    }
    await client.ok(['add', '-A'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'files'], { cwd: work });
    await client.ok(['push', '--quiet', withCredentials(base, `${repoPath}.git`, alice.name, alice.token), 'main'], { cwd: work });
    return { full: repoPath, work };
  }

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    alice = await makeUser(t);
    bob = await makeUser(t);
    const name = uniqueName('repo');
    await makeRepo(t, alice, { name });
    full = `${alice.name}/${name}`;
    dir = repositoryDir(t.dataDir, alice.name, name);
    const work = await client.workingCopy('main', { 'README.md': '# hello\n' });
    fs.mkdirSync(path.join(work, UNICODE_DIR));
    fs.writeFileSync(path.join(work, UNICODE_DIR, UNICODE_FILE), 'unicode content\n');
    fs.writeFileSync(path.join(work, 'image.png'), PNG);
    fs.symlinkSync('README.md', path.join(work, 'link'));
    fs.writeFileSync(path.join(work, '.gitmodules'), '[submodule "sub"]\n\tpath = sub\n\turl = https://example.com/sub.git\n');
    await client.ok(['add', '-A'], { cwd: work });
    await client.ok(['update-index', '--add', '--cacheinfo', `160000,${'1'.repeat(40)},sub`], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'second commit\n\nwith a body'], { cwd: work });
    fs.mkdirSync(path.join(work, 'big'));
    for (let index = 0; index < 120; index++) fs.writeFileSync(path.join(work, 'big', `f${String(index).padStart(3, '0')}.txt`), `${index}\n`);
    // Not `add -A`: the submodule has no directory in the working copy, and would be staged as deleted.
    await client.ok(['add', 'big'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'many files'], { cwd: work });
    await client.ok(['tag', 'v1.0'], { cwd: work });
    await client.ok(['tag', '-a', 'v2.0', '-m', 'annotated release'], { cwd: work });
    await client.ok(['branch', 'feature/x', 'HEAD~1'], { cwd: work });
    await client.ok(['push', '--quiet', withCredentials(base, `${full}.git`, alice.name, alice.token), 'main', 'feature/x', '--tags'], { cwd: work });
    headSha = git(dir, 'rev-parse', 'main').trim();
    firstSha = git(dir, 'rev-list', '--max-parents=0', 'main').trim();
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('branches', () => {
    it('lists branches with their head commits, paged with X-Total-Count', async () => {
      const all = await get(`/repos/${full}/branches`).expect(200);
      expect(all.headers['x-total-count']).toBe('2');
      expect(all.body.map((branch: { name: string }) => branch.name)).toEqual(['feature/x', 'main']);
      const main = all.body[1];
      expect(main).toMatchObject({ name: 'main', protected: false, user_can_push: true, effective_branch_protection_name: '' });
      expect(main.commit).toMatchObject({ id: headSha, message: 'many files\n', author: { name: 'Test Author', email: 'author@example.com' } });
      expect(main.commit.url).toBe(`http://anvil.test/${full}/commit/${headSha}`);
      const page = await get(`/repos/${full}/branches?limit=1&page=2`).expect(200);
      expect(page.body.map((branch: { name: string }) => branch.name)).toEqual(['main']);
      expect(page.headers.link).toContain('rel="first"');
      expect((await get(`/repos/${full}/branches`, bob).expect(200)).body[0].user_can_push).toBe(false);
    });

    it('gets a branch whose name has a slash, and 404 for an unknown one', async () => {
      const branch = await get(`/repos/${full}/branches/feature/x`).expect(200);
      expect(branch.body.commit.id).toBe(git(dir, 'rev-parse', 'feature/x').trim());
      await get(`/repos/${full}/branches/nope`).expect(404);
    });

    it('creates a branch from a ref (201), refuses an existing one (409), an unknown start (404) and non-writers (403)', async () => {
      const created = await send('post', `/repos/${full}/branches`, { new_branch_name: 'from-tag', old_ref_name: 'v1.0' }).expect(201);
      expect(created.body).toMatchObject({ name: 'from-tag', commit: { id: headSha } });
      expect(git(dir, 'rev-parse', 'refs/heads/from-tag').trim()).toBe(headSha);
      await send('post', `/repos/${full}/branches`, { new_branch_name: 'from-tag' }).expect(409);
      await send('post', `/repos/${full}/branches`, { new_branch_name: 'other', old_ref_name: 'missing' }).expect(404);
      await send('post', `/repos/${full}/branches`, { new_branch_name: 'bad..name' }).expect(422);
      await send('post', `/repos/${full}/branches`, { new_branch_name: 'by-bob' }, bob).expect(403);
      await t.http
        .post(t.api(`/repos/${full}/branches`))
        .send({ new_branch_name: 'anon' })
        .expect(401);
    });

    it('deletes a branch (204) but never the default branch (403)', async () => {
      await send('post', `/repos/${full}/branches`, { new_branch_name: 'doomed' }).expect(201);
      await send('delete', `/repos/${full}/branches/doomed`, {}).expect(204);
      expect(git(dir, 'for-each-ref', 'refs/heads/doomed').trim()).toBe('');
      await send('delete', `/repos/${full}/branches/doomed`, {}).expect(404);
      await send('delete', `/repos/${full}/branches/main`, {}).expect(403);
      expect(git(dir, 'rev-parse', 'refs/heads/main').trim()).toBe(headSha);
    });

    it('answers [] for an empty repository', async () => {
      const repo = await makeRepo(t, alice);
      const list = await get(`/repos/${repo.full_name}/branches`).expect(200);
      expect(list.body).toEqual([]);
      expect(list.headers['x-total-count']).toBe('0');
    });
  });

  describe('tags', () => {
    it('lists lightweight and annotated tags with commit and archive URLs', async () => {
      const list = await get(`/repos/${full}/tags`).expect(200);
      const byName = Object.fromEntries(list.body.map((tag: { name: string }) => [tag.name, tag]));
      expect(byName['v1.0']).toMatchObject({ id: headSha, message: 'many files\n', commit: { sha: headSha } });
      expect(byName['v1.0'].zipball_url).toBe(`http://anvil.test/${full}/archive/v1.0.zip`);
      expect(byName['v2.0'].id).toBe(git(dir, 'rev-parse', 'refs/tags/v2.0').trim());
      expect(byName['v2.0'].id).not.toBe(headSha);
      expect(byName['v2.0'].message).toBe('annotated release\n');
      expect(byName['v2.0'].commit.sha).toBe(headSha);
    });

    it('creates lightweight and annotated tags (tagged by the caller), refuses duplicates (409) and unknown targets (404)', async () => {
      const light = await send('post', `/repos/${full}/tags`, { tag_name: 'light', target: firstSha }).expect(201);
      expect(light.body).toMatchObject({ name: 'light', id: firstSha, commit: { sha: firstSha } });
      const annotated = await send('post', `/repos/${full}/tags`, { tag_name: 'rel/1', message: 'release one' }).expect(201);
      expect(annotated.body.commit.sha).toBe(headSha);
      const object = git(dir, 'cat-file', '-p', 'refs/tags/rel/1');
      expect(object).toContain(`tag rel/1\ntagger ${alice.name} <`);
      expect(object).toContain('release one');
      expect((await get(`/repos/${full}/tags/rel/1`).expect(200)).body.message).toBe('release one\n');
      await send('post', `/repos/${full}/tags`, { tag_name: 'light' }).expect(409);
      await send('post', `/repos/${full}/tags`, { tag_name: 'x', target: 'nowhere' }).expect(404);
      await send('post', `/repos/${full}/tags`, { tag_name: 'bad tag' }).expect(422);
      await send('delete', `/repos/${full}/tags/light`, {}).expect(204);
      await get(`/repos/${full}/tags/light`).expect(404);
      await send('delete', `/repos/${full}/tags/light`, {}).expect(404);
    });
  });

  describe('commits', () => {
    it('lists history newest first with files, stats and an exact X-Total-Count', async () => {
      const list = await get(`/repos/${full}/commits?limit=2`).expect(200);
      expect(list.headers['x-total-count']).toBe('3');
      expect(list.headers['x-hasmore']).toBe('true');
      expect(list.body).toHaveLength(2);
      const [head, second] = list.body;
      expect(head).toMatchObject({ sha: headSha, html_url: `http://anvil.test/${full}/commit/${headSha}` });
      expect(head.commit).toMatchObject({ message: 'many files\n', author: { name: 'Test Author', email: 'author@example.com' } });
      expect(head.files).toHaveLength(120);
      expect(head.files[0]).toEqual({ filename: 'big/f000.txt', status: 'added' });
      expect(head.stats).toEqual({ total: 120, additions: 120, deletions: 0 });
      expect(head.parents[0].sha).toBe(second.sha);
      expect(second.files.map((file: { filename: string }) => file.filename)).toContain(`${UNICODE_DIR}/${UNICODE_FILE}`);
      const last = await get(`/repos/${full}/commits?limit=2&page=2`).expect(200);
      expect(last.body.map((commit: { sha: string }) => commit.sha)).toEqual([firstSha]);
    });

    it('filters by path and start ref, and leaves out files and stats on request', async () => {
      const byPath = await get(`/repos/${full}/commits?path=${encodeURIComponent(UNICODE_DIR)}&stat=false&files=false`).expect(200);
      expect(byPath.headers['x-total-count']).toBe('1');
      expect(byPath.body[0].files).toBeUndefined();
      expect(byPath.body[0].stats).toBeUndefined();
      const fromBranch = await get(`/repos/${full}/commits?sha=feature/x`).expect(200);
      expect(fromBranch.headers['x-total-count']).toBe('2');
      await get(`/repos/${full}/commits?sha=unknown`).expect(404);
    });

    it('gets one commit (git/commits/{sha}); 404 for unknown, 409 for an empty repository', async () => {
      const one = await get(`/repos/${full}/git/commits/${firstSha}`).expect(200);
      expect(one.body).toMatchObject({ sha: firstSha, parents: [], files: [{ filename: 'README.md', status: 'added' }] });
      await get(`/repos/${full}/git/commits/${'0'.repeat(40)}`).expect(404);
      const empty = await makeRepo(t, alice);
      await get(`/repos/${empty.full_name}/commits`).expect(409);
    });

    it('answers a commit as its diff or patch (git/commits/{sha}.diff|.patch); a dotted name is still its commit', async () => {
      const diff = await get(`/repos/${full}/git/commits/${headSha}.diff`).expect(200);
      expect(diff.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(diff.text).toBe(git(dir, 'diff', '-M', '--no-color', `${headSha}~1`, headSha));
      expect(diff.text).toContain('+++ b/big/f000.txt');
      const patch = await get(`/repos/${full}/git/commits/main.patch`, null).expect(200);
      expect(patch.text.startsWith(`From ${headSha} `)).toBe(true);
      expect(patch.text).toContain('Subject: [PATCH] many files');
      expect(patch.text.match(/^From [0-9a-f]{40} /gm)).toHaveLength(1);
      // Without format-patch's signature (`-- ` and git's version).
      expect(patch.text).not.toMatch(/^-- $/m);
      // A root commit is `git show` of it (Forgejo's GetRawDiff): its header and message, then its diff.
      const root = await get(`/repos/${full}/git/commits/${firstSha}.diff`).expect(200);
      expect(root.text.startsWith(`commit ${firstSha}\n`)).toBe(true);
      expect(root.text).toContain('+# hello');
      expect((await get(`/repos/${full}/git/commits/${firstSha}.patch`).expect(200)).text).toContain('+# hello');
      // `v1.0` reaches the diff route's pattern (`v1` and `0`) and is handed on as the name of a commit.
      expect((await get(`/repos/${full}/git/commits/v1.0`).expect(200)).body).toMatchObject({ sha: headSha });
      await get(`/repos/${full}/git/commits/${'0'.repeat(40)}.diff`).expect(404);
      await get(`/repos/${full}/git/commits/${headSha}.txt`).expect(404);
      const secret = await makeRepo(t, alice, { private: true, autoInit: true });
      await get(`/repos/${secret.full_name}/git/commits/main.diff`, null).expect(404);
      expect((await get(`/repos/${secret.full_name}/git/commits/main.patch`).expect(200)).text).toContain('Subject: [PATCH]');
    });
  });

  describe('contents', () => {
    it('lists the root with files, directories, symlinks and submodules as Forgejo reports them', async () => {
      const root = await get(`/repos/${full}/contents`).expect(200);
      const byName = Object.fromEntries(root.body.map((entry: { name: string }) => [entry.name, entry]));
      expect(byName['README.md']).toMatchObject({ type: 'file', size: 8, content: null, encoding: null, last_commit_sha: firstSha });
      expect(byName[UNICODE_DIR]).toMatchObject({ type: 'dir', path: UNICODE_DIR, size: 0, download_url: null });
      expect(byName.link).toMatchObject({ type: 'symlink', target: 'README.md' });
      expect(byName.sub).toMatchObject({ type: 'submodule', sha: '1'.repeat(40), submodule_git_url: 'https://example.com/sub.git', download_url: null });
      expect(byName.big.last_commit_sha).toBe(headSha);
    });

    it('reads a file with unicode and spaces in its path, base64 with urls', async () => {
      const filePath = `${UNICODE_DIR}/${UNICODE_FILE}`;
      const file = await get(`/repos/${full}/contents/${encodePath(filePath)}?ref=main`).expect(200);
      expect(file.body).toMatchObject({ name: UNICODE_FILE, path: filePath, type: 'file', encoding: 'base64', size: 16 });
      expect(Buffer.from(file.body.content, 'base64').toString()).toBe('unicode content\n');
      expect(file.body.sha).toBe(git(dir, 'rev-parse', `main:${filePath}`).trim());
      expect(file.body.download_url).toBe(`http://anvil.test/${full}/raw/branch/main/${encodePath(filePath)}`);
      expect(file.body._links.self).toBe(file.body.url);
      const binaryFile = await get(`/repos/${full}/contents/image.png`).expect(200);
      expect(Buffer.from(binaryFile.body.content, 'base64').equals(PNG)).toBe(true);
      const old = await get(`/repos/${full}/contents/README.md?ref=${firstSha}`).expect(200);
      expect(old.body.last_commit_sha).toBe(firstSha);
      await get(`/repos/${full}/contents/missing.txt`).expect(404);
      await get(`/repos/${full}/contents/README.md?ref=nope`).expect(404);
    });

    it('refuses .. and absolute paths with 422', async () => {
      await get(`/repos/${full}/contents/a/%2E%2E/README.md`).expect(422);
      await get(`/repos/${full}/contents/%2FREADME.md`).expect(422);
      await send('post', `/repos/${full}/contents/..%2Fescape.txt`, { content: b64('x') }).expect(422);
      await send('post', `/repos/${full}/contents`, { files: [{ operation: 'create', path: '/etc/passwd', content: b64('x') }] }).expect(422);
    });

    it('pages a large directory when asked, and answers it whole otherwise', async () => {
      const whole = await get(`/repos/${full}/contents/big`).expect(200);
      expect(whole.body).toHaveLength(120);
      expect(whole.body[0]).toMatchObject({ name: 'f000.txt', path: 'big/f000.txt', last_commit_sha: headSha });
      const page = await get(`/repos/${full}/contents/big?page=3&limit=50`).expect(200);
      expect(page.headers['x-total-count']).toBe('120');
      expect(page.body.map((entry: { name: string }) => entry.name)).toEqual(
        Array.from({ length: 20 }, (_, index) => `f${String(100 + index).padStart(3, '0')}.txt`),
      );
    });

    it('cuts an unpaged listing of a huge directory at 1 000 entries, with X-Total-Count; pages reach the rest', async () => {
      const files: Record<string, string> = {};
      for (let index = 0; index < 1_005; index++) files[`huge/h${String(index).padStart(4, '0')}.txt`] = `${index}\n`;
      const { full: hugeRepo } = await pushed(files);
      const whole = await get(`/repos/${hugeRepo}/contents/huge`).expect(200);
      expect(whole.body).toHaveLength(1_000);
      expect(whole.headers['x-total-count']).toBe('1005');
      expect(whole.body[999].name).toBe('h0999.txt');
      const last = await get(`/repos/${hugeRepo}/contents/huge?page=21&limit=50`).expect(200);
      expect(last.body.map((entry: { name: string }) => entry.name)).toEqual(['h1000.txt', 'h1001.txt', 'h1002.txt', 'h1003.txt', 'h1004.txt']);
    });

    it('answers last_commit_sha as git log -1 -- <path> does, across a merge too', async () => {
      const { full: merged, work } = await pushed({ 'kept.txt': 'kept\n', 'side.txt': 'base\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, merged.split('/')[1]);
      await client.ok(['checkout', '--quiet', '-b', 'side'], { cwd: work });
      fs.writeFileSync(path.join(work, 'side.txt'), 'changed on the side\n');
      await client.ok(['commit', '--quiet', '-am', 'side change'], { cwd: work });
      await client.ok(['checkout', '--quiet', 'main'], { cwd: work });
      fs.writeFileSync(path.join(work, 'main.txt'), 'main\n');
      await client.ok(['add', 'main.txt'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'main change'], { cwd: work });
      await client.ok(['merge', '--quiet', '--no-ff', '-m', 'merge side', 'side'], { cwd: work });
      fs.writeFileSync(path.join(work, 'top.txt'), 'top\n');
      await client.ok(['add', 'top.txt'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'after the merge'], { cwd: work });
      await client.ok(['push', '--quiet', withCredentials(base, `${merged}.git`, alice.name, alice.token), 'main'], { cwd: work });
      const expected = (file: string) => git(repoDir, 'log', '-1', '--format=%H', 'main', '--', file).trim();
      // Twice: the first answers start the history walk, the second come from what it learnt.
      for (let round = 0; round < 2; round++) {
        for (const file of ['top.txt', 'side.txt', 'main.txt', 'kept.txt']) {
          const answer = await get(`/repos/${merged}/contents/${file}`).expect(200);
          expect({ file, sha: answer.body.last_commit_sha }).toEqual({ file, sha: expected(file) });
        }
      }
    });

    it('leaves files above MAX_DISPLAY_FILE_SIZE out of the answer, with the download URL', async () => {
      const small = await startTestApp({ MAX_DISPLAY_FILE_SIZE: '10' });
      try {
        const owner = await makeUser(small);
        const repo = await makeRepo(small, owner, { autoInit: true });
        const readme = await small.http
          .get(small.api(`/repos/${repo.full_name}/contents/README.md`))
          .set(withToken(owner.token))
          .expect(200);
        expect(readme.body.size).toBeGreaterThan(10);
        expect(readme.body.content).toBeNull();
        expect(readme.body.download_url).toContain('/raw/branch/main/README.md');
      } finally {
        await small.close();
      }
    });

    it('answers an empty listing for an empty repository, as Forgejo does', async () => {
      const empty = await makeRepo(t, alice);
      const listing = await get(`/repos/${empty.full_name}/contents`).expect(200);
      expect(listing.body).toEqual([]);
    });

    it('hides private repositories (404) from others', async () => {
      const secret = await makeRepo(t, alice, { private: true, autoInit: true });
      await get(`/repos/${secret.full_name}/contents/README.md`, bob).expect(404);
      await get(`/repos/${secret.full_name}/raw/README.md`, null).expect(404);
      await get(`/repos/${secret.full_name}/contents/README.md`).expect(200);
    });

    it("reads and writes an organisation's private repository for its owners only (their organisations are looked up)", async () => {
      const org = await makeOrg(t, bob.user);
      const secret = await makeRepo(t, bob, { private: true, autoInit: true, org: org.name });
      await get(`/repos/${secret.full_name}/contents/README.md`, bob).expect(200);
      await get(`/repos/${secret.full_name}/raw/README.md`, bob).expect(200);
      const branches = await get(`/repos/${secret.full_name}/branches`, bob).expect(200);
      expect(branches.body[0].user_can_push).toBe(true);
      await send('post', `/repos/${secret.full_name}/contents/org.txt`, { content: b64('org') }, bob).expect(201);
      await get(`/repos/${secret.full_name}/contents/org.txt`, alice).expect(404);
      await send('post', `/repos/${secret.full_name}/contents/other.txt`, { content: b64('x') }, alice).expect(404);
    });
  });

  describe('raw, media and archives', () => {
    it('streams raw files with their content type; the ref may lead the path', async () => {
      const text = await binary(get(`/repos/${full}/raw/README.md`)).expect(200);
      expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect((text.body as Buffer).toString()).toBe('# hello\n');
      const image = await binary(get(`/repos/${full}/media/image.png`)).expect(200);
      expect(image.headers['content-type']).toBe('image/png');
      expect((image.body as Buffer).equals(PNG)).toBe(true);
      const onBranch = await binary(get(`/repos/${full}/raw/feature/x/${encodePath(`${UNICODE_DIR}/${UNICODE_FILE}`)}`)).expect(200);
      expect((onBranch.body as Buffer).toString()).toBe('unicode content\n');
      const bySha = await binary(get(`/repos/${full}/raw/${firstSha}/README.md`)).expect(200);
      expect((bySha.body as Buffer).toString()).toBe('# hello\n');
      await get(`/repos/${full}/raw/big`).expect(404);
      await get(`/repos/${full}/raw/README.md?ref=nope`).expect(404);
      const etag = text.headers.etag;
      await get(`/repos/${full}/raw/README.md`).set('If-None-Match', etag).expect(304);
    });

    it('streams zip and tar.gz archives from git archive', async () => {
      const zip = await binary(get(`/repos/${full}/archive/main.zip`)).expect(200);
      expect(zip.headers['content-type']).toBe('application/zip');
      expect((zip.body as Buffer).subarray(0, 2).toString()).toBe('PK');
      const name = full.split('/')[1];
      expect(zip.headers['content-disposition']).toContain(`${name}-main.zip`);
      const tar = await binary(get(`/repos/${full}/archive/v1.0.tar.gz`)).expect(200);
      expect(tar.headers['content-type']).toBe('application/gzip');
      expect((tar.body as Buffer)[0]).toBe(0x1f);
      expect((tar.body as Buffer)[1]).toBe(0x8b);
      await get(`/repos/${full}/archive/nope.zip`).expect(404);
      await get(`/repos/${full}/archive/main.rar`).expect(404);
    });
  });

  describe('file writes', () => {
    it('creates (201), updates (200) and deletes (200) files with commits on the branch', async () => {
      const repo = await pushed({ 'a.txt': 'a\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, repo.full.split('/')[1]);
      const created = await send('post', `/repos/${repo.full}/contents/new%20dir/n%C3%A9w.txt`, { content: b64('new\n'), message: 'add it' }).expect(201);
      expect(created.body.content).toMatchObject({ path: 'new dir/néw.txt', type: 'file', encoding: 'base64' });
      expect(created.body.commit).toMatchObject({ message: 'add it\n', author: { name: alice.name } });
      expect(created.body.verification.verified).toBe(false);
      expect(git(repoDir, 'show', 'main:new dir/néw.txt')).toBe('new\n');
      await send('post', `/repos/${repo.full}/contents/a.txt`, { content: b64('again') }).expect(422);
      await send('post', `/repos/${repo.full}/contents/a.txt/child`, { content: b64('x') }).expect(422);
      const sha = git(repoDir, 'rev-parse', 'main:a.txt').trim();
      const updated = await send('put', `/repos/${repo.full}/contents/a.txt`, {
        content: b64('b\n'),
        sha,
        author: { name: 'Someone', email: 'someone@example.com' },
        dates: { author: '2020-01-02T03:04:05Z' },
      }).expect(200);
      expect(updated.body.commit.author).toMatchObject({ name: 'Someone', email: 'someone@example.com', date: '2020-01-02T03:04:05Z' });
      expect(updated.body.commit.committer.name).toBe('Someone');
      expect(updated.body.commit.message).toBe('Update a.txt\n');
      expect(git(repoDir, 'show', 'main:a.txt')).toBe('b\n');
      const newSha = updated.body.content.sha;
      const removed = await send('delete', `/repos/${repo.full}/contents/a.txt`, { sha: newSha }).expect(200);
      expect(removed.body.content).toBeNull();
      expect(git(repoDir, 'ls-tree', '--name-only', 'main').trim().split('\n')).toEqual(['new dir']);
      await send('delete', `/repos/${repo.full}/contents/a.txt`, { sha: newSha }).expect(404);
      await send('put', `/repos/${repo.full}/contents/x.txt`, { content: b64('x'), sha: newSha }, bob).expect(403);
      const stored = (await get(`/repos/${repo.full}`).expect(200)).body;
      expect(stored.size).toBeGreaterThanOrEqual(0);
    });

    it('refuses a stale sha with 409 and leaves the branch as it was', async () => {
      const repo = await pushed({ 'a.txt': 'a\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, repo.full.split('/')[1]);
      const before = git(repoDir, 'rev-parse', 'main').trim();
      await send('put', `/repos/${repo.full}/contents/a.txt`, { content: b64('c'), sha: '0123456789012345678901234567890123456789' }).expect(409);
      expect(git(repoDir, 'rev-parse', 'main').trim()).toBe(before);
    });

    it('commits to a new branch, and writes several files in one commit (POST /contents)', async () => {
      const repo = await pushed({ 'a.txt': 'a\n', 'b.txt': 'b\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, repo.full.split('/')[1]);
      const main = git(repoDir, 'rev-parse', 'main').trim();
      const shaB = git(repoDir, 'rev-parse', 'main:b.txt').trim();
      const shaA = git(repoDir, 'rev-parse', 'main:a.txt').trim();
      const changed = await send('post', `/repos/${repo.full}/contents`, {
        new_branch: 'topic',
        files: [
          { operation: 'create', path: 'c.txt', content: b64('c\n') },
          { operation: 'update', path: 'b.txt', content: b64('B\n'), sha: shaB },
          { operation: 'delete', path: 'a.txt', sha: shaA },
        ],
      }).expect(201);
      expect(changed.body.files).toHaveLength(3);
      expect(changed.body.files[2]).toBeNull();
      expect(changed.body.commit.parents[0].sha).toBe(main);
      expect(changed.body.commit.message).toBe('Add c.txt\nUpdate b.txt\nDelete a.txt\n');
      expect(git(repoDir, 'rev-parse', 'main').trim()).toBe(main);
      expect(git(repoDir, 'ls-tree', '--name-only', 'topic').trim().split('\n')).toEqual(['b.txt', 'c.txt']);
      await send('post', `/repos/${repo.full}/contents/d.txt`, { content: b64('d'), new_branch: 'topic' }).expect(422);
      await send('post', `/repos/${repo.full}/contents/d.txt`, { content: b64('d'), branch: 'nope' }).expect(404);
    });

    it('lets exactly one of two concurrent writers win; the other gets 409', async () => {
      const repo = await pushed({ 'a.txt': 'a\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, repo.full.split('/')[1]);
      const before = git(repoDir, 'rev-parse', 'main').trim();
      const statuses = (
        await Promise.all([
          send('post', `/repos/${repo.full}/contents/one.txt`, { content: b64('1') }),
          send('post', `/repos/${repo.full}/contents/two.txt`, { content: b64('2') }),
        ])
      ).map((response) => response.status);
      expect(statuses.sort()).toEqual([201, 409]);
      expect(git(repoDir, 'rev-list', '--count', 'main').trim()).toBe('2');
      expect(git(repoDir, 'rev-parse', 'main~1').trim()).toBe(before);
    });

    it('loses the race against a push made between its read and its ref update (compare-and-swap)', async () => {
      const repo = await pushed({ 'a.txt': 'a\n' });
      const repoDir = repositoryDir(t.dataDir, alice.name, repo.full.split('/')[1]);
      const sha = git(repoDir, 'rev-parse', 'main:a.txt').trim();
      // A push lands first; the API write still names the old blob of a.txt, which the push did not change.
      await client.ok(['commit', '--quiet', '--allow-empty', '-m', 'pushed'], { cwd: repo.work });
      await client.ok(['push', '--quiet', withCredentials(base, `${repo.full}.git`, alice.name, alice.token), 'main'], { cwd: repo.work });
      const pushedHead = git(repoDir, 'rev-parse', 'main').trim();
      const written = await send('put', `/repos/${repo.full}/contents/a.txt`, { content: b64('z'), sha }).expect(200);
      expect(written.body.commit.parents[0].sha).toBe(pushedHead);
    });

    it('creates the first commit of an empty repository and records it (empty false)', async () => {
      const repo = await makeRepo(t, alice);
      await send('post', `/repos/${repo.full_name}/contents/first.txt`, { content: b64('first') }).expect(201);
      const after = (await get(`/repos/${repo.full_name}`).expect(200)).body;
      expect(after.empty).toBe(false);
      expect(after.default_branch).toBe('main');
      expect(after.size).toBeGreaterThan(0);
    });

    it('refuses writes over quota with 413 and leaves the ref unchanged', async () => {
      const admin = await makeUser(t, { admin: true });
      const owner = await makeUser(t);
      const repo = await makeRepo(t, owner, { autoInit: true });
      const repoDir = repositoryDir(t.dataDir, owner.name, repo.name);
      const before = git(repoDir, 'rev-parse', 'main').trim();
      const group = uniqueName('grp');
      await t.http
        .post(t.api('/admin/quota/groups'))
        .set(withToken(admin.token))
        .send({ name: group, rules: [{ name: group, limit: 0, subjects: ['size:repos:all'] }] })
        .expect(201);
      await t.http
        .put(t.api(`/admin/quota/groups/${group}/users/${owner.name}`))
        .set(withToken(admin.token))
        .expect(204);
      const refused = await send('post', `/repos/${repo.full_name}/contents/x.txt`, { content: b64('x') }, owner).expect(413);
      expect(refused.body.message).toBe('quota exceeded');
      await send('post', `/repos/${repo.full_name}/branches`, { new_branch_name: 'b' }, owner).expect(413);
      expect(git(repoDir, 'rev-parse', 'main').trim()).toBe(before);
      expect(git(repoDir, 'for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
    });
  });
});
