import { createHash, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { dump } from '../../src/backup/backup';
import { assertEmptyDatabase, forgetLiveCoordination, loadMysqlRows, unpack } from '../../src/backup/restore';
import { loadConfig } from '../../src/config/config';
import { Reconciliation } from '../../src/integrity/reconciliation.service';
import { makeRepo, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { createMysqlDatabase, startTestApp, TestApp, usesMysql } from '../support/test-app';
import { pointerFile } from '../../src/lfs/lfs-pointer';

const LFS = 'application/vnd.git-lfs+json';

function sha256(content: Buffer): string {
  return createHash('sha256').update(content).digest('hex');
}

describe('LFS objects in repositories: sizes, /media, forks', () => {
  jest.setTimeout(120_000);
  let t: TestApp;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    await t.listen();
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  /** Uploads `content` as an LFS object of `repo` through the batch API and its upload action. */
  async function upload(repo: string, content: Buffer, user: TestUser = alice): Promise<string> {
    const oid = sha256(content);
    const asked = await t.http
      .post(`/${repo}.git/info/lfs/objects/batch`)
      .set({ ...withBasic(user.name, user.password), Accept: LFS, 'Content-Type': LFS })
      .send(JSON.stringify({ operation: 'upload', objects: [{ oid, size: content.length }] }));
    expect(asked.status).toBe(200);
    const action = JSON.parse(asked.text).objects[0].actions?.upload;
    if (action) {
      const put = await t.http
        .put(new URL(action.href).pathname)
        .set({ ...action.header, 'Content-Type': 'application/octet-stream' })
        .send(content);
      expect(put.status).toBe(200);
    }
    return oid;
  }

  /** Commits `text` as `path` on the default branch through the contents API. */
  async function commitFile(repo: string, path: string, text: string | Buffer): Promise<void> {
    const created = await t.http
      .post(t.api(`/repos/${repo}/contents/${path}`))
      .set(withToken(alice.token))
      .send({ content: Buffer.from(text).toString('base64'), message: `add ${path}` });
    expect(created.status).toBe(201);
  }

  const download = (repo: string, oid: string, size: number, user: TestUser) =>
    t.http
      .post(`/${repo}.git/info/lfs/objects/batch`)
      .set({ ...withBasic(user.name, user.password), Accept: LFS, 'Content-Type': LFS })
      .send(JSON.stringify({ operation: 'download', objects: [{ oid, size }] }));

  it('counts LFS bytes in Repository.size and sorts search by lfs_size and git_size', async () => {
    const big = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('big'), autoInit: true })).name}`;
    const small = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('small'), autoInit: true })).name}`;
    const sizeOf = async (repo: string) =>
      (
        await t.http
          .get(t.api(`/repos/${repo}`))
          .set(withToken(alice.token))
          .expect(200)
      ).body.size as number;
    const before = await sizeOf(big);
    await upload(big, randomBytes(300 * 1024));
    await upload(small, randomBytes(10 * 1024));
    // An object held already adds nothing.
    await upload(big, randomBytes(0));
    expect(await sizeOf(big)).toBe(before + 300);

    const search = async (sort: string, order: string) =>
      (
        await t.http
          .get(t.api(`/repos/search?uid=${alice.user.id}&sort=${sort}&order=${order}&limit=50`))
          .set(withToken(alice.token))
          .expect(200)
      ).body.data.map((repo: { full_name: string }) => repo.full_name);
    const ours = (names: string[]) => names.filter((name) => name === big || name === small);
    expect(ours(await search('lfs_size', 'desc'))).toEqual([big, small]);
    expect(ours(await search('lfs_size', 'asc'))).toEqual([small, big]);
    expect(ours(await search('size', 'desc'))).toEqual([big, small]);
  });

  it('/media answers the object behind a pointer, /raw the pointer; other files and unknown objects as /raw', async () => {
    const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('media'), autoInit: true })).name}`;
    const content = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), randomBytes(5000)]);
    const oid = await upload(repo, content);
    const pointer = pointerFile({ oid, size: content.length });
    await commitFile(repo, 'image.png', pointer);
    const missing = pointerFile({ oid: sha256(Buffer.from('never uploaded')), size: 14 });
    await commitFile(repo, 'missing.bin', missing);
    await commitFile(repo, 'plain.txt', 'just text\n');

    const get = (tail: string, headers: Record<string, string> = {}) =>
      t.http
        .get(t.api(`/repos/${repo}/${tail}`))
        .set({ ...withToken(alice.token), ...headers })
        .buffer(true)
        .parse((response, done) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => done(null, Buffer.concat(chunks)));
        });
    const media = await get('media/image.png');
    expect({ status: media.status, type: media.headers['content-type'], length: media.headers['content-length'], etag: media.headers.etag }).toEqual({
      status: 200,
      type: 'image/png',
      length: String(content.length),
      etag: `"${oid}"`,
    });
    expect(Buffer.compare(media.body as Buffer, content)).toBe(0);
    expect((await get('media/image.png', { 'If-None-Match': `"${oid}"` })).status).toBe(304);
    const raw = await get('raw/image.png');
    expect((raw.body as Buffer).toString()).toBe(pointer);
    expect((await get('media/missing.bin')).body.toString()).toBe(missing);
    expect((await get('media/plain.txt')).body.toString()).toBe('just text\n');
    expect((await get('media/nothing.txt')).status).toBe(404);
  });

  it("a fork holds its source's objects: it serves them, counts them in its size and its owner's quota", async () => {
    const source = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('forked'), autoInit: true })).name}`;
    const content = randomBytes(40 * 1024);
    const oid = await upload(source, content);
    const bob = await makeUser(t);
    const forked = await t.http
      .post(t.api(`/repos/${source}/forks`))
      .set(withToken(bob.token))
      .send({});
    expect(forked.status).toBe(202);
    const fork = forked.body.full_name as string;
    const sourceSize = (
      await t.http
        .get(t.api(`/repos/${source}`))
        .set(withToken(alice.token))
        .expect(200)
    ).body.size as number;
    expect(forked.body.size).toBeGreaterThanOrEqual(40);
    expect(forked.body.size).toBe(
      (
        await t.http
          .get(t.api(`/repos/${fork}`))
          .set(withToken(bob.token))
          .expect(200)
      ).body.size,
    );
    expect(sourceSize).toBeGreaterThanOrEqual(40);

    const answer = JSON.parse((await download(fork, oid, content.length, bob)).text).objects[0];
    expect(answer.actions.download.href).toMatch(new RegExp(`/${fork}\\.git/info/lfs/objects/${oid}$`));
    const fetched = await t.http
      .get(new URL(answer.actions.download.href).pathname)
      .set(answer.actions.download.header)
      .buffer(true)
      .parse((response, done) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => done(null, Buffer.concat(chunks)));
      });
    expect(fetched.status).toBe(200);
    expect(Buffer.compare(fetched.body as Buffer, content)).toBe(0);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(bob.token))).body.used.size.git).toEqual({ LFS: content.length });

    // The source's deletion leaves the fork's objects in place.
    expect((await t.http.delete(t.api(`/repos/${source}`)).set(withToken(alice.token))).status).toBe(204);
    expect(JSON.parse((await download(fork, oid, content.length, bob)).text).objects[0].actions).toBeDefined();
  });

  it("refuses a fork whose LFS objects the forker's quota cannot hold (413), making nothing", async () => {
    const source = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('heavy'), autoInit: true })).name}`;
    await upload(source, randomBytes(3000));
    const admin = await makeUser(t, { admin: true });
    const carol = await makeUser(t);
    const group = uniqueName('grp');
    const rules = [
      { name: uniqueName('rule'), limit: -1, subjects: ['size:all'] },
      { name: uniqueName('rule'), limit: 2000, subjects: ['size:git:lfs'] },
    ];
    expect((await t.http.post(t.api('/admin/quota/groups')).set(withToken(admin.token)).send({ name: group, rules })).status).toBe(201);
    expect((await t.http.put(t.api(`/admin/quota/groups/${group}/users/${carol.name}`)).set(withToken(admin.token))).status).toBe(204);
    const refused = await t.http
      .post(t.api(`/repos/${source}/forks`))
      .set(withToken(carol.token))
      .send({});
    expect({ status: refused.status, message: refused.body.message }).toEqual({ status: 413, message: 'quota exceeded' });
    expect((await t.http.get(t.api(`/repos/${carol.name}/${source.split('/')[1]}`)).set(withToken(carol.token))).status).toBe(404);
  });

  it('doctor moves an object file no repository holds to lost+found once stale, and drops the rows of a lost file', async () => {
    const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('doctor'), autoInit: true })).name}`;
    const kept = randomBytes(100);
    const lost = randomBytes(200);
    const keptOid = await upload(repo, kept);
    const lostOid = await upload(repo, lost);
    const fileOf = (oid: string) => path.join(t.dataDir, 'lfs', oid.slice(0, 2), oid.slice(2, 4), oid);
    // A crash between the rename into place and the row: a file no repository holds.
    const strayOid = sha256(Buffer.from('stray'));
    fs.mkdirSync(path.dirname(fileOf(strayOid)), { recursive: true });
    fs.writeFileSync(fileOf(strayOid), 'stray');
    fs.rmSync(fileOf(lostOid));
    const reconciliation = t.app.get(Reconciliation);
    const ours = (findings: { kind: string; subject: string }[]) =>
      findings
        .filter((finding) => [keptOid, lostOid, strayOid].some((oid) => finding.subject.endsWith(oid)))
        .map((finding) => `${finding.kind} ${finding.subject.slice(-64)}`);

    // Young, the stray file may be an upload whose row is on its way: left alone.
    expect(ours((await reconciliation.run({ fix: false })).findings)).toEqual([`lfs-object-without-file ${lostOid}`]);
    const past = new Date(Date.now() - 2 * 3600_000);
    fs.utimesSync(fileOf(strayOid), past, past);
    const repaired = await reconciliation.run({ fix: true });
    expect(ours(repaired.findings).sort()).toEqual([`blob-without-row ${strayOid}`, `lfs-object-without-file ${lostOid}`].sort());
    expect(fs.existsSync(fileOf(strayOid))).toBe(false);
    expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM lfs_meta_object WHERE oid = ?', [lostOid]))[0].n)).toBe(0);
    const [row] = (await t.dataSource.query('SELECT lfs_size FROM repository WHERE lower_name = ?', [repo.split('/')[1].toLowerCase()])) as {
      lfs_size: number | string;
    }[];
    expect(Number(row.lfs_size)).toBe(kept.length);
    expect(ours((await reconciliation.run({ fix: false })).findings)).toEqual([]);
  });

  it('dump and restore carry the LFS objects: the restored server serves them', async () => {
    const repo = `${alice.name}/${(await makeRepo(t, alice, { name: uniqueName('dumped'), autoInit: true })).name}`;
    const content = randomBytes(64 * 1024);
    const oid = await upload(repo, content);
    await commitFile(repo, 'data.bin', pointerFile({ oid, size: content.length }));
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lfs-dump-'));
    const restoredDir = path.join(work, 'data');
    try {
      const archive = path.join(work, 'dump.tar.gz');
      await dump(t.dataSource, t.config, archive);
      // Only the database's type matters to the unpacking: the restored app brings its own empty database.
      const { manifest, rowsFile } = await unpack(
        loadConfig({ DATA_DIR: restoredDir, ...(usesMysql() ? { DATABASE_URL: 'mysql://root@127.0.0.1/unused' } : {}) }),
        archive,
      );
      // A restore loads into a database its own server created (`anvil restore`): a fresh one, never a pooled one.
      const database = usesMysql() ? await createMysqlDatabase({ fresh: true }) : undefined;
      const restored = await startTestApp({ DATA_DIR: restoredDir, ...(database ? { DATABASE_URL: database.url } : {}) });
      try {
        if (rowsFile) {
          await assertEmptyDatabase(restored.dataSource);
          await loadMysqlRows(restored.dataSource, manifest, rowsFile);
        }
        await forgetLiveCoordination(restored.dataSource);
        await restored.app.get(Reconciliation).run({ fix: true, allStale: true });
        const media = await restored.http
          .get(restored.api(`/repos/${repo}/media/data.bin`))
          .set(withToken(alice.token))
          .buffer(true)
          .parse((response, done) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () => done(null, Buffer.concat(chunks)));
          });
        expect(media.status).toBe(200);
        expect(Buffer.compare(media.body as Buffer, content)).toBe(0);
        const asked = await restored.http
          .post(`/${repo}.git/info/lfs/objects/batch`)
          .set({ ...withBasic(alice.name, alice.password), Accept: LFS, 'Content-Type': LFS })
          .send(JSON.stringify({ operation: 'download', objects: [{ oid, size: content.length }] }));
        expect(JSON.parse(asked.text).objects[0].actions.download).toBeDefined();
      } finally {
        await restored.close();
        await database?.drop();
      }
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
  });
});
