import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { MirrorRunner } from '../../src/mirrors/mirror-runner';
import { MirrorSyncProcedure, SyncOutcome } from '../../src/mirrors/mirror-sync.procedure';
import { makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { repositoryDir } from '../support/git';
import { GitClient } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { startTestApp, TestApp } from '../support/test-app';
import { recordFigures } from './figures';

/**
 * Admission, the parts not covered elsewhere: sign-ins by token are counted before they are
 * checked, the syncs of one owner's mirrors are capped over the whole server, and a sync's fetch has the
 * owner's remaining quota as its byte budget. Attackers are bounded (a fixed number of requests, a source that
 * stalls until the test closes it); the assertions are about what the server did, never how fast.
 */

const MIB = 1024 * 1024;

/** Polls `condition` every 50 ms for at most `limitMs` (a bound on a broken server, never a measurement). */
async function eventually(condition: () => boolean, limitMs = 60_000): Promise<boolean> {
  const ends = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > ends) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('sign-ins by token are counted before they are checked (H7)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_IP: '8', RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '1000000' });
  });
  afterAll(() => t.close());

  it('24 concurrent wrong tokens from one address against a limit of 8: 8 are checked (401), 16 refused 429', async () => {
    const alice = await makeUser(t);
    // A token that verified once is no guess: it keeps working whatever the address's failures.
    expect((await t.http.get(t.api('/user')).set(withToken(alice.token))).status).toBe(200);
    const guesses = Array.from({ length: 24 }, () => randomBytes(20).toString('hex'));
    const statuses = await Promise.all(
      guesses.map((guess) =>
        t.http
          .get(t.api('/user'))
          .set(withToken(guess))
          .then((answer) => answer.status),
      ),
    );
    recordFigures('token sign-in race', {
      unauthorized: statuses.filter((status) => status === 401).length,
      limited: statuses.filter((status) => status === 429).length,
    });
    expect(statuses.filter((status) => status === 401)).toHaveLength(8);
    expect(statuses.filter((status) => status === 429)).toHaveLength(16);
    // The allowance is spent: one more guess is refused, the known token still answers.
    expect((await t.http.get(t.api('/user')).set(withToken(randomBytes(20).toString('hex')))).status).toBe(429);
    expect((await t.http.get(t.api('/user')).set(withToken(alice.token))).status).toBe(200);
  });
});

