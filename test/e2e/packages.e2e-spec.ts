import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { createHash, randomBytes } from 'node:crypto';
import { makeOrg, makeToken, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

function storedFiles(dataDir: string): string[] {
  const found: string[] = [];
  for (const area of ['packages', path.join('tmp', 'uploads')]) {
    const root = path.join(dataDir, area);
    if (!fs.existsSync(root)) continue;
    for (const entry of fs.readdirSync(root, { recursive: true, withFileTypes: true })) if (entry.isFile()) found.push(path.join(entry.parentPath, entry.name));
  }
  return found;
}

function binary(response: NodeJS.ReadableStream, callback: (error: Error | null, body: Buffer) => void): void {
  const chunks: Buffer[] = [];
  response.on('data', (chunk: Buffer) => chunks.push(chunk));
  response.on('end', () => callback(null, Buffer.concat(chunks)));
}

describe('generic packages', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ PACKAGE_MAX_SIZE: '6MiB' });
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const generic = (owner: string, name: string, version: string, file?: string) =>
    `/api/packages/${owner}/generic/${name}/${version}${file === undefined ? '' : `/${encodeURIComponent(file)}`}`;
  const put = (url: string, content: Buffer, auth: Record<string, string> = withToken(alice.token)) =>
    t.http.put(url).set(auth).set('Content-Type', 'application/octet-stream').send(content);

  it('publishes 0 bytes, 1 byte and 5 MiB with token or Basic auth, refuses a second upload (409), and downloads byte-identical with ranges', async () => {
    const name = uniqueName('pkg');
    const big = randomBytes(5 * 1024 * 1024);
    await put(generic(alice.name, name, '1.0.0', 'zero.bin'), Buffer.alloc(0)).expect(201);
    await put(generic(alice.name, name, '1.0.0', 'one.bin'), Buffer.from('1'), withBasic(alice.name, alice.token)).expect(201);
    const created = await put(generic(alice.name, name, '1.0.0', 'big.tar.gz'), big, withBasic(alice.name, alice.password)).expect(201);
    expect(created.text).toBe('');
    const again = await put(generic(alice.name, name, '1.0.0', 'big.tar.gz'), Buffer.from('other')).expect(409);
    expect(again.text).toBe('package file already exists');

    const got = await t.http
      .get(generic(alice.name, name, '1.0.0', 'big.tar.gz'))
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    expect(Buffer.compare(got.body as Buffer, big)).toBe(0);
    expect(got.headers['content-length']).toBe(String(big.length));
    expect(got.headers['content-disposition']).toBe('attachment; filename="big.tar.gz"');
    const ranged = await t.http
      .get(generic(alice.name, name, '1.0.0', 'big.tar.gz'))
      .set('Range', 'bytes=-10')
      .buffer(true)
      .parse(binary as never)
      .expect(206);
    expect(Buffer.compare(ranged.body as Buffer, big.subarray(big.length - 10))).toBe(0);
    const empty = await t.http
      .get(generic(alice.name, name, '1.0.0', 'zero.bin'))
      .buffer(true)
      .parse(binary as never)
      .expect(200);
    expect((empty.body as Buffer).length).toBe(0);

    const files = await t.http.get(t.api(`/packages/${alice.name}/generic/${name}/1.0.0/files`)).expect(200);
    const bigFile = files.body.find((file: { name: string }) => file.name === 'big.tar.gz');
    expect(bigFile).toMatchObject({
      Size: big.length,
      md5: createHash('md5').update(big).digest('hex'),
      sha1: createHash('sha1').update(big).digest('hex'),
      sha256: createHash('sha256').update(big).digest('hex'),
      sha512: createHash('sha512').update(big).digest('hex'),
    });
    const view = await t.http.get(t.api(`/packages/${alice.name}/generic/${name}/1.0.0`)).expect(200);
    expect(view.body).toMatchObject({
      type: 'generic',
      name,
      version: '1.0.0',
      repository: null,
      html_url: `http://anvil.test/${alice.name}/-/packages/generic/${name}/1.0.0`,
    });
    expect(view.body.owner.login).toBe(alice.name);
    expect(view.body.creator.login).toBe(alice.name);
  });

  it('validates names, versions and file names as Forgejo (400)', async () => {
    await put(generic(alice.name, '..', '1', 'a'), Buffer.from('x')).expect(400);
    await put(generic(alice.name, 'bad name', '1', 'a'), Buffer.from('x')).expect(400);
    await put(generic(alice.name, 'ok', '1', ' lead'), Buffer.from('x')).expect(400);
    await put(generic(alice.name, 'ok', '%201', 'a'), Buffer.from('x')).expect(400);
    expect(storedFiles(t.dataDir).some((file) => file.includes('uploads'))).toBe(false);
  });

  it('two concurrent uploads of the same file: one 201, one 409, one file kept', async () => {
    const name = uniqueName('race');
    const [a, b] = await Promise.all([
      put(generic(alice.name, name, '1', 'f.bin'), randomBytes(256 * 1024)),
      put(generic(alice.name, name, '1', 'f.bin'), randomBytes(256 * 1024)),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    const files = await t.http.get(t.api(`/packages/${alice.name}/generic/${name}/1/files`)).expect(200);
    expect(files.body).toHaveLength(1);
    const kept = (a.status === 201 ? a : b).request;
    expect(kept).toBeDefined();
    // Only the winner's content is on disk: every stored blob is named by the sha256 of some file row.
    const rows: { sha256: string }[] = await t.dataSource.query('SELECT sha256 FROM package_blob');
    const onDisk = storedFiles(t.dataDir).map((file) => path.basename(file));
    expect(onDisk.sort()).toEqual(rows.map((row) => row.sha256).sort());
  });

  it('stores identical content once; usage counts it once; deletions free it when the last file goes', async () => {
    const owner = await makeUser(t);
    const content = randomBytes(1000);
    const auth = withToken(owner.token);
    await put(generic(owner.name, 'shared', '1', 'a.bin'), content, auth).expect(201);
    await put(generic(owner.name, 'shared', '2', 'a.bin'), content, auth).expect(201);
    await put(generic(owner.name, 'other', '1', 'b.bin'), Buffer.alloc(10), auth).expect(201);
    const sha = createHash('sha256').update(content).digest('hex');
    expect(storedFiles(t.dataDir).filter((file) => path.basename(file) === sha)).toHaveLength(1);
    const quota = await t.http.get(t.api('/user/quota')).set(auth).expect(200);
    expect(quota.body.used.size.assets.packages.all).toBe(1010);
    const list = await t.http.get(t.api('/user/quota/packages')).set(auth).expect(200);
    expect(list.headers['x-total-count']).toBe('3');
    expect(list.body.map((item: { name: string; version: string; size: number }) => [item.name, item.version, item.size])).toEqual([
      ['shared', '1', 1000],
      ['shared', '2', 1000],
      ['other', '1', 10],
    ]);
    expect(list.body[0]).toEqual({
      name: 'shared',
      type: 'generic',
      version: '1',
      size: 1000,
      html_url: `http://anvil.test/${owner.name}/-/packages/generic/shared/1`,
    });
    const listed = await t.http.get(t.api(`/packages/${owner.name}?type=generic&q=SHA`)).expect(200);
    expect(listed.body.map((item: { version: string }) => item.version).sort()).toEqual(['1', '2']);
    expect((await t.http.get(t.api(`/packages/${owner.name}?type=npm`)).expect(200)).body).toEqual([]);

    await t.http
      .delete(generic(owner.name, 'shared', '1', 'a.bin'))
      .set(auth)
      .expect(204);
    expect(storedFiles(t.dataDir).filter((file) => path.basename(file) === sha)).toHaveLength(1);
    await t.http.get(t.api(`/packages/${owner.name}/generic/shared/1`)).expect(404);
    await t.http
      .delete(generic(owner.name, 'shared', '2'))
      .set(auth)
      .expect(204);
    expect(storedFiles(t.dataDir).filter((file) => path.basename(file) === sha)).toHaveLength(0);
    await t.http
      .delete(t.api(`/packages/${owner.name}/generic/other/1`))
      .set(auth)
      .expect(204);
    expect((await t.http.get(t.api('/user/quota')).set(auth)).body.used.size.assets.packages.all).toBe(0);
    expect((await t.http.get(t.api('/user/quota/packages')).set(auth)).body).toEqual([]);
  });

  it('a user who owns packages cannot be deleted (422, as Forgejo) until they are gone', async () => {
    const owner = await makeUser(t);
    await put(generic(owner.name, 'keep', '1', 'k.bin'), Buffer.from('k'), withToken(owner.token)).expect(201);
    const refused = await t.http
      .delete(t.api(`/admin/users/${owner.name}`))
      .set(withToken(admin.token))
      .expect(422);
    expect(refused.body.message).toBe(`user still has ownership of packages [uid: ${owner.user.id}]`);
    await t.http
      .delete(generic(owner.name, 'keep', '1'))
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .delete(t.api(`/admin/users/${owner.name}`))
      .set(withToken(admin.token))
      .expect(204);
  });

  it('quota: 413 before any byte is stored', async () => {
    const owner = await makeUser(t);
    const group = uniqueName('g');
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: group, rules: [{ name: uniqueName('r'), limit: 0, subjects: ['size:assets:packages:all'] }] })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/${group}/users/${owner.name}`))
      .set(withToken(admin.token))
      .expect(204);
    const before = storedFiles(t.dataDir).length;
    await put(generic(owner.name, 'p', '1', 'f'), Buffer.alloc(100), withToken(owner.token)).expect(413);
    expect(storedFiles(t.dataDir).length).toBe(before);
    expect(Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM package WHERE owner_id = ${owner.user.id}`))[0].n)).toBe(0);
  });

  it('over PACKAGE_MAX_SIZE is 413; a cut-off upload leaves no file and no row', async () => {
    const before = storedFiles(t.dataDir).length;
    await put(generic(alice.name, 'huge', '1', 'f'), Buffer.alloc(6 * 1024 * 1024 + 1)).expect(413);
    const base = await t.listen();
    await new Promise<void>((resolve) => {
      const req = http.request(new URL(`api/packages/${alice.name}/generic/cut/1/f.bin`, base), {
        method: 'PUT',
        headers: { Authorization: `token ${alice.token}`, 'Content-Length': String(4 * 1024 * 1024) },
      });
      req.on('error', () => resolve());
      req.write(Buffer.alloc(1024 * 1024), () =>
        setTimeout(() => {
          req.destroy();
          resolve();
        }, 200),
      );
    });
    for (let i = 0; i < 100 && storedFiles(t.dataDir).length !== before; i++) await new Promise((r) => setTimeout(r, 50));
    expect(storedFiles(t.dataDir).length).toBe(before);
    await t.http.get(t.api(`/packages/${alice.name}/generic/cut/1`)).expect(404);
  });

  it('Expect: 100-continue is answered only once auth, access and quota passed', async () => {
    const base = await t.listen();
    const send = (auth: string, file: string) =>
      new Promise<{ status: number; continued: boolean }>((resolve, reject) => {
        let continued = false;
        const req = http.request(new URL(`api/packages/${alice.name}/generic/expect/1/${file}`, base), {
          method: 'PUT',
          headers: { Authorization: auth, 'Content-Length': '5', Expect: '100-continue' },
        });
        req.on('continue', () => {
          continued = true;
          req.end('hello');
        });
        req.on('response', (response) => {
          response.resume();
          response.on('end', () => resolve({ status: response.statusCode!, continued }));
          if (!continued) req.destroy();
        });
        req.on('error', (error) => (continued ? reject(error) : undefined));
        req.flushHeaders();
      });
    expect(await send(`token ${bob.token}`, 'a.bin')).toEqual({ status: 403, continued: false });
    expect(await send(`token ${alice.token}`, 'a.bin')).toEqual({ status: 201, continued: true });
    expect(await send(`token ${alice.token}`, 'a.bin')).toEqual({ status: 409, continued: false });
  });

  it('permissions: anonymous 401 with a Basic challenge, others 403, scopes, org owners publish, visibility as the owner', async () => {
    const anon = await t.http
      .put(generic(alice.name, 'p', '1', 'f'))
      .send(Buffer.from('x'))
      .expect(401);
    expect(anon.headers['www-authenticate']).toBe('Basic realm="Gitea Package API"');
    await put(generic(alice.name, 'p', '1', 'f'), Buffer.from('x'), withToken(bob.token)).expect(403);
    const readOnly = await makeToken(t, alice.user, ['read:package']);
    await put(generic(alice.name, 'p', '1', 'f'), Buffer.from('x'), withToken(readOnly)).expect(403);
    const noPackage = await makeToken(t, alice.user, ['write:repository']);
    await t.http
      .get(t.api(`/packages/${alice.name}`))
      .set(withToken(noPackage))
      .expect(403);

    const org = await makeOrg(t, alice.user, { visibility: 'private' } as never);
    await put(generic(org.name, 'o', '1', 'f'), Buffer.from('org'), withToken(alice.token)).expect(201);
    await put(generic(org.name, 'o', '1', 'g'), Buffer.from('org'), withToken(bob.token)).expect(404);
    await t.http.get(generic(org.name, 'o', '1', 'f')).expect(401);
    await t.http
      .get(generic(org.name, 'o', '1', 'f'))
      .set(withToken(bob.token))
      .expect(404);
    await t.http
      .get(t.api(`/packages/${org.name}`))
      .set(withToken(bob.token))
      .expect(404);
    await t.http
      .get(generic(org.name, 'o', '1', 'f'))
      .set(withToken(alice.token))
      .expect(200);
    await t.http
      .get(generic(org.name, 'o', '1', 'f'))
      .set(withToken(admin.token))
      .expect(200);
    await t.http
      .delete(t.api(`/packages/${alice.name}/generic/p/1`))
      .set(withToken(bob.token))
      .expect(403);
    await t.http.get(generic(alice.name, 'nope', '1', 'f')).expect(404);
  });
});
