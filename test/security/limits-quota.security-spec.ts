import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import { GitClient, withCredentials } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { makeRepo, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';
import { recordFigures } from './figures';

/**
 * Quota under concurrency, sign-in under concurrency and the external-asset open redirect. The attackers are bounded (a fixed number of requests, each of a fixed size) and every assertion
 * is about what the server did (statuses, what it stored), never about how fast.
 */

const KIB = 1024;
const MIB = 1024 * KIB;

/** An upload that announces its body with `Expect: 100-continue` and sends it only when told to. */
interface HeldUpload {
  /** 'continue' when the server asked for the body, else the final status it answered instead. */
  outcome: Promise<'continue' | number>;
  /** Sends the body (after 'continue') and resolves with the final status. */
  send(): Promise<number>;
  /** Drops the request (a test that failed before sending its body must not leave it open). */
  abort(): void;
}

function heldUpload(base: URL, method: string, path: string, headers: Record<string, string>, body: Buffer): HeldUpload {
  let finalStatus: (status: number) => void = () => undefined;
  const final = new Promise<number>((resolve) => (finalStatus = resolve));
  const request = http.request({
    host: base.hostname,
    port: Number(base.port),
    method,
    path,
    headers: { ...headers, 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length), Expect: '100-continue' },
  });
  const outcome = new Promise<'continue' | number>((resolve, reject) => {
    request.on('continue', () => resolve('continue'));
    request.on('response', (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
      response.on('end', () => finalStatus(response.statusCode ?? 0));
    });
    request.on('error', reject);
  });
  request.flushHeaders();
  return {
    outcome,
    send: () => {
      request.end(body);
      return final;
    },
    abort: () => request.destroy(),
  };
}