describe('mirror syncs are capped per owner and budgeted by quota (H5)', () => {
  let t: TestApp;
  let client: GitClient;
  let upstream: GitUpstream;
  let admin: TestUser;
  const outcomes: { repoId: number; outcome: SyncOutcome }[] = [];

  beforeAll(async () => {
    t = await startTestApp({
      ALLOW_LOCAL_NETWORKS: 'true',
      QUOTA_ENABLED: 'true',
      MIRROR_MAX_CONCURRENCY: '4',
      MIRROR_SYNC_MAX_PER_USER: '1',
    });
    await t.listen();
    client = new GitClient();
    upstream = await GitUpstream.start();
    admin = await makeUser(t, { admin: true });
    const procedure = t.app.get(MirrorSyncProcedure);
    const run = procedure.run.bind(procedure);
    jest.spyOn(procedure, 'run').mockImplementation(async (repoId, signal, requestedAt) => {
      const outcome = await run(repoId, signal, requestedAt);
      outcomes.push({ repoId, outcome });
      return outcome;
    });
  });
  afterAll(async () => {
    await upstream.close();
    client.dispose();
    await t.close();
  });

  async function seed(name: string, files: Record<string, string>): Promise<string> {
    await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'main', upstream.dir(name)]);
    const work = await client.workingCopy('main', files);
    await client.ok(['push', '--quiet', upstream.dir(name), 'main:main'], { cwd: work });
    return work;
  }

  async function mirror(user: TestUser, source: string): Promise<{ id: number; name: string }> {
    const name = uniqueName('m');
    const created = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(user.token))
      .send({ clone_addr: upstream.url(source), repo_name: name, mirror: true });
    expect(created.status).toBe(201);
    return { id: created.body.id, name };
  }

  it("a sync larger than the owner's remaining quota is stopped and changes nothing", async () => {
    const ivy = await makeUser(t);
    const group = uniqueName('group');
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: group, rules: [{ name: uniqueName('rule'), limit: MIB, subjects: ['size:all'] }] })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/${group}/users/${ivy.name}`))
      .set(withToken(admin.token))
      .expect(204);
    const source = uniqueName('grow');
    const work = await seed(source, { 'README.md': 'small\n' });
    const { id, name } = await mirror(ivy, source);
    const before = (
      await t.http
        .get(t.api(`/repos/${ivy.name}/${name}/branches/main`))
        .set(withToken(ivy.token))
        .expect(200)
    ).body.commit.id;
    // The source grows by 4 MiB of incompressible data: several times what the owner has left.
    fs.writeFileSync(path.join(work, 'noise.bin'), randomBytes(4 * MIB));
    await client.ok(['add', 'noise.bin'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'noise'], { cwd: work });
    await client.ok(['push', '--quiet', upstream.dir(source), 'main:main'], { cwd: work });
    await t.http
      .post(t.api(`/repos/${ivy.name}/${name}/mirror-sync`))
      .set(withToken(ivy.token))
      .expect(200);
    await t.app.get(MirrorRunner).whenIdle();
    const mine = outcomes.filter((entry) => entry.repoId === id).map((entry) => entry.outcome);
    recordFigures('mirror sync budget', { outcomes: mine.join(',') });
    expect(mine).toContain('failed');
    expect(mine).not.toContain('synced');
    const after = (
      await t.http
        .get(t.api(`/repos/${ivy.name}/${name}/branches/main`))
        .set(withToken(ivy.token))
        .expect(200)
    ).body.commit.id;
    expect(after).toBe(before);
    // Nor are its objects kept: the packs the fetch wrote are gone with it.
    const packs = path.join(repositoryDir(t.dataDir, ivy.name, name), 'objects', 'pack');
    const bytes = fs.readdirSync(packs).reduce((sum, file) => sum + fs.statSync(path.join(packs, file)).size, 0);
    expect(bytes).toBeLessThan(MIB);
  });

  it("MIRROR_SYNC_MAX_PER_USER=1: of one owner's 3 mirrors syncing from a stalling source, 1 fetches and 2 are busy; another owner still fetches", async () => {
    const grace = await makeUser(t);
    const henry = await makeUser(t);
    const sources = [uniqueName('g'), uniqueName('g'), uniqueName('g'), uniqueName('h')];
    for (const source of sources) await seed(source, { 'README.md': `${source}\n` });
    const graces = [];
    for (const source of sources.slice(0, 3)) graces.push(await mirror(grace, source));
    const henrys = await mirror(henry, sources[3]);
    try {
      // From now on the source stalls: a fetch that starts holds its owner's turn until the source is closed.
      upstream.setMode({ kind: 'stall' });
      const seenFrom = upstream.seen.length;
      const reached = () => new Set(upstream.seen.slice(seenFrom).map((seen) => seen.url.split('/')[1].replace(/\.git$/, '')));
      for (const { name } of graces)
        await t.http
          .post(t.api(`/repos/${grace.name}/${name}/mirror-sync`))
          .set(withToken(grace.token))
          .expect(200);
      const graceIds = new Set(graces.map((entry) => entry.id));
      expect(await eventually(() => outcomes.filter((entry) => graceIds.has(entry.repoId) && entry.outcome === 'busy').length >= 2)).toBe(true);
      expect(await eventually(() => reached().size >= 1)).toBe(true);
      // Another owner's mirror is not held back by grace's cap.
      await t.http
        .post(t.api(`/repos/${henry.name}/${henrys.name}/mirror-sync`))
        .set(withToken(henry.token))
        .expect(200);
      expect(await eventually(() => reached().has(sources[3]))).toBe(true);
      const graceReached = [...reached()].filter((source) => sources.slice(0, 3).includes(source));
      recordFigures('mirror sync cap', {
        graceSourcesReached: graceReached.length,
        busy: outcomes.filter((entry) => graceIds.has(entry.repoId) && entry.outcome === 'busy').length,
      });
      expect(graceReached).toHaveLength(1);
    } finally {
      // Closing the stalled responses ends the two fetches in flight.
      upstream.setMode({ kind: 'open' });
      upstream.releaseStalled();
      await t.app.get(MirrorRunner).whenIdle();
    }
  });
});
