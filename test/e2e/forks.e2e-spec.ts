import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeOrg, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, regularFileBytes, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { execFileSync } from 'node:child_process';
import { dump } from '../../src/backup/backup';
import { unpack } from '../../src/backup/restore';
import { Reconciliation } from '../../src/integrity/reconciliation.service';
import { startTestApp, TestApp } from '../support/test-app';

describe('forks: one object pool per network, forks that survive their source', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let dave: TestUser;
  const as = (user: TestUser) => withToken(user.token);

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    [alice, bob, carol, dave] = await Promise.all([makeUser(t), makeUser(t), makeUser(t), makeUser(t)]);
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  const poolsDir = () => path.join(t.dataDir, 'repositories', '.pools');
  const pools = () => (fs.existsSync(poolsDir()) ? fs.readdirSync(poolsDir()) : []);
  const url = (user: TestUser, fullName: string) => withCredentials(base, `${fullName}.git`, user.name, user.password);

  /** Clones `fullName` afresh over HTTP and runs `git fsck --full` on the clone and on the repository on disk. */
  async function cloneAndCheck(user: TestUser, fullName: string): Promise<string> {
    const dir = path.join(client.home, uniqueName('clone'));
    await client.ok(['clone', '--quiet', '--mirror', url(user, fullName), dir]);
    await client.ok(['fsck', '--full', '--strict'], { cwd: dir });
    const [owner, name] = fullName.split('/');
    git(repositoryDir(t.dataDir, owner, name), 'fsck', '--full');
    return git(dir, 'for-each-ref', '--format=%(objectname) %(refname)');
  }

  async function pushCommits(user: TestUser, fullName: string, branch: string, files: Record<string, string>, force = false): Promise<string> {
    const work = await client.workingCopy(branch, files);
    await client.ok(['push', '--quiet', ...(force ? ['--force'] : []), url(user, fullName), `HEAD:refs/heads/${branch}`], { cwd: work });
    return (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  }

  it('forks by writing refs into a shared pool, counts, syncs, and survives force-push, gc and deletion of its sources', async () => {
    const source = (await t.http.post(t.api('/user/repos')).set(as(alice)).send({ name: 'upstream', auto_init: true }).expect(201)).body;
    const upstream = `${alice.name}/upstream`;
    // Some history of its own: two branches and a tag, with enough content to measure.
    const big = Array.from({ length: 4000 }, (_, i) => `line ${i} ${'x'.repeat(40)}`).join('\n');
    await pushCommits(alice, upstream, 'feature', { 'big.txt': big, 'b.txt': 'b\n' });
    const main = (
      await t.http
        .get(t.api(`/repos/${upstream}/branches/main`))
        .set(as(alice))
        .expect(200)
    ).body.commit.id;
    await t.http
      .post(t.api(`/repos/${upstream}/tags`))
      .set(as(alice))
      .send({ tag_name: 'v1', target: 'feature' })
      .expect(201);

    // Anonymous callers must sign in; a bad name is refused before anything is made.
    await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .send({})
      .expect(401);
    await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(bob))
      .send({ name: 'bad name' })
      .expect(422);
    await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(bob))
      .send({ organization: 'no-such-org' })
      .expect(422);
    const aliceOrg = await makeOrg(t, alice.user);
    const notMember = await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(bob))
      .send({ organization: aliceOrg.name })
      .expect(403);
    expect(notMember.body.message).toBe(`User is no Member of Organisation '${aliceOrg.name}'`);
    expect(pools()).toEqual([]);

    const forked = await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(bob))
      .send({})
      .expect(202);
    expect(forked.body).toMatchObject({ full_name: `${bob.name}/upstream`, fork: true, private: false, default_branch: 'main', empty: false });
    expect(forked.body.parent).toMatchObject({ id: source.id, full_name: upstream, fork: false, parent: null });
    const bobFork = `${bob.name}/upstream`;
    const bobDir = repositoryDir(t.dataDir, bob.name, 'upstream');

    // Forking wrote refs, not objects: the fork holds no object of its own and reaches the pool.
    expect(pools()).toHaveLength(1);
    expect(fs.readFileSync(path.join(bobDir, 'objects', 'info', 'alternates'), 'utf8').trim()).toBe(`../../../.pools/${pools()[0]}`.concat('/objects'));
    expect(git(bobDir, 'count-objects', '-v')).toMatch(/^count: 0$[\s\S]*^packs: 0$/m);
    expect(git(bobDir, 'rev-parse', 'refs/heads/main', 'refs/heads/feature', 'refs/tags/v1').split('\n')[0]).toBe(main);
    // Its size counts what it reaches as if it were its own: about the source's, though stored once.
    const ownKiB = Math.floor(regularFileBytes(bobDir) / 1024);
    expect(forked.body.size).toBeGreaterThan(ownKiB);
    expect(forked.body.size).toBeGreaterThanOrEqual(Math.floor(source.size));

    // One fork per owner and source, whatever the name; and a name that is taken is a conflict too.
    const again = await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(bob))
      .send({ name: 'other' })
      .expect(409);
    expect(again.body.message).toContain('repository is already forked by user');
    await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(alice))
      .send({})
      .expect(409);

    // Two forks by one owner at once: one 202, one 409 (a unique constraint decides).
    const both = await Promise.all([
      t.http
        .post(t.api(`/repos/${upstream}/forks`))
        .set(as(dave))
        .send({ name: 'one' }),
      t.http
        .post(t.api(`/repos/${upstream}/forks`))
        .set(as(dave))
        .send({ name: 'two' }),
    ]);
    expect(both.map((response) => response.status).sort()).toEqual([202, 409]);
    const daveFork = `${dave.name}/${both.find((response) => response.status === 202)!.body.name}`;

    // A fork of the fork shares the same pool; parent is one level.
    const chained = await t.http
      .post(t.api(`/repos/${bobFork}/forks`))
      .set(as(carol))
      .send({ name: 'chained' })
      .expect(202);
    expect(chained.body.parent).toMatchObject({ full_name: bobFork, parent: null });
    const carolFork = `${carol.name}/chained`;
    expect(pools()).toHaveLength(1);

    const upstreamNow = (await t.http.get(t.api(`/repos/${upstream}`)).expect(200)).body;
    expect(upstreamNow.forks_count).toBe(2);
    const listed = await t.http
      .get(t.api(`/repos/${upstream}/forks`))
      .query({ limit: 1 })
      .expect(200);
    expect(listed.headers['x-total-count']).toBe('2');
    expect(listed.body.map((repo: { full_name: string }) => repo.full_name)).toEqual([bobFork]);

    // Bob pushes to his fork; alice moves main forward: the fork is one behind and syncs by fast-forward.
    const bobOwn = await pushCommits(bob, bobFork, 'bob-work', { 'bob.txt': 'bob\n' });
    const work = path.join(client.home, uniqueName('work'));
    await client.ok(['clone', '--quiet', url(alice, upstream), work]);
    fs.writeFileSync(path.join(work, 'next.txt'), 'next\n');
    await client.ok(['add', 'next.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'next'], { cwd: work });
    await client.ok(['push', '--quiet', 'origin', 'main'], { cwd: work });
    const next = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    const info = await t.http
      .get(t.api(`/repos/${bobFork}/sync_fork`))
      .set(as(bob))
      .expect(200);
    expect(info.body).toEqual({ allowed: true, fork_commit: main, base_commit: next, commits_behind: 1 });
    await t.http
      .post(t.api(`/repos/${bobFork}/sync_fork`))
      .set(as(carol))
      .expect(403);
    await t.http
      .post(t.api(`/repos/${bobFork}/sync_fork/main`))
      .set(as(bob))
      .expect(204);
    expect(git(bobDir, 'rev-parse', 'refs/heads/main').trim()).toBe(next);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${bobFork}/sync_fork/main`))
          .set(as(bob))
          .expect(200)
      ).body,
    ).toEqual({ allowed: false, fork_commit: next, base_commit: next, commits_behind: 0 });

    // Alice rewrites her history and collects her garbage: nothing a fork reaches may go.
    await pushCommits(alice, upstream, 'main', { 'other.txt': 'unrelated\n' }, true);
    await client.ok(['push', '--quiet', url(alice, upstream), ':refs/heads/feature', ':refs/tags/v1'], { cwd: work });
    const upstreamDir = repositoryDir(t.dataDir, alice.name, 'upstream');
    git(upstreamDir, '-c', 'gc.reflogExpire=now', '-c', 'gc.reflogExpireUnreachable=now', 'gc', '--quiet', '--prune=now');
    // Diverged now: the sync is refused.
    expect(
      (
        await t.http
          .get(t.api(`/repos/${bobFork}/sync_fork`))
          .set(as(bob))
          .expect(200)
      ).body.allowed,
    ).toBe(false);
    await t.http
      .post(t.api(`/repos/${bobFork}/sync_fork`))
      .set(as(bob))
      .expect(400);
    for (const fork of [bobFork, carolFork, daveFork]) await cloneAndCheck(fork === carolFork ? carol : fork === daveFork ? dave : bob, fork);

    // The source goes: its forks are detached and keep every object they reach.
    await t.http
      .delete(t.api(`/repos/${upstream}`))
      .set(as(alice))
      .expect(204);
    const detached = (
      await t.http
        .get(t.api(`/repos/${bobFork}`))
        .set(as(bob))
        .expect(200)
    ).body;
    expect(detached).toMatchObject({ fork: false, parent: null, forks_count: 1 });
    expect((await t.http.get(t.api(`/repos/${carolFork}`)).expect(200)).body.parent).toMatchObject({ full_name: bobFork });
    const refs = await cloneAndCheck(bob, bobFork);
    expect(refs).toContain(`${next} refs/heads/main`);
    expect(refs).toContain(`${bobOwn} refs/heads/bob-work`);
    expect(refs).toContain('refs/tags/v1');
    // Its size stays what it would cost alone.
    expect(detached.size).toBeGreaterThanOrEqual(Math.floor(source.size));

    // The middle of a chain goes: the end keeps working; the pool goes with the last member.
    await t.http
      .delete(t.api(`/repos/${bobFork}`))
      .set(as(bob))
      .expect(204);
    expect((await t.http.get(t.api(`/repos/${carolFork}`)).expect(200)).body).toMatchObject({ fork: false, parent: null });
    await cloneAndCheck(carol, carolFork);
    expect(pools()).toHaveLength(1);
    await t.http
      .delete(t.api(`/repos/${carolFork}`))
      .set(as(carol))
      .expect(204);
    expect(pools()).toHaveLength(1);
    await t.http
      .delete(t.api(`/repos/${daveFork}`))
      .set(as(dave))
      .expect(204);
    expect(pools()).toEqual([]);
  });

  it('syncs a fork as a push: the fork branch protection judges it, and it is recorded with its push event', async () => {
    await t.http.post(t.api('/user/repos')).set(as(alice)).send({ name: 'synced', auto_init: true }).expect(201);
    const upstream = `${alice.name}/synced`;
    await t.http
      .post(t.api(`/repos/${upstream}/forks`))
      .set(as(dave))
      .send({})
      .expect(202);
    const fork = `${dave.name}/synced`;
    const before = (
      await t.http
        .get(t.api(`/repos/${fork}/branches/main`))
        .set(as(dave))
        .expect(200)
    ).body.commit.id;
    await t.http
      .post(t.api(`/repos/${fork}/hooks`))
      .set(as(dave))
      .send({ type: 'forgejo', active: true, events: ['push'], config: { url: 'http://hooks.example.com/sync', content_type: 'json' } })
      .expect(201);
    const work = path.join(client.home, uniqueName('work'));
    await client.ok(['clone', '--quiet', url(alice, upstream), work]);
    fs.writeFileSync(path.join(work, 'ahead.txt'), 'ahead\n');
    await client.ok(['add', 'ahead.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'ahead'], { cwd: work });
    await client.ok(['push', '--quiet', 'origin', 'main'], { cwd: work });
    const after = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();

    // A rule on the fork's main that lets nobody push refuses the sync too, and the branch stays.
    await t.http
      .post(t.api(`/repos/${fork}/branch_protections`))
      .set(as(dave))
      .send({ rule_name: 'main', enable_push: false })
      .expect(201);
    const refused = await t.http
      .post(t.api(`/repos/${fork}/sync_fork`))
      .set(as(dave))
      .expect(403);
    expect(refused.body.message).toMatch(/protected/);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${fork}/branches/main`))
          .set(as(dave))
          .expect(200)
      ).body.commit.id,
    ).toBe(before);

    await t.http
      .delete(t.api(`/repos/${fork}/branch_protections/main`))
      .set(as(dave))
      .expect(204);
    await t.http
      .post(t.api(`/repos/${fork}/sync_fork`))
      .set(as(dave))
      .expect(204);
    const events: { event: string; payload: string }[] = await t.dataSource.query("SELECT event, payload FROM webhook_event WHERE event = 'push'");
    const pushes = events.map((row) => JSON.parse(row.payload)).filter((payload) => payload.repository.full_name === fork);
    expect(pushes.map((payload) => ({ ref: payload.ref, before: payload.before, after: payload.after, pusher: payload.pusher.login }))).toEqual([
      { ref: 'refs/heads/main', before, after, pusher: dave.name },
    ]);
  });

  it('keeps forks of private sources private, lists only visible forks, and decrements forks_count', async () => {
    const org = await makeOrg(t, alice.user);
    const secret = `${alice.name}/secret`;
    await t.http.post(t.api('/user/repos')).set(as(alice)).send({ name: 'secret', private: true, auto_init: true }).expect(201);
    // No access: the source does not exist for them.
    await t.http
      .post(t.api(`/repos/${secret}/forks`))
      .set(as(bob))
      .send({})
      .expect(404);
    // A reader may fork.
    await t.http
      .put(t.api(`/repos/${secret}/collaborators/${bob.name}`))
      .set(as(alice))
      .send({ permission: 'read' })
      .expect(204);
    const fork = await t.http
      .post(t.api(`/repos/${secret}/forks`))
      .set(as(bob))
      .send({ name: 'mine' })
      .expect(202);
    expect(fork.body).toMatchObject({ private: true, fork: true, parent: { full_name: secret } });
    // Into an organisation where alice may create repositories.
    const inOrg = await t.http
      .post(t.api(`/repos/${secret}/forks`))
      .set(as(alice))
      .send({ organization: org.name })
      .expect(202);
    expect(inOrg.body).toMatchObject({ full_name: `${org.name}/secret`, private: true });
    // While it has its private source, a fork cannot be published.
    const edited = await t.http
      .patch(t.api(`/repos/${bob.name}/mine`))
      .set(as(bob))
      .send({ private: false })
      .expect(200);
    expect(edited.body.private).toBe(true);

    expect(
      (
        await t.http
          .get(t.api(`/repos/${secret}`))
          .set(as(alice))
          .expect(200)
      ).body.forks_count,
    ).toBe(2);
    const seenByBob = await t.http
      .get(t.api(`/repos/${secret}/forks`))
      .set(as(bob))
      .expect(200);
    expect(seenByBob.body.map((repo: { full_name: string }) => repo.full_name)).toEqual([`${bob.name}/mine`]);
    expect(seenByBob.headers['x-total-count']).toBe('1');

    // A mode=fork search finds forks only; mode=source leaves them out.
    const forksFound = await t.http.get(t.api('/repos/search')).set(as(bob)).query({ mode: 'fork', q: 'mine' }).expect(200);
    expect(forksFound.body.data.map((repo: { full_name: string }) => repo.full_name)).toEqual([`${bob.name}/mine`]);
    const sourcesFound = await t.http.get(t.api('/repos/search')).set(as(bob)).query({ mode: 'source', q: 'mine' }).expect(200);
    expect(sourcesFound.body.data).toEqual([]);

    await t.http
      .delete(t.api(`/repos/${bob.name}/mine`))
      .set(as(bob))
      .expect(204);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${secret}`))
          .set(as(alice))
          .expect(200)
      ).body.forks_count,
    ).toBe(1);
    // Renaming the source keeps the parent right.
    await t.http
      .patch(t.api(`/repos/${secret}`))
      .set(as(alice))
      .send({ name: 'renamed' })
      .expect(200);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${org.name}/secret`))
          .set(as(alice))
          .expect(200)
      ).body.parent.full_name,
    ).toBe(`${alice.name}/renamed`);
    await cloneAndCheck(alice, `${org.name}/secret`);
  });

  it('doctor quarantines a pool no repository names, leaves pools in use alone, and dump carries them', async () => {
    await t.http.post(t.api('/user/repos')).set(as(carol)).send({ name: 'pooled', auto_init: true }).expect(201);
    await t.http
      .post(t.api(`/repos/${carol.name}/pooled/forks`))
      .set(as(dave))
      .send({})
      .expect(202);
    const inUse = pools();
    expect(inUse.length).toBeGreaterThan(0);
    fs.mkdirSync(path.join(poolsDir(), 'orphan-0.git', 'objects'), { recursive: true });
    const report = await t.app.get(Reconciliation).run({ fix: true, allStale: true });
    const found = report.findings.filter((finding) => finding.kind === 'pool-without-members');
    expect(found.map((finding) => finding.subject)).toEqual([path.join('repositories', '.pools', 'orphan-0.git')]);
    expect(pools().sort()).toEqual([...inUse].sort());
    await cloneAndCheck(dave, `${dave.name}/pooled`);
    // A dump holds every pool in use beside the repositories, so that a restore gives forks their objects back.
    const archive = path.join(client.home, 'dump.tar.gz');
    await dump(t.dataSource, t.config, archive);
    const listed = execFileSync('tar', ['-tzf', archive], { encoding: 'utf8' });
    for (const pool of inUse) expect(listed).toContain(`./repositories/.pools/${pool}/objects/`);
    expect(listed).toContain(`./repositories/${dave.name.toLowerCase()}/pooled.git/objects/info/alternates`);
    // Unpacked into another DATA_DIR, the fork is complete: its alternates name the pool relative to itself.
    const elsewhere = path.join(client.home, uniqueName('restored'));
    const database = t.config.database.type === 'sqlite' ? { ...t.config.database, file: path.join(elsewhere, 'anvil.db') } : t.config.database;
    await unpack({ dataDir: elsewhere, database, ssh: { ...t.config.ssh, hostKeyFile: path.join(elsewhere, 'ssh', 'host_key') } }, archive);
    const restoredFork = repositoryDir(elsewhere, dave.name, 'pooled');
    git(restoredFork, 'fsck', '--full');
    const copy = path.join(client.home, uniqueName('restored-clone'));
    await client.ok(['clone', '--quiet', '--mirror', '--no-local', restoredFork, copy]);
    await client.ok(['fsck', '--full', '--strict'], { cwd: copy });
    expect(git(copy, 'for-each-ref', '--format=%(objectname) %(refname)')).toBe(
      git(repositoryDir(t.dataDir, dave.name, 'pooled'), 'for-each-ref', '--format=%(objectname) %(refname)'),
    );
  });
});