describe('quota holds under concurrent writes (H4)', () => {
  let t: TestApp;
  let base: URL;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ QUOTA_ENABLED: 'true', ATTACHMENT_MAX_SIZE: '8MiB', PACKAGE_MAX_SIZE: '8MiB' });
    base = new URL(await t.listen());
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  async function limitedUser(limit: number, subjects: string[]): Promise<TestUser> {
    const user = await makeUser(t);
    const group = uniqueName('group');
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({
        name: group,
        rules: [
          { name: uniqueName('rule'), limit, subjects },
          { name: uniqueName('rule'), limit: -1, subjects: ['size:all'] },
        ],
      })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/${group}/users/${user.name}`))
      .set(withToken(admin.token))
      .expect(204);
    return user;
  }

  /** Eight uploads announced at once, every one held until all eight have been answered 100 or refused. */
  async function race(uploads: HeldUpload[]): Promise<number[]> {
    const outcomes = await Promise.all(uploads.map((upload) => upload.outcome));
    return Promise.all(uploads.map((upload, index) => (outcomes[index] === 'continue' ? upload.send() : Promise.resolve(outcomes[index] as number))));
  }

  it('8 concurrent release attachments of 600 KiB against a 1 MiB limit: at most one stored over the limit', async () => {
    const carol = await limitedUser(MIB, ['size:assets:attachments:releases']);
    const repo = await makeRepo(t, carol, { autoInit: true });
    const release = await t.http
      .post(t.api(`/repos/${repo.full_name}/releases`))
      .set(withToken(carol.token))
      .send({ tag_name: 'v1' })
      .expect(201);
    const body = Buffer.alloc(600 * KIB, 7);
    const statuses = await race(
      Array.from({ length: 8 }, (_, index) =>
        heldUpload(base, 'POST', `/api/v1/repos/${repo.full_name}/releases/${release.body.id}/assets?name=part${index}.bin`, withToken(carol.token), body),
      ),
    );
    const stored = (
      await t.http
        .get(t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets`))
        .set(withToken(carol.token))
        .expect(200)
    ).body as { size: number }[];
    const used = stored.reduce((sum, asset) => sum + asset.size, 0);
    recordFigures('quota race: attachments', {
      created: statuses.filter((status) => status === 201).length,
      refused: statuses.filter((status) => status === 413).length,
      usedBytes: used,
    });
    // Sequentially two are stored (the second starts below the limit); concurrently no more.
    expect(statuses.filter((status) => status === 201)).toHaveLength(2);
    expect(statuses.filter((status) => status === 413)).toHaveLength(6);
    expect(used).toBe(2 * 600 * KIB);
    // Nothing stays reserved: once a stored file is deleted, there is room for one more.
    const assets = (await t.http.get(t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets`)).set(withToken(carol.token))).body as {
      id: number;
    }[];
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets/${assets[0].id}`))
      .set(withToken(carol.token))
      .expect(204);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets/${assets[1].id}`))
      .set(withToken(carol.token))
      .expect(204);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets?name=again.bin`))
      .set(withToken(carol.token))
      .set('Content-Type', 'application/octet-stream')
      .send(body)
      .expect(201);
  });

  it('a push while an upload holds the rest of the quota is refused; once the upload is done, pushes are capped by what is left', async () => {
    const gina = await limitedUser(MIB, ['size:all']);
    const repo = await makeRepo(t, gina);
    const release = await makeRepo(t, gina, { autoInit: true });
    const published = await t.http
      .post(t.api(`/repos/${release.full_name}/releases`))
      .set(withToken(gina.token))
      .send({ tag_name: 'v1' })
      .expect(201);
    // The upload is admitted (its 1 MiB reserved) and holds its body back.
    const held = heldUpload(
      base,
      'POST',
      `/api/v1/repos/${release.full_name}/releases/${published.body.id}/assets?name=big.bin`,
      withToken(gina.token),
      Buffer.alloc(MIB, 3),
    );
    expect(await held.outcome).toBe('continue');
    const client = new GitClient();
    try {
      const work = await client.workingCopy('main', { 'README.md': 'hello\n' });
      const url = withCredentials(base.href, `${repo.full_name}.git`, gina.name, gina.password);
      const refused = await client.run(['push', url, 'main'], { cwd: work });
      expect(refused.code).not.toBe(0);
      expect(refused.stderr).toContain('Anvil: Quota exceeded');
      expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).set(withToken(gina.token))).body.empty).toBe(true);
      // The upload completes (the one write that crosses the limit), and then nothing more is accepted.
      expect(await held.send()).toBe(201);
      const after = await client.run(['push', url, 'main'], { cwd: work });
      expect(after.stderr).toContain('Anvil: Quota exceeded');
    } finally {
      held.abort();
      client.dispose();
    }
  });

  it('8 concurrent generic package files of 600 KiB against a 1 MiB limit: at most one stored over the limit', async () => {
    const dave = await limitedUser(MIB, ['size:assets:packages:all']);
    const statuses = await race(
      Array.from({ length: 8 }, (_, index) =>
        heldUpload(base, 'PUT', `/api/packages/${dave.name}/generic/tool/1.${index}/tool.bin`, withToken(dave.token), Buffer.alloc(600 * KIB, index + 1)),
      ),
    );
    expect(statuses.filter((status) => status === 201)).toHaveLength(2);
    expect(statuses.filter((status) => status === 413)).toHaveLength(6);
    const listed = (
      await t.http
        .get(t.api(`/packages/${dave.name}`))
        .set(withToken(dave.token))
        .expect(200)
    ).body as unknown[];
    expect(listed).toHaveLength(2);
  });
});

describe('sign-in limits hold under concurrent attempts (H7)', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_IP: '8', RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '1000000' });
  });
  afterAll(() => t.close());

  it('24 concurrent wrong passwords from one address against a limit of 8: 8 are checked, 16 refused 429 without a check', async () => {
    const victim = await makeUser(t);
    const statuses = await Promise.all(
      Array.from({ length: 24 }, (_, index) =>
        t.http
          .get(t.api('/user'))
          .set(withBasic(victim.name, `guess-${index}`))
          .then((answer) => answer.status),
      ),
    );
    recordFigures('sign-in race', {
      unauthorized: statuses.filter((status) => status === 401).length,
      limited: statuses.filter((status) => status === 429).length,
    });
    expect(statuses.filter((status) => status === 401)).toHaveLength(8);
    expect(statuses.filter((status) => status === 429)).toHaveLength(16);
  });
});

