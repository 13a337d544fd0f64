import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { pointerFile } from '../../src/lfs/lfs-pointer';
import { MirrorRunner } from '../../src/mirrors/mirror-runner';
import { makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { LfsUpstream } from '../support/lfs-upstream';
import { startTestApp, TestApp } from '../support/test-app';

const ATTRIBUTES = '*.bin filter=lfs diff=lfs merge=lfs -text\n';

/**
 * Pull mirrors made with `lfs: true` fetch the LFS objects their refs point to, at the migration and at every
 * sync, from the LFS server `lfs_endpoint` names (the test's own, beside a plain git source).
 */
describe('pull mirrors with lfs: true', () => {
  jest.setTimeout(180_000);
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let upstream: GitUpstream;
  let lfs: LfsUpstream;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.mirrors.tickMs = 0;
    });
    base = await t.listen();
    // The LFS routes' links must reach this instance for the real client.
    t.config.rootUrl = base;
    client = new GitClient();
    upstream = await GitUpstream.start();
    lfs = await LfsUpstream.start();
    alice = await makeUser(t);
  });
  afterAll(async () => {
    await lfs?.close();
    await upstream?.close();
    client?.dispose();
    await t?.close();
  });

  const stored = (oid: string) => fs.existsSync(path.join(t.dataDir, 'lfs', oid.slice(0, 2), oid.slice(2, 4), oid));
  const rows = async (oid: string) => Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM lfs_meta_object WHERE oid = ?', [oid]))[0].n);
  const lfsSize = async (repo: string) => Number((await t.dataSource.query('SELECT lfs_size FROM repository WHERE name = ?', [repo]))[0].lfs_size);
  const leftovers = (): string[] => {
    const uploads = path.join(t.dataDir, 'tmp', 'uploads');
    if (!fs.existsSync(uploads)) return [];
    return fs.readdirSync(uploads).flatMap((dir) => fs.readdirSync(path.join(uploads, dir)));
  };
  const forget = () => {
    lfs.batches.splice(0);
    lfs.downloads.splice(0);
  };

  /** Commits pointer files for `objects` (by file name) on the source's `main`. */
  async function commitPointers(work: string, objects: Record<string, { oid: string; size: number }>): Promise<void> {
    for (const [name, pointer] of Object.entries(objects)) fs.writeFileSync(path.join(work, name), pointerFile(pointer));
    await client.ok(['add', ...Object.keys(objects)], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', `add ${Object.keys(objects).join(', ')}`], { cwd: work });
  }

  async function source(name: string): Promise<string> {
    await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'main', upstream.dir(name)]);
    return client.workingCopy('main', { '.gitattributes': ATTRIBUTES });
  }

  const push = (work: string, name: string) => client.ok(['push', '--quiet', upstream.dir(name), 'main:main'], { cwd: work });

  async function sync(repo: string): Promise<void> {
    await t.http
      .post(t.api(`/repos/${alice.name}/${repo}/mirror-sync`))
      .set(withToken(alice.token))
      .expect(200);
    await t.app.get(MirrorRunner).whenIdle();
  }

  /** `git lfs pull` in a clone of the mirror made without LFS content. */
  async function lfsPull(clone: string): Promise<void> {
    await client.ok(['lfs', 'install', '--local'], { cwd: clone });
    await client.ok(['lfs', 'pull'], { cwd: clone });
  }

  it('fetches the objects at the migration and only new ones at a sync; corrupt and disallowed ones are not stored', async () => {
    const name = uniqueName('tool');
    const work = await source(name);
    const a = randomBytes(3000);
    const b = randomBytes(70_000);
    const pa = lfs.add(a);
    const pb = lfs.add(b);
    await commitPointers(work, { 'a.bin': pa, 'b.bin': pb });
    await push(work, name);

    forget();
    const migrated = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(alice.token))
      .send({ clone_addr: upstream.url(name), repo_name: name, mirror: true, lfs: true, lfs_endpoint: lfs.baseUrl });
    expect(migrated.status).toBe(201);
    expect([...lfs.downloads].sort()).toEqual([pa.oid, pb.oid].sort());
    expect(await lfsSize(name)).toBe(a.length + b.length);

    const clone = path.join(client.home, uniqueName('clone'));
    await client.ok(['clone', '--quiet', withCredentials(base, `${alice.name}/${name}.git`, alice.name, alice.password), clone]);
    await lfsPull(clone);
    expect(Buffer.compare(fs.readFileSync(path.join(clone, 'a.bin')), a)).toBe(0);
    expect(Buffer.compare(fs.readFileSync(path.join(clone, 'b.bin')), b)).toBe(0);

    // New objects upstream: a good one, one whose bytes do not hash to its oid, and one whose download link
    // names an address the host policy always refuses (0.0.0.0 would reach this machine).
    const c = randomBytes(5000);
    const d = randomBytes(4000);
    const e = randomBytes(1000);
    const pc = lfs.add(c);
    const pd = lfs.addCorrupt(d);
    const pe = lfs.add(e);
    lfs.linkElsewhere(pe.oid, lfs.baseUrl.replace('127.0.0.1', '0.0.0.0'));
    await commitPointers(work, { 'c.bin': pc, 'd.bin': pd, 'e.bin': pe });
    await push(work, name);

    forget();
    await sync(name);
    // Only the objects the mirror lacks are asked for; the refused link is never followed.
    expect(lfs.batches.flat().sort()).toEqual([pc.oid, pd.oid, pe.oid].sort());
    expect([...lfs.downloads].sort()).toEqual([pc.oid, pd.oid].sort());
    expect(stored(pc.oid)).toBe(true);
    for (const refused of [pd.oid, pe.oid]) {
      expect(stored(refused)).toBe(false);
      expect(await rows(refused)).toBe(0);
    }
    expect(leftovers()).toEqual([]);
    expect(await lfsSize(name)).toBe(a.length + b.length + c.length);

    // The mirror lacks d.bin's and e.bin's objects: the pull leaves pointers, `git lfs pull` fetches what there is.
    await client.ok(['pull', '--quiet', '--ff-only', 'origin', 'main'], { cwd: clone, env: { GIT_LFS_SKIP_SMUDGE: '1' } });
    const pulled = await client.run(['lfs', 'pull'], { cwd: clone });
    expect(pulled.stderr).toContain('Not Found');
    expect(Buffer.compare(fs.readFileSync(path.join(clone, 'c.bin')), c)).toBe(0);
    expect(fs.readFileSync(path.join(clone, 'd.bin'), 'utf8')).toBe(pointerFile(pd));

    // Nothing new: a sync asks for the refused objects again and downloads nothing it holds.
    forget();
    await sync(name);
    expect(lfs.batches.flat().sort()).toEqual([pd.oid, pe.oid].sort());
    expect(lfs.downloads).toEqual([pd.oid]);
  });

  it('fetches at most MIRROR_LFS_MAX_OBJECTS per sync and the rest at the next; without lfs, none', async () => {
    const name = uniqueName('assets');
    const work = await source(name);
    const contents = [randomBytes(1500), randomBytes(2500), randomBytes(3500)];
    const pointers = contents.map((content) => lfs.add(content));
    await commitPointers(work, { 'one.bin': pointers[0], 'two.bin': pointers[1], 'three.bin': pointers[2] });
    await push(work, name);

    const plain = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(alice.token))
      .send({ clone_addr: upstream.url(name), repo_name: `${name}-plain`, mirror: true });
    expect(plain.status).toBe(201);
    forget();
    await sync(`${name}-plain`);
    expect(lfs.batches).toEqual([]);

    const limits = t.config.mirrors;
    limits.lfsMaxObjects = 2;
    try {
      const migrated = await t.http
        .post(t.api('/repos/migrate'))
        .set(withToken(alice.token))
        .send({ clone_addr: upstream.url(name), repo_name: name, mirror: true, lfs: true, lfs_endpoint: lfs.baseUrl });
      expect(migrated.status).toBe(201);
      expect(lfs.downloads.length).toBe(2);
      forget();
      await sync(name);
      expect(lfs.downloads.length).toBe(1);
    } finally {
      limits.lfsMaxObjects = 1000;
    }
    for (const pointer of pointers) expect(stored(pointer.oid)).toBe(true);
    expect(await lfsSize(name)).toBe(contents.reduce((sum, content) => sum + content.length, 0));
  });

  it("counts the objects in the owner's size:git:lfs: a sync whose new objects do not fit fetches none of them", async () => {
    const admin = await makeUser(t, { admin: true });
    const owner = await makeUser(t);
    const group = uniqueName('grp');
    // A rule over git and LFS together as well: the clone's and the fetch's reservations (all that is left)
    // must not leave the objects without room.
    const rules = [
      { name: uniqueName('rule'), limit: 64 * 1024 * 1024, subjects: ['size:git:all'] },
      { name: uniqueName('rule'), limit: 5000, subjects: ['size:git:lfs'] },
    ];
    expect((await t.http.post(t.api('/admin/quota/groups')).set(withToken(admin.token)).send({ name: group, rules })).status).toBe(201);
    expect((await t.http.put(t.api(`/admin/quota/groups/${group}/users/${owner.name}`)).set(withToken(admin.token))).status).toBe(204);

    const name = uniqueName('quota');
    const work = await source(name);
    const first = lfs.add(randomBytes(3000));
    await commitPointers(work, { 'first.bin': first });
    await push(work, name);
    const migrated = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(owner.token))
      .send({ clone_addr: upstream.url(name), repo_name: name, mirror: true, lfs: true, lfs_endpoint: lfs.baseUrl });
    expect(migrated.status).toBe(201);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(owner.token))).body.used.size.git).toEqual({ LFS: 3000 });

    const second = lfs.add(randomBytes(1500));
    const third = lfs.add(randomBytes(1500));
    await commitPointers(work, { 'second.bin': second, 'third.bin': third });
    await push(work, name);
    forget();
    await t.http
      .post(t.api(`/repos/${owner.name}/${name}/mirror-sync`))
      .set(withToken(owner.token))
      .expect(200);
    await t.app.get(MirrorRunner).whenIdle();
    // The refs follow the source; the 3000 new bytes do not fit in the 2000 left, so none is fetched.
    expect((await t.http.get(t.api(`/repos/${owner.name}/${name}/contents/third.bin`)).set(withToken(owner.token))).status).toBe(200);
    expect(lfs.downloads).toEqual([]);
    for (const pointer of [second, third]) expect({ file: stored(pointer.oid), rows: await rows(pointer.oid) }).toEqual({ file: false, rows: 0 });
    expect((await t.http.get(t.api('/user/quota')).set(withToken(owner.token))).body.used.size.git).toEqual({ LFS: 3000 });
  });

  it('leaves no rows behind for a mirror deleted while its sync fetches LFS objects', async () => {
    const name = uniqueName('gone');
    const work = await source(name);
    await push(work, name);
    const migrated = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(alice.token))
      .send({ clone_addr: upstream.url(name), repo_name: name, mirror: true, lfs: true, lfs_endpoint: lfs.baseUrl });
    expect(migrated.status).toBe(201);
    const content = randomBytes(2000);
    const pointer = lfs.add(content);
    await commitPointers(work, { 'late.bin': pointer });
    await push(work, name);

    const held = lfs.hold(pointer.oid);
    await t.http
      .post(t.api(`/repos/${alice.name}/${name}/mirror-sync`))
      .set(withToken(alice.token))
      .expect(200);
    await held.reached;
    await t.http
      .delete(t.api(`/repos/${alice.name}/${name}`))
      .set(withToken(alice.token))
      .expect(204);
    held.release();
    await t.app.get(MirrorRunner).whenIdle();
    expect(await rows(pointer.oid)).toBe(0);
  });
});
