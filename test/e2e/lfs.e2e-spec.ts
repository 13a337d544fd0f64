import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { makeRepo, makeToken, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, runSsh, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { recordSecrets } from '../support/e2e-log';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

const LFS = 'application/vnd.git-lfs+json';

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

describe('Git LFS over HTTP', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let bob: TestUser;
  /** alice's private repository; bob reads it as a collaborator. */
  let priv: string;
  let pub: string;

  const lfsPath = (repo: string, tail: string) => `/${repo}.git/info/lfs/${tail}`;
  const batch = (repo: string, body: unknown, headers: Record<string, string> = withBasic(alice.name, alice.password)) =>
    t.http
      .post(lfsPath(repo, 'objects/batch'))
      .set({ Accept: LFS, 'Content-Type': LFS, ...headers })
      .send(JSON.stringify(body));
  const rows = async (oid: string): Promise<number> =>
    Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM lfs_meta_object WHERE oid = ?', [oid]))[0].n);
  const stored = (oid: string) => path.join(t.dataDir, 'lfs', oid.slice(0, 2), oid.slice(2, 4), oid);
  const leftovers = (): string[] => {
    const uploads = path.join(t.dataDir, 'tmp', 'uploads');
    if (!fs.existsSync(uploads)) return [];
    return fs.readdirSync(uploads).flatMap((dir) => fs.readdirSync(path.join(uploads, dir)));
  };

  /** A raw PUT whose Content-Length is whatever the test says, and whose body may stop early. */
  function rawPut(
    url: string,
    headers: Record<string, string>,
    body: Buffer,
    cutAfter?: number,
    beforeCut: () => Promise<void> = () => Promise.resolve(),
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const request = http.request(new URL(url, base), { method: 'PUT', headers }, (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolve({ status: response.statusCode!, text: Buffer.concat(chunks).toString('utf8') }));
      });
      request.on('error', (error) => (cutAfter === undefined ? reject(error) : resolve({ status: 0, text: error.message })));
      if (cutAfter === undefined) request.end(body);
      else request.write(body.subarray(0, cutAfter), () => void beforeCut().then(() => request.destroy()));
    });
  }

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    base = await t.listen();
    // Action hrefs are built from ROOT_URL: the real client must reach them on the test server.
    t.config.rootUrl = base;
    client = new GitClient();
    alice = await makeUser(t);
    bob = await makeUser(t);
    priv = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('lfs'), private: true, autoInit: true })).name}`;
    pub = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('pub'), autoInit: true })).name}`;
    const added = await t.http
      .put(t.api(`/repos/${priv}/collaborators/${bob.name}`))
      .set(withToken(alice.token))
      .send({ permission: 'read' });
    expect(added.status).toBe(204);
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('batch API', () => {
    it('refuses other media types (415), malformed bodies and operations (400)', async () => {
      const wrongType = await t.http
        .post(lfsPath(priv, 'objects/batch'))
        .set({ ...withBasic(alice.name, alice.password), Accept: 'application/json' })
        .send('{}');
      expect({ status: wrongType.status, type: wrongType.headers['content-type'], body: JSON.parse(wrongType.text) }).toEqual({
        status: 415,
        type: LFS,
        body: { message: 'Unsupported Media Type' },
      });
      const malformed = await t.http
        .post(lfsPath(priv, 'objects/batch'))
        .set({ ...withBasic(alice.name, alice.password), Accept: LFS, 'Content-Type': LFS })
        .send('{"operation":');
      expect(malformed.status).toBe(400);
      const operation = await batch(priv, { operation: 'delete', objects: [] });
      expect(operation.status).toBe(400);
    });

    it('challenges anonymous callers of a private or unknown repository alike, and hides it from others (404)', async () => {
      for (const repo of [priv, `${alice.name}/no-such-repo`]) {
        const anonymous = await batch(repo, { operation: 'download', objects: [] }, {});
        expect({ status: anonymous.status, challenge: anonymous.headers['www-authenticate'] }).toEqual({ status: 401, challenge: 'Basic realm="Anvil"' });
      }
      const carol = await makeUser(t);
      const hidden = await batch(priv, { operation: 'download', objects: [] }, withBasic(carol.name, carol.password));
      expect({ status: hidden.status, body: JSON.parse(hidden.text) }).toEqual({ status: 404, body: { message: 'Repository not found' } });
      const wrong = await batch(priv, { operation: 'download', objects: [] }, withBasic(alice.name, 'not-the-password'));
      expect(wrong.status).toBe(401);
    });

    it('refuses uploads to readers, read-only tokens and public-only tokens on private repositories', async () => {
      const reader = await batch(priv, { operation: 'upload', objects: [] }, withBasic(bob.name, bob.password));
      expect({ status: reader.status, body: JSON.parse(reader.text) }).toEqual({
        status: 403,
        body: { message: `User '${bob.name}' is not allowed to push to '${priv}'.` },
      });
      const readOnly = await makeToken(t, alice.user, ['read:repository']);
      const scoped = await batch(priv, { operation: 'upload', objects: [] }, withBasic(alice.name, readOnly));
      expect({ status: scoped.status, body: JSON.parse(scoped.text) }).toEqual({
        status: 403,
        body: { message: 'token does not have at least one of required scope(s): [write:repository]' },
      });
      const readable = await batch(priv, { operation: 'download', objects: [] }, withBasic(alice.name, readOnly));
      expect(readable.status).toBe(200);
      const publicOnly = await makeToken(t, alice.user, ['write:repository', 'public-only']);
      const limited = await batch(priv, { operation: 'download', objects: [] }, withBasic(alice.name, publicOnly));
      expect({ status: limited.status, body: JSON.parse(limited.text) }).toEqual({ status: 403, body: { message: 'token scope is limited to public repos' } });
    });

    it('answers objects in request order with per-object errors, and offers uploads only for missing objects', async () => {
      const content = randomBytes(1000);
      const oid = sha256(content);
      const missing = sha256(randomBytes(10));
      const asked = await batch(priv, {
        operation: 'upload',
        objects: [
          { oid: 'nothex', size: 1 },
          { oid, size: 1000 },
          { oid: missing, size: -1 },
        ],
      });
      expect(asked.status).toBe(200);
      expect(asked.headers['content-type']).toBe(LFS);
      const objects = asked.body.objects ?? JSON.parse(asked.text).objects;
      expect(objects.map((object: { oid: string; error?: { code: number } }) => [object.oid, object.error?.code])).toEqual([
        ['nothex', 422],
        [oid, undefined],
        [missing, 422],
      ]);
      const upload = objects[1].actions.upload;
      expect(upload.href).toBe(`${base}${priv}.git/info/lfs/objects/${oid}/1000`);
      expect(objects[1].actions.verify.href).toBe(`${base}${priv}.git/info/lfs/verify`);

      // The action's href and header alone complete the transfer.
      const put = await rawPut(upload.href, { ...upload.header, 'Content-Length': '1000' }, content);
      expect(put.status).toBe(200);
      expect(fs.readFileSync(stored(oid))).toEqual(content);
      const verify = await t.http
        .post(new URL(objects[1].actions.verify.href).pathname)
        .set({ ...objects[1].actions.verify.header, 'Content-Type': LFS })
        .send(JSON.stringify({ oid, size: 1000 }));
      expect(verify.status).toBe(200);

      const again = JSON.parse((await batch(priv, { operation: 'upload', objects: [{ oid, size: 1000 }] })).text);
      expect(again.objects[0]).toEqual({ oid, size: 1000, authenticated: true });
      const wrongSize = JSON.parse((await batch(priv, { operation: 'download', objects: [{ oid, size: 999 }] })).text);
      expect(wrongSize.objects[0].error).toEqual({ code: 422, message: `Object ${oid} is not 999 bytes` });

      // A reader downloads, in any letter case of the route and without `.git`.
      const download = JSON.parse(
        (
          await t.http
            .post(`/${priv.toUpperCase()}/INFO/LFS/objects/batch`)
            .set({ ...withBasic(bob.name, bob.password), Accept: LFS })
            .send(
              JSON.stringify({
                operation: 'download',
                objects: [
                  { oid, size: 1000 },
                  { oid: missing, size: 10 },
                ],
              }),
            )
        ).text,
      );
      expect(download.objects[1].error).toEqual({ code: 404, message: 'Not Found' });
      const link = download.objects[0].actions.download;
      const fetched = await bytes(t.http.get(new URL(link.href).pathname).set(link.header));
      expect({ status: fetched.status, same: Buffer.compare(fetched.body as Buffer, content) === 0 }).toEqual({ status: 200, same: true });
      const ranged = await bytes(t.http.get(lfsPath(priv, `objects/${oid}`)).set({ ...link.header, Range: 'bytes=10-19' }));
      expect({
        status: ranged.status,
        range: ranged.headers['content-range'],
        same: Buffer.compare(ranged.body as Buffer, content.subarray(10, 20)) === 0,
      }).toEqual({
        status: 206,
        range: 'bytes 10-19/1000',
        same: true,
      });
      const unsatisfiable = await t.http.get(lfsPath(priv, `objects/${oid}`)).set({ ...link.header, Range: 'bytes=5000-' });
      expect(unsatisfiable.status).toBe(416);
    });

    it('links an object already stored without a transfer only for callers who can read a repository holding it', async () => {
      const content = randomBytes(300);
      const oid = sha256(content);
      const own = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('own'), private: true })).name}`;
      expect((await rawPut(lfsPath(own, `objects/${oid}/300`), withBasic(alice.name, alice.password), content)).status).toBe(200);
      // bob's own repository: he cannot read alice's, so he must send the bytes.
      const bobs = `${bob.name}/${(await makeRepo(t, bob, { name: uniqueName('bobs') })).name}`;
      const askedResponse = await batch(bobs, { operation: 'upload', objects: [{ oid, size: 300 }] }, withBasic(bob.name, bob.password));
      expect({ status: askedResponse.status, text: askedResponse.text }).toEqual({ status: 200, text: expect.any(String) });
      const asked = JSON.parse(askedResponse.text);
      expect(Object.keys(asked.objects[0].actions ?? {})).toEqual(['upload', 'verify']);
      const lie = await rawPut(lfsPath(bobs, `objects/${oid}/300`), withBasic(bob.name, bob.password), randomBytes(300));
      expect({ status: lie.status, body: JSON.parse(lie.text) }).toEqual({ status: 422, body: { message: 'content hash does not match OID' } });
      expect(await rows(oid)).toBe(1);
      // alice can read her repository: her other repository links it at once.
      const mine = JSON.parse((await batch(priv, { operation: 'upload', objects: [{ oid, size: 300 }] })).text);
      expect(mine.objects[0]).toEqual({ oid, size: 300, authenticated: true });
      expect(await rows(oid)).toBe(2);
    });
  });

  describe('uploads', () => {
    it('refuses a Content-Length other than the size, a short body, a cut-off body and wrong bytes, storing nothing', async () => {
      const content = randomBytes(64 * 1024);
      const oid = sha256(content);
      const url = lfsPath(priv, `objects/${oid}/${content.length}`);
      const auth = withBasic(alice.name, alice.password);
      const declared = await rawPut(url, { ...auth, 'Content-Length': String(content.length + 1) }, Buffer.concat([content, Buffer.from('x')]));
      expect({ status: declared.status, body: JSON.parse(declared.text) }).toEqual({ status: 422, body: { message: 'content size does not match' } });
      const chunkedShort = await rawPut(url, { ...auth, 'Transfer-Encoding': 'chunked' }, content.subarray(1));
      expect({ status: chunkedShort.status, body: JSON.parse(chunkedShort.text) }).toEqual({ status: 422, body: { message: 'content size does not match' } });
      const chunkedLong = await rawPut(url, { ...auth, 'Transfer-Encoding': 'chunked' }, Buffer.concat([content, Buffer.from('x')]));
      expect(chunkedLong.status).toBe(422);
      const wrongBytes = Buffer.from(content);
      wrongBytes[0] ^= 1;
      const wrong = await rawPut(url, { ...auth, 'Content-Length': String(content.length) }, wrongBytes);
      expect({ status: wrong.status, body: JSON.parse(wrong.text) }).toEqual({ status: 422, body: { message: 'content hash does not match OID' } });
      // Cut off once the server is receiving it (its temporary file exists), then wait until it has cleaned up.
      await rawPut(url, { ...auth, 'Content-Length': String(content.length) }, content, 1000, () =>
        until(() => leftovers().length === 1, 'the upload reaches the server'),
      );
      const invalid = await rawPut(lfsPath(priv, 'objects/abc/10'), auth, Buffer.alloc(10));
      expect(invalid.status).toBe(422);
      // The server learns of the cut-off only when its socket closes.
      await until(() => leftovers().length === 0, 'the cut-off upload leaves its temporary file');
      const after = JSON.parse((await batch(priv, { operation: 'download', objects: [{ oid, size: content.length }] })).text);
      expect(after.objects[0].error.code).toBe(404);
      expect({ rows: await rows(oid), file: fs.existsSync(stored(oid)), leftovers: leftovers() }).toEqual({ rows: 0, file: false, leftovers: [] });
    });

    it('keeps one file when two uploads of one object run at once, both succeeding', async () => {
      const content = randomBytes(512 * 1024);
      const oid = sha256(content);
      const other = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('twin'), private: true })).name}`;
      const auth = withBasic(alice.name, alice.password);
      const results = await Promise.all(
        [priv, other].map((repo) => rawPut(lfsPath(repo, `objects/${oid}/${content.length}`), { ...auth, 'Content-Length': String(content.length) }, content)),
      );
      expect(results.map((result) => result.status)).toEqual([200, 200]);
      expect({ rows: await rows(oid), same: Buffer.compare(fs.readFileSync(stored(oid)), content) === 0, leftovers: leftovers() }).toEqual({
        rows: 2,
        same: true,
        leftovers: [],
      });
    });
  });

  it("removes a deleted repository's rows, and the files no other repository holds", async () => {
    const shared = randomBytes(100);
    const own = randomBytes(200);
    const doomed = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('doomed') })).name}`;
    const keeper = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('keeper') })).name}`;
    const auth = withBasic(alice.name, alice.password);
    for (const [repo, content] of [
      [doomed, shared],
      [keeper, shared],
      [doomed, own],
    ] as const) {
      expect((await rawPut(lfsPath(repo, `objects/${sha256(content)}/${content.length}`), auth, content)).status).toBe(200);
    }
    expect((await t.http.delete(t.api(`/repos/${doomed}`)).set(withToken(alice.token))).status).toBe(204);
    expect({
      shared: [await rows(sha256(shared)), fs.existsSync(stored(sha256(shared)))],
      own: [await rows(sha256(own)), fs.existsSync(stored(sha256(own)))],
    }).toEqual({
      shared: [1, true],
      own: [0, false],
    });
  });

  describe('quota (size:git:lfs)', () => {
    it('reserves each object before its body is read: concurrent uploads stop at the limit, refusals store nothing', async () => {
      const admin = await makeUser(t, { admin: true });
      const owner = await makeUser(t);
      const group = uniqueName('grp');
      const created = await t.http
        .post(t.api('/admin/quota/groups'))
        .set(withToken(admin.token))
        .send({
          name: group,
          rules: [
            { name: uniqueName('rule'), limit: -1, subjects: ['size:all'] },
            { name: uniqueName('rule'), limit: 2500, subjects: ['size:git:lfs'] },
          ],
        });
      expect(created.status).toBe(201);
      expect((await t.http.put(t.api(`/admin/quota/groups/${group}/users/${owner.name}`)).set(withToken(admin.token))).status).toBe(204);
      const repo = `${owner.name}/${(await makeRepo(t, owner, { name: uniqueName('quota') })).name}`;
      const auth = withBasic(owner.name, owner.password);

      const tooMuch = await batch(
        repo,
        {
          operation: 'upload',
          objects: [
            { oid: sha256(randomBytes(8)), size: 2000 },
            { oid: sha256(randomBytes(8)), size: 1000 },
          ],
        },
        auth,
      );
      expect({ status: tooMuch.status, body: JSON.parse(tooMuch.text) }).toEqual({ status: 413, body: { message: 'quota exceeded' } });

      const contents = Array.from({ length: 5 }, () => randomBytes(1000));
      const results = await Promise.all(
        contents.map((content) => rawPut(lfsPath(repo, `objects/${sha256(content)}/1000`), { ...auth, 'Content-Length': '1000' }, content)),
      );
      expect(results.map((result) => result.status).sort()).toEqual([200, 200, 413, 413, 413]);
      expect(JSON.parse(results.find((result) => result.status === 413)!.text)).toEqual({ message: 'quota exceeded' });
      const kept = contents.filter((_, index) => results[index].status === 200);
      const refused = contents.filter((_, index) => results[index].status === 413);
      for (const content of refused)
        expect({ rows: await rows(sha256(content)), file: fs.existsSync(stored(sha256(content))) }).toEqual({ rows: 0, file: false });

      // The same object in a second repository of the owner counts once.
      const second = `${owner.name}/${(await makeRepo(t, owner, { name: uniqueName('quota') })).name}`;
      expect((await rawPut(lfsPath(second, `objects/${sha256(kept[0])}/1000`), { ...auth, 'Content-Length': '1000' }, kept[0])).status).toBe(200);
      const quota = await t.http.get(t.api('/user/quota')).set(withToken(owner.token));
      expect(quota.body.used.size.git).toEqual({ LFS: 2000 });
    });
  });

  describe('the real git-lfs client', () => {
    const lfs = (cwd: string, ...args: string[]) => client.ok(['lfs', ...args], { cwd });

    it('tracks, pushes, clones, pulls and checks 0-byte and 20 MiB files; a reader push stores nothing', async () => {
      const big = randomBytes(20 * 1024 * 1024);
      const work = await client.workingCopy('main', {});
      await lfs(work, 'install', '--local');
      await lfs(work, 'track', '*.bin');
      fs.writeFileSync(path.join(work, 'empty.bin'), '');
      fs.writeFileSync(path.join(work, 'big.bin'), big);
      await client.ok(['add', '.gitattributes', 'empty.bin', 'big.bin'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'binaries'], { cwd: work });
      const url = withCredentials(base, `${pub}.git`, alice.name, alice.password);
      await client.ok(['push', '--force', url, 'main:main'], { cwd: work });
      expect(await rows(sha256(big))).toBe(1);

      const clone = path.join(client.home, uniqueName('clone'));
      // The clone's own configuration turns the LFS filters on (the client's global configuration is empty).
      await client.ok([
        '-c',
        'filter.lfs.process=git-lfs filter-process',
        '-c',
        'filter.lfs.required=true',
        'clone',
        '--quiet',
        withCredentials(base, `${pub}.git`),
        clone,
      ]);
      await lfs(clone, 'install', '--local');
      expect(Buffer.compare(fs.readFileSync(path.join(clone, 'big.bin')), big)).toBe(0);
      expect(fs.readFileSync(path.join(clone, 'empty.bin')).length).toBe(0);
      await lfs(clone, 'fsck');

      // A second commit arrives by pull.
      const second = randomBytes(4096);
      fs.writeFileSync(path.join(work, 'second.bin'), second);
      await client.ok(['add', 'second.bin'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'second'], { cwd: work });
      await client.ok(['push', url, 'main:main'], { cwd: work });
      await client.ok(['pull', '--quiet', '--ff-only', 'origin', 'main'], { cwd: clone });
      expect(Buffer.compare(fs.readFileSync(path.join(clone, 'second.bin')), second)).toBe(0);

      // bob reads alice's private repository but may not push to it: nothing of his is stored.
      const refused = randomBytes(2048);
      fs.writeFileSync(path.join(work, 'refused.bin'), refused);
      await client.ok(['add', 'refused.bin'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'refused'], { cwd: work });
      const push = await client.run(['push', withCredentials(base, `${priv}.git`, bob.name, bob.password), 'main:main'], { cwd: work });
      expect(push.code).not.toBe(0);
      expect(await rows(sha256(refused))).toBe(0);
      expect(fs.existsSync(stored(sha256(refused)))).toBe(false);
    });
  });

  describe('locks', () => {
    it('locks a path once in any letter case, lists by cursor without repeats, verifies and unlocks', async () => {
      const dave = await makeUser(t);
      const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('locks'), private: true })).name}`;
      for (const [user, permission] of [
        [dave, 'write'],
        [bob, 'read'],
      ] as const) {
        expect(
          (
            await t.http
              .put(t.api(`/repos/${repo}/collaborators/${user.name}`))
              .set(withToken(alice.token))
              .send({ permission })
          ).status,
        ).toBe(204);
      }
      const locks = (user: TestUser, tail = '') =>
        t.http.post(lfsPath(repo, `locks${tail}`)).set({ ...withBasic(user.name, user.password), Accept: LFS, 'Content-Type': LFS });
      const created = await locks(alice).send(JSON.stringify({ path: '/docs/./a.bin' }));
      expect(created.status).toBe(201);
      const lock = JSON.parse(created.text).lock;
      expect(lock).toEqual({
        id: expect.stringMatching(/^\d+$/),
        path: 'docs/a.bin',
        locked_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
        owner: { name: alice.name },
      });
      const duplicate = await locks(dave).send(JSON.stringify({ path: 'DOCS/A.BIN' }));
      expect({ status: duplicate.status, body: JSON.parse(duplicate.text) }).toEqual({ status: 409, body: { lock, message: 'already created lock' } });
      expect((await locks(bob).send(JSON.stringify({ path: 'b.bin' }))).status).toBe(403);
      for (const name of ['b.bin', 'c.bin', 'd.bin']) expect((await locks(dave).send(JSON.stringify({ path: name }))).status).toBe(201);

      const list = async (query: string) =>
        JSON.parse((await t.http.get(lfsPath(repo, `locks${query}`)).set({ ...withBasic(bob.name, bob.password), Accept: LFS })).text);
      const first = await list('?limit=3');
      const second = await list(`?limit=3&cursor=${first.next_cursor}`);
      expect(first.locks.map((entry: { path: string }) => entry.path)).toEqual(['docs/a.bin', 'b.bin', 'c.bin']);
      expect(second).toEqual({ locks: [expect.objectContaining({ path: 'd.bin', owner: { name: dave.name } })] });
      expect((await list('?path=Docs/A.bin')).locks).toEqual([lock]);

      const verified = JSON.parse((await locks(dave, '/verify').send(JSON.stringify({ limit: 10 }))).text);
      expect({ ours: verified.ours.length, theirs: verified.theirs.map((entry: { path: string }) => entry.path) }).toEqual({ ours: 3, theirs: ['docs/a.bin'] });
      const notOwner = await locks(dave, `/${lock.id}/unlock`).send(JSON.stringify({}));
      expect({ status: notOwner.status, body: JSON.parse(notOwner.text) }).toEqual({
        status: 403,
        body: { message: "user doesn't own lock and force flag is not set" },
      });
      const forced = await locks(dave, `/${lock.id}/unlock`).send(JSON.stringify({ force: true }));
      expect({ status: forced.status, body: JSON.parse(forced.text) }).toEqual({ status: 200, body: { lock } });
      expect((await list('?path=docs/a.bin')).locks).toEqual([]);
    });

    it('git lfs lock, locks and unlock with the real client; lfs.locksverify refuses a push touching a lock of another user', async () => {
      const dave = await makeUser(t);
      const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('locked') })).name}`;
      expect(
        (
          await t.http
            .put(t.api(`/repos/${repo}/collaborators/${dave.name}`))
            .set(withToken(alice.token))
            .send({ permission: 'write' })
        ).status,
      ).toBe(204);
      const work = await client.workingCopy('main', {});
      await client.ok(['lfs', 'install', '--local'], { cwd: work });
      await client.ok(['lfs', 'track', '--lockable', '*.psd'], { cwd: work });
      fs.writeFileSync(path.join(work, 'art.psd'), randomBytes(1024));
      await client.ok(['add', '.gitattributes', 'art.psd'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'art'], { cwd: work });
      await client.ok(['remote', 'add', 'origin', withCredentials(base, `${repo}.git`, alice.name, alice.password)], { cwd: work });
      await client.ok(['push', 'origin', 'main:main'], { cwd: work });
      await client.ok(['lfs', 'lock', 'art.psd'], { cwd: work });
      expect(await client.ok(['lfs', 'locks'], { cwd: work })).toMatch(new RegExp(`^art\\.psd\\s+${alice.name}\\s+ID:\\d+`));

      // dave changes the locked file and pushes with lock verification on: refused.
      await client.ok(['remote', 'set-url', 'origin', withCredentials(base, `${repo}.git`, dave.name, dave.password)], { cwd: work });
      await client.ok(['config', 'lfs.locksverify', 'true'], { cwd: work });
      fs.writeFileSync(path.join(work, 'art.psd'), randomBytes(1024));
      await client.ok(['-c', 'lfs.setlockablereadonly=false', 'commit', '--quiet', '-am', 'edit'], { cwd: work });
      const refused = await client.run(['push', 'origin', 'main:main'], { cwd: work });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toMatch(/locked/i);

      await client.ok(['remote', 'set-url', 'origin', withCredentials(base, `${repo}.git`, alice.name, alice.password)], { cwd: work });
      await client.ok(['lfs', 'unlock', 'art.psd', '--force'], { cwd: work });
      expect((await client.ok(['lfs', 'locks'], { cwd: work })).trim()).toBe('');
    });
  });

  describe('over SSH', () => {
    let port: number;
    let aliceKey: SshKeyFiles;
    let bobKey: SshKeyFiles;
    const sshUrl = (full: string) => `ssh://git@127.0.0.1:${port}/${full}.git`;
    const ssh = (key: SshKeyFiles, command: string) => runSsh({ port, env: client.env() }, key, command);

    beforeAll(async () => {
      port = t.app.get(SshEndpoint).port;
      aliceKey = generateSshKey(client.home, 'alice');
      bobKey = generateSshKey(client.home, 'bob');
      for (const [user, key] of [
        [alice, aliceKey],
        [bob, bobKey],
      ] as const) {
        expect(
          (
            await t.http
              .post(t.api('/user/keys'))
              .set(withToken(user.token))
              .send({ title: uniqueName('key'), key: key.publicLine })
          ).status,
        ).toBe(201);
      }
    });

    it('git-lfs-authenticate answers a token bound to the repository and the operation, refusing as git does', async () => {
      const answer = await ssh(bobKey, `git-lfs-authenticate ${priv}.git download`);
      expect(answer.code).toBe(0);
      const parsed = JSON.parse(answer.stdout);
      expect(parsed.href).toBe(`${base}${priv}.git/info/lfs`);
      expect(parsed.expires_in).toBe(20 * 60);
      expect(parsed.header.Authorization).toMatch(/^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
      recordSecrets(parsed.header.Authorization.slice('Bearer '.length));
      const token = { Authorization: parsed.header.Authorization };
      expect((await batch(priv, { operation: 'download', objects: [] }, token)).status).toBe(200);
      // A download token does not upload, and names one repository only; a changed signature is nobody's.
      expect((await batch(priv, { operation: 'upload', objects: [] }, token)).status).toBe(401);
      expect((await batch(pub, { operation: 'download', objects: [] }, token)).status).toBe(401);
      expect((await batch(priv, { operation: 'download', objects: [] }, { Authorization: `${parsed.header.Authorization}x` })).status).toBe(401);

      const upload = await ssh(bobKey, `git-lfs-authenticate ${priv} upload`);
      expect({ code: upload.code, stderr: upload.stderr }).toEqual({
        code: 1,
        stderr: expect.stringMatching(new RegExp(`^Anvil: User: ${bob.user.id}:${bob.name} with Key: \\d+:\\S+ is not authorized to write to ${priv}\\.\\n$`)),
      });
      const verb = await ssh(bobKey, `git-lfs-authenticate ${priv} delete`);
      expect({ code: verb.code, stderr: verb.stderr }).toEqual({ code: 1, stderr: 'Anvil: Unknown LFS verb\n' });
      const transfer = await ssh(bobKey, `git-lfs-transfer ${priv} upload`);
      expect({ code: transfer.code, stderr: transfer.stderr }).toEqual({ code: 1, stderr: 'Anvil: Unknown git command\n' });
      const carol = await makeUser(t);
      const carolKey = generateSshKey(client.home, 'carol');
      await t.http.post(t.api('/user/keys')).set(withToken(carol.token)).send({ title: 'carol', key: carolKey.publicLine });
      const hidden = await ssh(carolKey, `git-lfs-authenticate ${priv} download`);
      expect({ code: hidden.code, stderr: hidden.stderr }).toEqual({ code: 1, stderr: `Anvil: Cannot find repository: ${priv}\n` });
    });

    it('the real client pushes and clones LFS objects over SSH', async () => {
      const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('sshlfs') })).name}`;
      const env = { GIT_SSH_COMMAND: sshCommand(aliceKey.privateKey) };
      const content = randomBytes(300 * 1024);
      const work = await client.workingCopy('main', {});
      await client.ok(['lfs', 'install', '--local'], { cwd: work });
      await client.ok(['lfs', 'track', '*.dat'], { cwd: work });
      fs.writeFileSync(path.join(work, 'model.dat'), content);
      await client.ok(['add', '.gitattributes', 'model.dat'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'model'], { cwd: work });
      await client.ok(['push', sshUrl(repo), 'main:main'], { cwd: work, env });
      expect(await rows(sha256(content))).toBe(1);
      const clone = path.join(client.home, uniqueName('sshclone'));
      await client.ok(['-c', 'filter.lfs.process=git-lfs filter-process', '-c', 'filter.lfs.required=true', 'clone', '--quiet', sshUrl(repo), clone], { env });
      expect(Buffer.compare(fs.readFileSync(path.join(clone, 'model.dat')), content)).toBe(0);
    });
  });
});

/** Waits for a condition the server reaches on its own (no fixed delay); fails with `what` if it never does. */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let attempt = 0; attempt < 500; attempt++) {
    if (condition()) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`never happened: ${what}`);
}

/** The body as bytes, whatever its content type. */
function bytes(request: import('supertest').Test): import('supertest').Test {
  return request.buffer(true).parse((response, done) => {
    const chunks: Buffer[] = [];
    response.on('data', (chunk: Buffer) => chunks.push(chunk));
    response.on('end', () => done(null, Buffer.concat(chunks)));
  });
}