describe("one client's flood of sign-ins does not queue others behind it (H7)", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_IP: '1000000', RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '1000000' });
  });
  afterAll(() => t.close());

  it('a right password sent behind 40 queued wrong ones for another account is answered before most of them', async () => {
    const { kdfLoad } = await import('../../src/auth/secrets');
    const target = await makeUser(t);
    const honest = await makeUser(t);
    const finished: string[] = [];
    const flood = Array.from({ length: 40 }, (_, index) =>
      t.http
        .get(t.api('/user'))
        .set(withBasic(target.name, `guess-${index}`))
        .then((answer) => {
          finished.push(`flood ${answer.status}`);
        }),
    );
    // Readiness, not time: the flood is in the derivation queue before the honest sign-in is sent.
    while (kdfLoad().pending < 20) await new Promise((resolve) => setTimeout(resolve, 5));
    const signedIn = t.http
      .get(t.api('/user'))
      .set(withBasic(honest.name, honest.password))
      .then((answer) => {
        finished.push(`honest ${answer.status}`);
      });
    await Promise.all([...flood, signedIn]);
    const position = finished.indexOf('honest 200');
    recordFigures('sign-in fairness', { floodAnsweredBeforeHonest: position });
    expect(position).toBeGreaterThanOrEqual(0);
    // First come, first served would answer every queued guess first (position >= 20).
    expect(position).toBeLessThan(10);
  });
});

