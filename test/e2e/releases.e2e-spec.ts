import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, regularFileBytes, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

/** Every file under DATA_DIR/attachments (and the upload area), to prove that nothing was kept. */
function storedFiles(dataDir: string): string[] {
  const found: string[] = [];
  for (const area of ['attachments', path.join('tmp', 'uploads')]) {
    const root = path.join(dataDir, area);
    if (!fs.existsSync(root)) continue;
    for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) if (entry.isFile()) found.push(path.join(entry.parentPath, entry.name));
  }
  return found;
}

describe('releases and release attachments', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ ATTACHMENT_MAX_SIZE: '6MiB' });
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const releases = (owner: string, repo: string) => t.api(`/repos/${owner}/${repo}/releases`);
  const rows = async (sql: string) => Number((await t.dataSource.query(sql))[0].n);

  async function repoWithRelease(options: { private?: boolean; draft?: boolean } = {}) {
    const repo = await makeRepo(t, alice, { autoInit: true, private: options.private });
    const tag = uniqueName('v');
    const created = await t.http
      .post(releases(alice.name, repo.name))
      .set(withToken(alice.token))
      .send({ tag_name: tag, name: 'First', body: 'notes', draft: options.draft ?? false })
      .expect(201);
    return { repo, tag, release: created.body };
  }

  const uploadRaw = (repo: string, releaseId: number, name: string, content: Buffer, user = alice) =>
    t.http
      .post(`${releases(alice.name, repo)}/${releaseId}/assets?name=${encodeURIComponent(name)}`)
      .set(withToken(user.token))
      .set('Content-Type', 'application/octet-stream')
      .send(content);

  it('creates a release with the Forgejo fields, and its tag at the default branch in git', async () => {
    const { repo, tag, release } = await repoWithRelease();
    expect(release).toMatchObject({
      tag_name: tag,
      target_commitish: 'main',
      name: 'First',
      body: 'notes',
      draft: false,
      prerelease: false,
      hide_archive_links: false,
      url: `http://anvil.test/api/v1/repos/${alice.name}/${repo.name}/releases/${release.id}`,
      html_url: `http://anvil.test/${alice.name}/${repo.name}/releases/tag/${tag}`,
      tarball_url: `http://anvil.test/${alice.name}/${repo.name}/archive/${tag}.tar.gz`,
      zipball_url: `http://anvil.test/${alice.name}/${repo.name}/archive/${tag}.zip`,
      upload_url: `http://anvil.test/api/v1/repos/${alice.name}/${repo.name}/releases/${release.id}/assets`,
      assets: [],
      archive_download_count: { tar_gz: 0, zip: 0 },
    });
    expect(release.author.login).toBe(alice.name);
    const dir = repositoryDir(t.dataDir, alice.name, repo.name);
    expect(git(dir, 'rev-parse', `refs/tags/${tag}`).trim()).toBe(git(dir, 'rev-parse', 'refs/heads/main').trim());
    await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: tag }).expect(409);
  });

  it("counts the tag a release creates in the repository's size (no drift of size and quota)", async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    const dir = repositoryDir(t.dataDir, alice.name, repo.name);
    const stored = async () => Number((await t.dataSource.query('SELECT git_size AS n FROM repository WHERE id = ?', [repo.id]))[0].n);
    const before = await stored();
    expect(before).toBe(regularFileBytes(dir));
    for (const tag of [uniqueName('v'), uniqueName('v')]) {
      await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: tag }).expect(201);
      expect(await stored()).toBe(regularFileBytes(dir));
    }
    expect(await stored()).toBeGreaterThan(before);
  });

  it('refuses an empty repository (422), an unknown target (404), a bad tag (422) and non-writers (403/401)', async () => {
    const empty = await makeRepo(t, alice);
    await t.http.post(releases(alice.name, empty.name)).set(withToken(alice.token)).send({ tag_name: 'v1' }).expect(422);
    const repo = await makeRepo(t, alice, { autoInit: true });
    await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: 'v1', target_commitish: 'nope' }).expect(404);
    await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: 'bad..tag' }).expect(422);
    await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({}).expect(422);
    await t.http.post(releases(alice.name, repo.name)).set(withToken(bob.token)).send({ tag_name: 'v1' }).expect(403);
    await t.http.post(releases(alice.name, repo.name)).send({ tag_name: 'v1' }).expect(401);
    expect(await rows(`SELECT COUNT(*) AS n FROM \`release\` WHERE repo_id = ${repo.id}`)).toBe(0);
  });

  it('lists newest first with paging, hides drafts from readers, and answers latest and by tag', async () => {
    const repo = await makeRepo(t, alice, { autoInit: true });
    for (const [tag, extra] of [
      ['v1', {}],
      ['v2', { prerelease: true }],
      ['v3', { draft: true }],
    ] as const) {
      await t.http
        .post(releases(alice.name, repo.name))
        .set(withToken(alice.token))
        .send({ tag_name: tag, ...extra })
        .expect(201);
    }
    const mine = await t.http.get(releases(alice.name, repo.name)).set(withToken(alice.token)).expect(200);
    expect(mine.body.map((r: { tag_name: string }) => r.tag_name).sort()).toEqual(['v1', 'v2', 'v3']);
    expect(mine.headers['x-total-count']).toBe('3');
    const theirs = await t.http.get(releases(alice.name, repo.name)).expect(200);
    expect(theirs.body.map((r: { tag_name: string }) => r.tag_name).sort()).toEqual(['v1', 'v2']);
    const paged = await t.http
      .get(`${releases(alice.name, repo.name)}?limit=1&page=2`)
      .set(withToken(alice.token))
      .expect(200);
    expect(paged.body).toHaveLength(1);
    expect((await t.http.get(`${releases(alice.name, repo.name)}/latest`).expect(200)).body.tag_name).toBe('v1');
    expect((await t.http.get(`${releases(alice.name, repo.name)}/tags/v2`).expect(200)).body.prerelease).toBe(true);
    await t.http.get(`${releases(alice.name, repo.name)}/tags/v3`).expect(404);
    await t.http
      .get(`${releases(alice.name, repo.name)}/tags/v3`)
      .set(withToken(alice.token))
      .expect(200);
    // A draft gets its tag when published.
    const draft = (await t.http.get(`${releases(alice.name, repo.name)}/tags/v3`).set(withToken(alice.token))).body;
    const dir = repositoryDir(t.dataDir, alice.name, repo.name);
    expect(() => git(dir, 'rev-parse', '--verify', '--quiet', 'refs/tags/v3')).toThrow();
    const published = await t.http
      .patch(`${releases(alice.name, repo.name)}/${draft.id}`)
      .set(withToken(alice.token))
      .send({ draft: false, name: 'Three' })
      .expect(200);
    expect(published.body).toMatchObject({ draft: false, name: 'Three' });
    expect(git(dir, 'rev-parse', 'refs/tags/v3').trim()).toMatch(/^[0-9a-f]{40}$/);
  });

  it('deleting a release keeps its tag and removes its files; by tag too', async () => {
    const { repo, tag, release } = await repoWithRelease();
    await uploadRaw(repo.name, release.id, 'a.bin', Buffer.from('abc')).expect(201);
    expect(storedFiles(t.dataDir).length).toBeGreaterThan(0);
    const before = storedFiles(t.dataDir).length;
    await t.http
      .delete(`${releases(alice.name, repo.name)}/${release.id}`)
      .set(withToken(bob.token))
      .expect(403);
    await t.http
      .delete(`${releases(alice.name, repo.name)}/${release.id}`)
      .set(withToken(alice.token))
      .expect(204);
    expect(storedFiles(t.dataDir).length).toBe(before - 1);
    await t.http.get(`${releases(alice.name, repo.name)}/${release.id}`).expect(404);
    expect(git(repositoryDir(t.dataDir, alice.name, repo.name), 'rev-parse', `refs/tags/${tag}`).trim()).toMatch(/^[0-9a-f]{40}$/);
    const again = await t.http.post(releases(alice.name, repo.name)).set(withToken(alice.token)).send({ tag_name: tag }).expect(201);
    await t.http
      .delete(`${releases(alice.name, repo.name)}/tags/${tag}`)
      .set(withToken(alice.token))
      .expect(204);
    await t.http
      .get(`${releases(alice.name, repo.name)}/${again.body.id}`)
      .set(withToken(alice.token))
      .expect(404);
  });

  it('uploads 0 bytes, 1 byte and 5 MiB (raw and multipart) and downloads them byte-identical with headers and ranges', async () => {
    const { repo, tag, release } = await repoWithRelease();
    const big = randomBytes(5 * 1024 * 1024);
    const zero = await uploadRaw(repo.name, release.id, 'zero.bin', Buffer.alloc(0)).expect(201);
    expect(zero.body).toMatchObject({ name: 'zero.bin', size: 0, download_count: 0, type: 'attachment' });
    const one = await uploadRaw(repo.name, release.id, 'one.bin', Buffer.from('x')).expect(201);
    expect(one.body.size).toBe(1);
    const multi = await t.http
      .post(`${releases(alice.name, repo.name)}/${release.id}/assets`)
      .set(withToken(alice.token))
      .attach('attachment', big, 'big file.bin')
      .expect(201);
    expect(multi.body).toMatchObject({ name: 'big file.bin', size: big.length });
    // As Forgejo: one attachment answers its uuid URL; the release's listing names it (below).
    expect(multi.body.browser_download_url).toBe(`http://anvil.test/attachments/${multi.body.uuid}`);

    const byName = await t.http
      .get(`/${alice.name}/${repo.name}/releases/download/${tag}/big%20file.bin`)
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    expect(Buffer.compare(byName.body as Buffer, big)).toBe(0);
    expect(byName.headers['content-length']).toBe(String(big.length));
    expect(byName.headers['content-disposition']).toBe(`attachment; filename="big file.bin"`);
    expect(byName.headers['accept-ranges']).toBe('bytes');

    const ranged = await t.http
      .get(`/attachments/${multi.body.uuid}`)
      .set('Range', 'bytes=100-199')
      .buffer(true)
      .parse(binary as never)
      .expect(206);
    expect(Buffer.compare(ranged.body as Buffer, big.subarray(100, 200))).toBe(0);
    expect(ranged.headers['content-range']).toBe(`bytes 100-199/${big.length}`);
    expect(ranged.headers['content-length']).toBe('100');
    await t.http
      .get(`/attachments/${multi.body.uuid}`)
      .set('Range', `bytes=${big.length + 10}-`)
      .expect(416);
    const empty = await t.http
      .get(`/attachments/${zero.body.uuid}`)
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    expect((empty.body as Buffer).length).toBe(0);
    expect(empty.headers['content-length']).toBe('0');

    const listed = await t.http.get(`${releases(alice.name, repo.name)}/${release.id}/assets`).expect(200);
    expect(listed.body.map((a: { name: string }) => a.name)).toEqual(['zero.bin', 'one.bin', 'big file.bin']);
    expect(listed.body[2].browser_download_url).toBe(`http://anvil.test/${alice.name}/${repo.name}/releases/download/${tag}/big%20file.bin`);
    const got = await t.http.get(`${releases(alice.name, repo.name)}/${release.id}/assets/${multi.body.id}`).expect(200);
    // Every download request that reached the file counts, range requests included (as Forgejo).
    expect(got.body.download_count).toBe(3);
    const renamed = await t.http
      .patch(`${releases(alice.name, repo.name)}/${release.id}/assets/${one.body.id}`)
      .set(withToken(alice.token))
      .send({ name: 'renamed.bin' })
      .expect(201);
    expect(renamed.body.name).toBe('renamed.bin');
    const withAssets = await t.http.get(`${releases(alice.name, repo.name)}/${release.id}`).expect(200);
    expect(withAssets.body.assets).toHaveLength(3);
    await t.http
      .delete(`${releases(alice.name, repo.name)}/${release.id}/assets/${one.body.id}`)
      .set(withToken(alice.token))
      .expect(204);
    await t.http.get(`/attachments/${one.body.uuid}`).expect(404);
  });

  it('refuses an upload over ATTACHMENT_MAX_SIZE with 413 and keeps nothing, declared or chunked', async () => {
    const { repo, release } = await repoWithRelease();
    const before = storedFiles(t.dataDir).length;
    await uploadRaw(repo.name, release.id, 'huge.bin', Buffer.alloc(6 * 1024 * 1024 + 1)).expect(413);
    // Without Content-Length the counting stream stops it.
    const base = await t.listen();
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(new URL(`api/v1/repos/${alice.name}/${repo.name}/releases/${release.id}/assets?name=chunked.bin`, base), {
        method: 'POST',
        headers: { Authorization: `token ${alice.token}`, 'Content-Type': 'application/octet-stream', 'Transfer-Encoding': 'chunked' },
      });
      req.on('response', (response) => {
        response.resume();
        resolve(response.statusCode!);
      });
      req.on('error', reject);
      const chunk = Buffer.alloc(1024 * 1024);
      for (let i = 0; i < 7; i++) req.write(chunk);
      req.end();
    });
    expect(status).toBe(413);
    expect(storedFiles(t.dataDir).length).toBe(before);
    expect(await rows(`SELECT COUNT(*) AS n FROM attachment WHERE release_id = ${release.id}`)).toBe(0);
  });

  it('an upload cut off half-way leaves no file and no row', async () => {
    const { repo, release } = await repoWithRelease();
    const before = storedFiles(t.dataDir).length;
    const base = await t.listen();
    await new Promise<void>((resolve) => {
      const req = http.request(new URL(`api/v1/repos/${alice.name}/${repo.name}/releases/${release.id}/assets?name=cut.bin`, base), {
        method: 'POST',
        headers: { Authorization: `token ${alice.token}`, 'Content-Type': 'application/octet-stream', 'Content-Length': String(4 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(2 * 1024 * 1024), () =>
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 200),
      );
    });
    // Wait until the server has noticed and cleaned up (no absolute durations: poll for the state).
    for (let i = 0; i < 100 && storedFiles(t.dataDir).length !== before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(storedFiles(t.dataDir).length).toBe(before);
    expect(await rows(`SELECT COUNT(*) AS n FROM attachment WHERE release_id = ${release.id}`)).toBe(0);
  });

  it('checks auth and write access before reading the body; a missing name is 400', async () => {
    const { repo, release } = await repoWithRelease();
    await uploadRaw(repo.name, release.id, 'x.bin', Buffer.from('x'), bob).expect(403);
    await t.http
      .post(`${releases(alice.name, repo.name)}/${release.id}/assets?name=x`)
      .send(Buffer.from('x'))
      .expect(401);
    await t.http
      .post(`${releases(alice.name, repo.name)}/${release.id}/assets`)
      .set(withToken(alice.token))
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('x'))
      .expect(400);
    await t.http
      .post(`${releases(alice.name, repo.name)}/${release.id}/assets`)
      .set(withToken(alice.token))
      .field('other', 'y')
      .expect(400);
    const readOnly = await makeToken(t, alice.user, ['read:repository']);
    await uploadRaw(repo.name, release.id, 'x.bin', Buffer.from('x')).set(withToken(readOnly)).expect(403);
    expect(await rows(`SELECT COUNT(*) AS n FROM attachment WHERE release_id = ${release.id}`)).toBe(0);
  });

  it('private repositories: releases and downloads are 404 to others, drafts only for writers', async () => {
    const { repo, tag, release } = await repoWithRelease({ private: true });
    const asset = await uploadRaw(repo.name, release.id, 'p.bin', Buffer.from('secret')).expect(201);
    for (const who of [undefined, bob]) {
      const auth = who ? withToken(who.token) : {};
      await t.http.get(releases(alice.name, repo.name)).set(auth).expect(404);
      await t.http.get(`/attachments/${asset.body.uuid}`).set(auth).expect(404);
      await t.http.get(`/${alice.name}/${repo.name}/releases/download/${tag}/p.bin`).set(auth).expect(404);
    }
    await t.http.get(`/attachments/${asset.body.uuid}`).set(withToken(admin.token)).expect(200);
    const pub = await repoWithRelease({ draft: true });
    const draftAsset = await uploadRaw(pub.repo.name, pub.release.id, 'd.bin', Buffer.from('draft')).expect(201);
    await t.http.get(`/attachments/${draftAsset.body.uuid}`).expect(404);
    await t.http.get(`/attachments/${draftAsset.body.uuid}`).set(withToken(alice.token)).expect(200);
  });

  it('quota: 413 before any byte is stored; usage and the attachment lists follow uploads and deletions', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const rel = (await t.http.post(releases(owner.name, repo.name)).set(withToken(owner.token)).send({ tag_name: 'v1' }).expect(201)).body;
    const up = (name: string, size: number) =>
      t.http
        .post(`${releases(owner.name, repo.name)}/${rel.id}/assets?name=${name}`)
        .set(withToken(owner.token))
        .set('Content-Type', 'application/octet-stream')
        .send(Buffer.alloc(size, 1));
    const a = await up('small.bin', 10).expect(201);
    await up('large.bin', 1000).expect(201);
    const info = await t.http.get(t.api('/user/quota')).set(withToken(owner.token)).expect(200);
    expect(info.body.used.size.assets.attachments.releases).toBe(1010);
    const list = await t.http.get(t.api('/user/quota/attachments')).set(withToken(owner.token)).expect(200);
    expect(list.headers['x-total-count']).toBe('2');
    expect(list.body[0]).toEqual({
      name: 'large.bin',
      size: 1000,
      api_url: expect.stringMatching(new RegExp(`^http://anvil.test/api/v1/repos/${owner.name}/${repo.name}/releases/${rel.id}/assets/\\d+$`)),
      contained_in: {
        api_url: `http://anvil.test/api/v1/repos/${owner.name}/${repo.name}/releases/${rel.id}`,
        html_url: `http://anvil.test/${owner.name}/${repo.name}/releases/tag/v1`,
      },
    });
    expect(list.body[1].name).toBe('small.bin');
    const adm = (method: 'post' | 'put', url: string, body?: object) => t.http[method](t.api(url)).set(withToken(admin.token)).send(body);
    const group = uniqueName('g');
    await adm('post', '/admin/quota/groups', {
      name: group,
      rules: [{ name: uniqueName('r'), limit: 1000, subjects: ['size:assets:attachments:releases'] }],
    }).expect(201);
    await adm('put', `/admin/quota/groups/${group}/users/${owner.name}`).expect(204);
    const before = storedFiles(t.dataDir).length;
    const refused = await up('more.bin', 5).expect(413);
    expect(refused.body.message).toBe('quota exceeded');
    expect(storedFiles(t.dataDir).length).toBe(before);
    await t.http
      .delete(`${releases(owner.name, repo.name)}/${rel.id}/assets/${a.body.id}`)
      .set(withToken(owner.token))
      .expect(204);
    // 1000 used of 1000: still refused (usage must stay under the limit)? Forgejo allows while used < limit.
    const after = await t.http.get(t.api('/user/quota')).set(withToken(owner.token)).expect(200);
    expect(after.body.used.size.assets.attachments.releases).toBe(1000);
    // Deleting the repository removes its attachments and their files.
    await t.http
      .delete(t.api(`/repos/${owner.name}/${repo.name}`))
      .set(withToken(owner.token))
      .expect(204);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(owner.token))).body.used.size.assets.attachments.releases).toBe(0);
    expect(storedFiles(t.dataDir).length).toBe(before - 2);
    expect((await t.http.get(t.api('/user/quota/attachments')).set(withToken(owner.token))).body).toEqual([]);
  });

  it('external assets (multipart external_url): a link without a file, redirected to, renamed and relinked, never counted', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const rel = (await t.http.post(releases(owner.name, repo.name)).set(withToken(owner.token)).send({ tag_name: 'v1' }).expect(201)).body;
    const assets = `${releases(owner.name, repo.name)}/${rel.id}/assets`;
    const before = storedFiles(t.dataDir).length;
    const link = await t.http
      .post(assets)
      .set(withToken(owner.token))
      .field('external_url', 'https://downloads.example.com/v1/tool%20linux.tgz?x=1')
      .expect(201);
    expect(link.body).toMatchObject({
      name: 'tool linux.tgz',
      size: 0,
      type: 'external',
      browser_download_url: 'https://downloads.example.com/v1/tool%20linux.tgz?x=1',
    });
    const named = await t.http.post(`${assets}?name=mirror`).set(withToken(owner.token)).field('external_url', 'http://mirror.example.org').expect(201);
    expect(named.body).toMatchObject({ name: 'mirror', type: 'external', browser_download_url: 'http://mirror.example.org/' });
    const hostOnly = await t.http.post(assets).set(withToken(owner.token)).field('external_url', 'https://cdn.example.net/').expect(201);
    expect(hostOnly.body.name).toBe('cdn.example.net');
    expect(storedFiles(t.dataDir).length).toBe(before);

    // The release lists the link as it is; both download routes redirect to it, uncounted.
    const listed = (await t.http.get(`${releases(owner.name, repo.name)}/${rel.id}`).expect(200)).body.assets as {
      name: string;
      type: string;
      browser_download_url: string;
    }[];
    expect(listed.find((a) => a.name === 'mirror')).toMatchObject({ type: 'external', browser_download_url: 'http://mirror.example.org/' });
    const byUuid = await t.http.get(`/attachments/${named.body.uuid}`).expect(302);
    expect(byUuid.headers.location).toBe('http://mirror.example.org/');
    const byName = await t.http.get(`/${owner.name}/${repo.name}/releases/download/v1/mirror`).expect(302);
    expect(byName.headers.location).toBe('http://mirror.example.org/');
    expect((await t.http.get(`${assets}/${named.body.id}`).expect(200)).body.download_count).toBe(0);

    // Edits: a new link for an external asset only; the link must be http(s).
    const relinked = await t.http
      .patch(`${assets}/${named.body.id}`)
      .set(withToken(owner.token))
      .send({ name: 'mirror2', browser_download_url: 'https://mirror.example.org/v1' })
      .expect(201);
    expect(relinked.body).toMatchObject({ name: 'mirror2', type: 'external', browser_download_url: 'https://mirror.example.org/v1' });
    await t.http.patch(`${assets}/${named.body.id}`).set(withToken(owner.token)).send({ browser_download_url: 'javascript:alert(1)' }).expect(400);
    const stored = await t.http
      .post(`${assets}?name=real.bin`)
      .set(withToken(owner.token))
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('real'))
      .expect(201);
    const refused = await t.http
      .patch(`${assets}/${stored.body.id}`)
      .set(withToken(owner.token))
      .send({ browser_download_url: 'https://example.com/x' })
      .expect(400);
    expect(refused.body.message).toBe('existing attachment is not external');

    // 400s, and nothing kept: a link and a file at once, neither, a link that is not http(s), a link with a raw body.
    const count = await rows(`SELECT COUNT(*) AS n FROM attachment WHERE release_id = ${rel.id}`);
    const both = await t.http
      .post(assets)
      .set(withToken(owner.token))
      .field('external_url', 'https://example.com/a')
      .attach('attachment', Buffer.from('x'), 'x.bin')
      .expect(400);
    expect(both.body.message).toBe("'attachment' and 'external_url' are mutually exclusive");
    const neither = await t.http.post(assets).set(withToken(owner.token)).field('name', 'x').expect(400);
    expect(neither.body.message).toBe("One of 'attachment' or 'external_url' is required");
    for (const bad of ['ftp://example.com/a', 'not a url', '/relative/path', `https://example.com/${'a'.repeat(2100)}`]) {
      await t.http.post(assets).set(withToken(owner.token)).field('external_url', bad).expect(400);
    }
    await t.http
      .post(`${assets}?name=raw.bin&external_url=${encodeURIComponent('https://example.com/a')}`)
      .set(withToken(owner.token))
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.from('x'))
      .expect(400);
    await t.http.post(assets).set(withToken(bob.token)).field('external_url', 'https://example.com/a').expect(403);
    expect(await rows(`SELECT COUNT(*) AS n FROM attachment WHERE release_id = ${rel.id}`)).toBe(count);

    // A multipart `name` field before the file names a stored upload too (Forgejo reads the form's `name`).
    const formNamed = await t.http
      .post(assets)
      .set(withToken(owner.token))
      .field('name', 'from-form.bin')
      .attach('attachment', Buffer.from('abc'), 'original.bin')
      .expect(201);
    expect(formNamed.body).toMatchObject({ name: 'from-form.bin', size: 3, type: 'attachment' });

    // Quota: only the stored files count, and only they are listed.
    const usage = await t.http.get(t.api('/user/quota')).set(withToken(owner.token)).expect(200);
    expect(usage.body.used.size.assets.attachments.releases).toBe(4 + 3);
    const list = await t.http.get(t.api('/user/quota/attachments')).set(withToken(owner.token)).expect(200);
    expect(list.body.map((item: { name: string }) => item.name).sort()).toEqual(['from-form.bin', 'real.bin']);
  });

  it('organisation quota view lists the attachments of the organisation repositories', async () => {
    const org = await makeOrg(t, alice.user);
    const repo = await makeRepo(t, alice, { org: org.name, autoInit: true });
    const rel = (await t.http.post(releases(org.name, repo.name)).set(withToken(alice.token)).send({ tag_name: 'v1' }).expect(201)).body;
    await t.http
      .post(`${releases(org.name, repo.name)}/${rel.id}/assets?name=o.bin`)
      .set(withToken(alice.token))
      .set('Content-Type', 'application/octet-stream')
      .send(Buffer.alloc(7))
      .expect(201);
    const list = await t.http
      .get(t.api(`/orgs/${org.name}/quota/attachments`))
      .set(withToken(alice.token))
      .expect(200);
    expect(list.body.map((item: { name: string; size: number }) => [item.name, item.size])).toEqual([['o.bin', 7]]);
    await t.http
      .get(t.api(`/orgs/${org.name}/quota/attachments`))
      .set(withToken(bob.token))
      .expect(403);
  });
});

function binary(response: NodeJS.ReadableStream, callback: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('end', () => callback(null, Buffer.concat(chunks)));
}