/** Polls `condition` every 50 ms for at most `limitMs` (a bound on a broken server, never a measurement). */
async function eventually(condition: () => boolean, limitMs = 30_000): Promise<boolean> {
  const ends = Date.now() + limitMs;
  while (!condition()) {
    if (Date.now() > ends) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

describe('migrations are admitted, budgeted and stopped with their caller (H5)', () => {
  let t: TestApp;
  let client: GitClient;
  let stall: GitUpstream;
  let open: GitUpstream;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp({
      ALLOW_LOCAL_NETWORKS: 'true',
      QUOTA_ENABLED: 'true',
      MIGRATION_MAX_CONCURRENCY: '4',
      MIGRATION_MAX_PER_USER: '2',
      MIGRATION_QUEUE_TIMEOUT: '2',
      MIRROR_MAX_PER_USER: '1',
    });
    await t.listen();
    client = new GitClient();
    stall = await GitUpstream.start({ kind: 'stall' });
    open = await GitUpstream.start();
    admin = await makeUser(t, { admin: true });
  });
  afterAll(async () => {
    await Promise.all([stall.close(), open.close()]);
    client.dispose();
    await t.close();
  });

  async function seed(name: string, files: Record<string, string>): Promise<void> {
    await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'main', open.dir(name)]);
    const work = await client.workingCopy('main', files);
    await client.ok(['push', '--quiet', open.dir(name), 'main:main'], { cwd: work });
  }

  it("one user's 6 migrations from a stalling source: 2 clone, 4 wait and get 503; the 2 stop when their callers leave", async () => {
    const mallory = await makeUser(t);
    const server = t.app.getHttpServer() as http.Server;
    const port = (server.address() as { port: number }).port;
    const answers: number[] = [];
    const requests = Array.from({ length: 6 }, (_, index) => {
      const body = JSON.stringify({ clone_addr: stall.url(`slow${index}`), repo_name: uniqueName('slow') });
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/api/v1/repos/migrate',
        headers: { ...withToken(mallory.token), 'Content-Type': 'application/json', 'Content-Length': String(Buffer.byteLength(body)) },
      });
      request.on('response', (response) => {
        answers.push(response.statusCode ?? 0);
        response.resume();
      });
      request.on('error', () => undefined);
      request.end(body);
      return request;
    });
    // The four beyond MIGRATION_MAX_PER_USER wait for a turn and are refused when the wait ends.
    expect(await eventually(() => answers.length >= 4)).toBe(true);
    expect(answers).toEqual([503, 503, 503, 503]);
    // Only two clones ever reached the source.
    const reached = new Set(stall.seen.map((seen) => seen.url.split('/')[1]));
    recordFigures('migration admission', { sourcesReached: reached.size, refused: answers.length });
    expect(reached.size).toBe(2);
    // Their callers leave: the clones are stopped (their connections to the source close), long before the
    // clone's own 600 s limit.
    for (const request of requests) request.destroy();
    expect(await eventually(() => stall.stallsClosedByClient >= 2)).toBe(true);
    // And the user's turns are free again.
    await seed('after', { 'README.md': 'hello\n' });
    await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(mallory.token))
      .send({ clone_addr: open.url('after'), repo_name: uniqueName('after') })
      .expect(201);
  });

  it("a migration larger than the owner's remaining quota is stopped (413) and leaves nothing", async () => {
    const erin = await makeUser(t);
    const group = uniqueName('group');
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: group, rules: [{ name: uniqueName('rule'), limit: 200 * KIB, subjects: ['size:repos:all'] }] })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/${group}/users/${erin.name}`))
      .set(withToken(admin.token))
      .expect(204);
    await seed('big', { 'noise.bin': randomBytes(2 * MIB).toString('base64') });
    const name = uniqueName('big');
    const refused = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(erin.token))
      .send({ clone_addr: open.url('big'), repo_name: name });
    expect(refused.status).toBe(413);
    await t.http
      .get(t.api(`/repos/${erin.name}/${name}`))
      .set(withToken(erin.token))
      .expect(404);
    // A small one fits.
    await seed('small', { 'README.md': 'small\n' });
    await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(erin.token))
      .send({ clone_addr: open.url('small'), repo_name: uniqueName('small') })
      .expect(201);
  });

  it('MIRROR_MAX_PER_USER caps the pull mirrors an owner may have', async () => {
    const frank = await makeUser(t);
    await seed('mirrored', { 'README.md': 'm\n' });
    await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(frank.token))
      .send({ clone_addr: open.url('mirrored'), repo_name: uniqueName('m'), mirror: true })
      .expect(201);
    const second = await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(frank.token))
      .send({ clone_addr: open.url('mirrored'), repo_name: uniqueName('m'), mirror: true });
    expect(second.status).toBe(403);
    expect(second.body.message).toMatch(/limit of 1 pull mirrors/);
    // A plain copy is not a mirror.
    await t.http
      .post(t.api('/repos/migrate'))
      .set(withToken(frank.token))
      .send({ clone_addr: open.url('mirrored'), repo_name: uniqueName('copy') })
      .expect(201);
  });
});

describe('external release assets (open redirect)', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  it('redirects only to an absolute http(s) link, and says where; any other stored value is 404', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const release = await t.http
      .post(t.api(`/repos/${repo.full_name}/releases`))
      .set(withToken(owner.token))
      .send({ tag_name: 'v1' })
      .expect(201);
    const assets = t.api(`/repos/${repo.full_name}/releases/${release.body.id}/assets`);
    const link = await t.http.post(assets).set(withToken(owner.token)).field('external_url', 'https://downloads.example.com/tool.tgz').expect(201);
    const forged = await t.http.post(assets).set(withToken(owner.token)).field('external_url', 'https://downloads.example.com/other.tgz').expect(201);
    // Values that no API accepts but a stored row might hold (an older version, a restore, a direct edit): never
    // followed through an Anvil URL.
    for (const stored of ['//evil.example/phish', '/user/settings', 'javascript:alert(1)', 'ftp://evil.example/x', '\\\\evil.example']) {
      await t.dataSource.query('UPDATE attachment SET external_url = ? WHERE uuid = ?', [stored, forged.body.uuid]);
      const answer = await t.http.get(`/attachments/${forged.body.uuid}`);
      expect(`${stored} → ${answer.status} ${answer.headers.location ?? ''}`).toBe(`${stored} → 404 `);
    }
    // An http(s) link is redirected to, and the answer names it.
    const followed = await t.http.get(`/attachments/${link.body.uuid}`).expect(302);
    expect(followed.headers.location).toBe('https://downloads.example.com/tool.tgz');
    expect(followed.text).toContain('https://downloads.example.com/tool.tgz');
    expect(followed.headers['cache-control']).toBe('no-store');
  });
});
