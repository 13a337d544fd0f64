import { execFile, execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { GitClient, withCredentials } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { git, regularFileBytes, repositoryDir } from '../support/git';
import { AnvilInstance, ROOT } from './support/anvil-instance';
import { GaleraCluster } from './support/galera-cluster';
import { NginxGateway } from './support/nginx-gateway';
import { freePorts, waitFor } from './support/ports';

const run = promisify(execFile);

/**
 * Active-active on a replicated database: a three-node MariaDB Galera cluster, two Anvil instances on one
 * DATA_DIR (A on node 1, B on node 2, each with the other nodes as fail-over), nginx round-robin in front.
 * Every check goes through the gateway or straight to one instance, and waits for readiness, never for time.
 */
describe('two instances on a Galera cluster behind nginx', () => {
  let root: string;
  let dataDir: string;
  let cluster: GaleraCluster;
  let a: AnvilInstance;
  let b: AnvilInstance;
  let gateway: NginxGateway;
  let adminToken: string;
  const client = new GitClient();

  const auth = (token: string) => ({ Authorization: `token ${token}` });
  const json = (token: string) => ({ ...auth(token), 'Content-Type': 'application/json' });
  const api = (base: string, route: string) => `${base}/api/v1${route}`;
  const basic = (name: string) => ({ Authorization: `Basic ${Buffer.from(`${name}:correct-horse-battery`).toString('base64')}` });

  async function call(base: string, method: string, route: string, token?: string, body?: unknown): Promise<{ status: number; body: any; upstream?: string }> {
    const response = await fetch(api(base, route), {
      method,
      headers: token ? (body === undefined ? auth(token) : json(token)) : body === undefined ? {} : { 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: response.status, body: parsed, upstream: response.headers.get('x-upstream') ?? undefined };
  }

  async function makeUser(base: string, name: string): Promise<string> {
    const created = await call(base, 'POST', '/admin/users', adminToken, {
      username: name,
      email: `${name}@example.com`,
      password: 'correct-horse-battery',
      must_change_password: false,
    });
    if (created.status !== 201) throw new Error(`user ${name}: ${created.status} ${JSON.stringify(created.body)}`);
    const response = await fetch(api(base, `/users/${name}/tokens`), {
      method: 'POST',
      headers: { ...basic(name), 'Content-Type': 'application/json' },
      body: JSON.stringify({ name: 'cluster', scopes: ['all'] }),
    });
    const token = (await response.json()) as { sha1: string };
    if (response.status !== 201) throw new Error(`token of ${name}: ${response.status}`);
    return token.sha1;
  }

  beforeAll(async () => {
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cluster-'));
    fs.chmodSync(root, 0o755);
    dataDir = path.join(root, 'data');
    cluster = await GaleraCluster.start(path.join(root, 'galera'));
    // The application's user has no SUPER: the settings the README lists make its triggers possible.
    await cluster.query(0, 'CREATE DATABASE anvil CHARACTER SET utf8mb4 COLLATE utf8mb4_bin');
    await cluster.query(0, "CREATE USER 'anvil'@'127.0.0.1' IDENTIFIED BY 'anvil-db-password'");
    await cluster.query(0, "GRANT ALL ON anvil.* TO 'anvil'@'127.0.0.1'");
    const [portA, portB, portGateway] = await freePorts(3);
    const env = (first: number): Record<string, string> => ({
      DATA_DIR: dataDir,
      DATABASE_URL: cluster.url('anvil', 'anvil-db-password', 'anvil', first),
      ROOT_URL: 'http://anvil.test/',
      LOG_LEVEL: 'warn',
      SSH_ENABLED: 'false',
      RATE_LIMIT_STORE: 'database',
      RATE_LIMIT_SIGN_IN_PER_IP: '1000000',
      RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '1000000',
      RATE_LIMIT_TOKEN_CREATION: '1000000',
      RATE_LIMIT_KEY_UPLOAD: '20',
      ALLOW_LOCAL_NETWORKS: 'true',
      // Longer than nginx's fail_timeout (2 s): an instance just restarted is tried again by the gateway before the
      // other one stops listening, so a rolling restart never leaves the gateway with both marked down.
      SHUTDOWN_DELAY: '3',
    });
    a = new AnvilInstance('A', portA, env(0));
    b = new AnvilInstance('B', portB, env(1));
    gateway = new NginxGateway(path.join(root, 'nginx'), portGateway, [portA, portB]);
  }, 600_000);

  afterAll(async () => {
    client.dispose();
    await gateway?.stop();
    await a?.kill();
    await b?.kill();
    await cluster?.stop();
    fs.rmSync(root, { recursive: true, force: true });
  }, 120_000);

  it('both instances start at once on the empty database: both serve, every migration ran once', async () => {
    a.start();
    b.start();
    await Promise.all([a.ready(), b.ready()]);
    const migrations = (await cluster.query(2, 'SELECT name, COUNT(*) AS n FROM anvil.migrations GROUP BY name HAVING n > 1')) as unknown[];
    expect(migrations).toEqual([]);
    await gateway.start();
    const { stdout } = await run(
      process.execPath,
      [
        path.join(ROOT, 'dist', 'src', 'cli', 'main.js'),
        'admin',
        'user',
        'create',
        '--username',
        'root-admin',
        '--password',
        'correct-horse-battery',
        '--email',
        'admin@example.com',
        '--admin',
        '--access-token',
      ],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH, DATA_DIR: dataDir, DATABASE_URL: cluster.url('anvil', 'anvil-db-password', 'anvil', 2), LOG_LEVEL: 'warn' },
      },
    );
    adminToken = stdout.trim().split('\n').pop()!.trim();
    expect(adminToken).toMatch(/^[0-9a-f]{40}$/);
  });

  it('a write acknowledged by one instance is seen by the next request on the other', async () => {
    for (let round = 0; round < 15; round++) {
      const [writer, reader] = round % 2 === 0 ? [a, b] : [b, a];
      const name = `ryw${round}`;
      // A user created on one is signed in on the other at once; a repository created on one is there on the other.
      const token = await makeUser(writer.url, name);
      expect((await call(reader.url, 'GET', '/user', token)).status).toBe(200);
      expect((await call(writer.url, 'POST', '/user/repos', token, { name: 'fresh', auto_init: true })).status).toBe(201);
      expect((await call(reader.url, 'GET', `/repos/${name}/fresh`, token)).status).toBe(200);
    }
  });

  it('token revocation, key deletion and the admin and login flags are seen by the other instance at once', async () => {
    const token = await makeUser(a.url, 'flags');
    const tokens = await call(a.url, 'GET', '/users/flags/tokens', token);
    execFileSync('ssh-keygen', ['-t', 'ed25519', '-N', '', '-q', '-f', path.join(root, 'flags-key')]);
    const publicKey = fs.readFileSync(path.join(root, 'flags-key.pub'), 'utf8').trim();
    const key = await call(b.url, 'POST', '/user/keys', token, { title: 'k', key: publicKey });
    expect(key.status).toBe(201);
    expect((await call(a.url, 'DELETE', `/user/keys/${key.body.id}`, token)).status).toBe(204);
    expect((await call(b.url, 'GET', `/user/keys/${key.body.id}`, token)).status).toBe(404);
    expect((await call(a.url, 'PATCH', '/admin/users/flags', adminToken, { admin: true })).status).toBe(200);
    expect((await call(b.url, 'GET', '/admin/users', token)).status).toBe(200);
    expect((await call(b.url, 'PATCH', '/admin/users/flags', adminToken, { admin: false, prohibit_login: true })).status).toBe(200);
    expect((await call(a.url, 'GET', '/user', token)).status).toBe(403);
    expect((await call(a.url, 'PATCH', '/admin/users/flags', adminToken, { prohibit_login: false })).status).toBe(200);
    expect((await call(b.url, 'GET', '/user', token)).status).toBe(200);
    const revoked = await fetch(api(b.url, `/users/flags/tokens/${tokens.body[0].id}`), { method: 'DELETE', headers: basic('flags') });
    expect(revoked.status).toBe(204);
    expect((await call(a.url, 'GET', '/user', token)).status).toBe(401);
  });

  it('counters are exact after concurrent stars and watches spread over both instances', async () => {
    const owner = await makeUser(a.url, 'starred');
    expect((await call(a.url, 'POST', '/user/repos', owner, { name: 'popular' })).status).toBe(201);
    const fans = await Promise.all(Array.from({ length: 24 }, (_, index) => makeUser(index % 2 ? a.url : b.url, `fan${index}`)));
    const outcomes = await Promise.all(
      fans.flatMap((token, index) => [
        call(index % 2 ? b.url : a.url, 'PUT', '/user/starred/starred/popular', token).then((response) => response.status),
        call(index % 2 ? a.url : b.url, 'PUT', '/repos/starred/popular/subscription', token).then((response) => response.status),
      ]),
    );
    expect(outcomes.filter((status) => status >= 300)).toEqual([]);
    const repo = await call(gateway.url, 'GET', '/repos/starred/popular', owner);
    expect([repo.body.stars_count, repo.body.watchers_count]).toEqual([24, 25]);
  });

  it('same-name creations at once over both instances: one 201, the rest 409, one directory', async () => {
    const token = await makeUser(b.url, 'racer');
    const statuses = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        call(index % 2 ? a.url : b.url, 'POST', '/user/repos', token, { name: 'contested', auto_init: true }).then((response) => response.status),
      ),
    );
    expect(statuses.sort()).toEqual([201, ...Array(9).fill(409)]);
    expect(fs.existsSync(path.join(repositoryDir(dataDir, 'racer', 'contested'), 'HEAD'))).toBe(true);
  });

  it('concurrent pushes to one repository over both instances: all accepted, exact size, git fsck clean', async () => {
    const token = await makeUser(a.url, 'pusher');
    expect((await call(a.url, 'POST', '/user/repos', token, { name: 'busy', auto_init: true })).status).toBe(201);
    const branches = Array.from({ length: 6 }, (_, index) => `b${index}`);
    const copies = await Promise.all(
      branches.map((branch) => client.workingCopy(branch, { [`${branch}.txt`]: `${branch} ${'y'.repeat(5000)}\n`, [`${branch}-2.txt`]: `${branch}\n` })),
    );
    const outcomes = await Promise.all(
      copies.map((dir, index) =>
        client.run(
          ['push', '--quiet', withCredentials(`${index % 2 ? a.url : b.url}/`, 'pusher/busy.git', 'pusher', token), `${branches[index]}:${branches[index]}`],
          { cwd: dir },
        ),
      ),
    );
    expect(outcomes.map((outcome) => [outcome.code, /internal error/.test(outcome.stderr)])).toEqual(branches.map(() => [0, false]));
    const dir = repositoryDir(dataDir, 'pusher', 'busy');
    const [row] = (await cluster.query(1, "SELECT git_size FROM anvil.repository WHERE lower_name = 'busy'")) as { git_size: number }[];
    expect(Number(row.git_size)).toBe(regularFileBytes(dir));
    expect(() => git(dir, 'fsck', '--strict', '--no-progress')).not.toThrow();
  });

  it('a protection rule made on one instance judges the next push on the other; a racing push is judged whole', async () => {
    const token = await makeUser(a.url, 'guard');
    expect((await call(a.url, 'POST', '/user/repos', token, { name: 'guarded', auto_init: true })).status).toBe(201);
    const work = await client.workingCopy('main', { 'notes.txt': 'release notes\n' });
    const remote = (instance: AnvilInstance) => withCredentials(`${instance.url}/`, 'guard/guarded.git', 'guard', token);
    const rule = { rule_name: 'rel-*', enable_push: false };
    const dir = repositoryDir(dataDir, 'guard', 'guarded');
    const branches = () =>
      new Set(execFileSync('git', ['for-each-ref', '--format=%(refname:short)', 'refs/heads/'], { cwd: dir, encoding: 'utf8' }).split('\n').filter(Boolean));

    const first = await call(a.url, 'POST', '/repos/guard/guarded/branch_protections', token, rule);
    expect(first.status).toBe(201);
    const refused = await client.run(['push', '--quiet', remote(b), 'HEAD:rel-first'], { cwd: work });
    expect([refused.code !== 0, /Anvil: Not allowed to push to protected branch rel-first/.test(refused.stderr)]).toEqual([true, true]);
    expect((await call(b.url, 'DELETE', '/repos/guard/guarded/branch_protections/rel-*', token)).status).toBe(204);
    expect((await client.run(['push', '--quiet', remote(a), 'HEAD:rel-first'], { cwd: work })).code).toBe(0);

    // Each round creates or deletes the rule on one instance while a push of two protected branches goes through
    // the other: the push is refused whole or accepted whole, whichever state of the rule it read.
    for (let round = 0; round < 8; round++) {
      const [writer, pusher] = round % 2 === 0 ? [a, b] : [b, a];
      const change =
        round % 2 === 0
          ? call(writer.url, 'POST', '/repos/guard/guarded/branch_protections', token, rule)
          : call(writer.url, 'DELETE', '/repos/guard/guarded/branch_protections/rel-*', token);
      const [changed, pushed] = await Promise.all([
        change,
        client.run(['push', '--quiet', remote(pusher), `HEAD:rel-r${round}-x`, `HEAD:rel-r${round}-y`], { cwd: work }),
      ]);
      expect(changed.status).toBe(round % 2 === 0 ? 201 : 204);
      const present = branches();
      const landed = [present.has(`rel-r${round}-x`), present.has(`rel-r${round}-y`)];
      expect(landed).toEqual(pushed.code === 0 ? [true, true] : [false, false]);
    }
  });

  it('mirror-sync called on both instances at once fetches once', async () => {
    const upstream = await GitUpstream.start();
    try {
      const source = await client.workingCopy('main', { 'a.txt': 'a\n' });
      execFileSync('git', ['clone', '--quiet', '--bare', source, upstream.dir('origin')]);
      const token = await makeUser(a.url, 'mirrorer');
      const migrated = await call(a.url, 'POST', '/repos/migrate', token, { clone_addr: upstream.url('origin'), repo_name: 'copy', mirror: true });
      expect(migrated.status).toBe(201);
      const fetches = () => upstream.seen.filter((request) => request.url.includes('info/refs')).length;
      const before = fetches();
      const statuses = await Promise.all(
        [a, b].map((instance) => call(instance.url, 'POST', '/repos/mirrorer/copy/mirror-sync', token).then((response) => response.status)),
      );
      expect(statuses).toEqual([200, 200]);
      // Both requests are served once no claim is held and no retry is pending (a busy retry waits 5 s).
      await waitFor('the sync', 120_000, async () => {
        const [mirror] = (await cluster.query(0, 'SELECT claimed_by FROM anvil.mirror m JOIN anvil.repository r ON r.id = m.repo_id WHERE r.lower_name = ?', [
          'copy',
        ])) as { claimed_by: string }[];
        return fetches() > before && mirror.claimed_by === '';
      });
      await new Promise((resolve) => setTimeout(resolve, 7_000));
      expect(fetches() - before).toBe(1);
    } finally {
      await upstream.close();
    }
  });

  it('shared rate limits are exact over both instances', async () => {
    // RATE_LIMIT_KEY_UPLOAD allows 20 key uploads per user per window, counted in the database both instances
    // share: a burst of 32 spread over both passes exactly 20.
    const token = await makeUser(a.url, 'limited');
    const keys = Array.from({ length: 32 }, (_, index) => {
      const file = path.join(root, `limited-${index}`);
      execFileSync('ssh-keygen', ['-t', 'ed25519', '-N', '', '-q', '-f', file]);
      return fs.readFileSync(`${file}.pub`, 'utf8').trim();
    });
    const statuses = await Promise.all(
      keys.map((key, index) => call(index % 2 ? a.url : b.url, 'POST', '/user/keys', token, { title: `k${index}`, key }).then((response) => response.status)),
    );
    // Exactly the limit passes and the rest are refused, whatever Galera aborts (the store retries them).
    expect(statuses.sort()).toEqual([...Array(20).fill(201), ...Array(12).fill(429)]);
  });

  it('quota not exceeded by concurrent uploads over both instances', async () => {
    // 1 MiB of packages for this user; 12 uploads of 300 KiB at once, alternating between A and B. As Forgejo, an
    // upload is allowed while what is used is under the limit; the bytes in flight are claimed in the database both
    // share (src/claims/), so exactly as many pass as one after another would: 0, 300, 600 and 900 KiB are under
    // 1 MiB, the fifth would start at 1200 KiB.
    const token = await makeUser(a.url, 'quota-user');
    const limit = 1024 * 1024;
    const size = 300 * 1024;
    const group = await call(a.url, 'POST', '/admin/quota/groups', adminToken, {
      name: 'cluster-quota',
      rules: [{ name: 'cluster-packages', limit, subjects: ['size:assets:packages:all'] }],
    });
    expect(group.status).toBe(201);
    expect((await call(b.url, 'PUT', '/admin/quota/groups/cluster-quota/users/quota-user', adminToken)).status).toBe(204);
    const statuses = await Promise.all(
      Array.from({ length: 12 }, async (_, index) => {
        const response = await fetch(`${index % 2 ? a.url : b.url}/api/packages/quota-user/generic/filled/1.0.${index}/part.bin`, {
          method: 'PUT',
          headers: { ...auth(token), 'Content-Type': 'application/octet-stream' },
          body: Buffer.alloc(size, index),
        });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    const stored = statuses.filter((status) => status === 201).length;
    expect(statuses.filter((status) => status !== 201 && status !== 413)).toEqual([]);
    expect(stored).toBe(Math.ceil(limit / size));
    // What both instances count as used agrees with what was acknowledged, and stays under the limit.
    for (const base of [a.url, b.url]) {
      const quota = await call(base, 'GET', '/admin/users/quota-user/quota', adminToken);
      expect(quota.status).toBe(200);
      expect(quota.body.used.size.assets.packages.all).toBe(stored * size);
    }
  });

  it("a restart of one instance during the other's upload: the upload completes", async () => {
    const token = await makeUser(b.url, 'uploader');
    expect((await call(b.url, 'POST', '/user/repos', token, { name: 'files', auto_init: true })).status).toBe(201);
    const release = await call(b.url, 'POST', '/repos/uploader/files/releases', token, { tag_name: 'v1', name: 'v1' });
    expect(release.status).toBe(201);
    const boundary = 'cluster-boundary';
    let controller!: ReadableStreamDefaultController<Uint8Array>;
    const body = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
    const upload = fetch(api(b.url, `/repos/uploader/files/releases/${release.body.id}/assets?name=big.bin`), {
      method: 'POST',
      headers: { ...auth(token), 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      body,
      duplex: 'half',
    } as RequestInit);
    controller.enqueue(
      Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="attachment"; filename="big.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    );
    controller.enqueue(Buffer.alloc(256 * 1024, 1));
    // B has started writing the upload into its scratch directory before A restarts.
    await waitFor("B's upload in its scratch directory", 60_000, async () =>
      fs.readdirSync(path.join(dataDir, 'tmp', 'uploads')).some((entry) => fs.readdirSync(path.join(dataDir, 'tmp', 'uploads', entry)).length > 0),
    );
    await a.stop();
    a.start();
    await a.ready();
    controller.enqueue(Buffer.alloc(256 * 1024, 2));
    controller.enqueue(Buffer.from(`\r\n--${boundary}--\r\n`));
    controller.close();
    const response = await upload;
    expect(response.status).toBe(201);
    expect(((await response.json()) as { size: number }).size).toBe(512 * 1024);
  });

  it('kill -9 of one instance under load: no acknowledged write lost, nothing half-made', async () => {
    const token = await makeUser(b.url, 'survivor');
    const acknowledged: string[] = [];
    const failures: number[] = [];
    let stop = false;
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let index = 0; !stop; index++) {
          const name = `w${worker}-${index}`;
          const response = await call(gateway.url, 'POST', '/user/repos', token, { name, auto_init: true }).catch(() => ({ status: 0 }));
          if (response.status === 201) acknowledged.push(name);
          else failures.push(response.status);
        }
      }),
    );
    await waitFor('some writes', 60_000, async () => acknowledged.length >= 8);
    await a.kill();
    const afterKill = acknowledged.length;
    try {
      await waitFor('writes after the kill', 60_000, async () => acknowledged.length >= afterKill + 8);
    } finally {
      stop = true;
      await load;
      a.start();
      await a.ready();
    }
    // Only requests in flight on A when it died may fail (at most one per client; nginx answers 502, or 503 when
    // B met the dead instance's unfinished work); never a 500.
    expect(failures.filter((status) => status !== 502 && status !== 503)).toEqual([]);
    expect(failures.length).toBeLessThanOrEqual(4);
    const listed = new Set<string>();
    for (let page = 1; ; page++) {
      const response = await call(a.url, 'GET', `/users/survivor/repos?limit=50&page=${page}`, token);
      for (const repo of response.body as { name: string }[]) listed.add(repo.name);
      if ((response.body as unknown[]).length < 50) break;
    }
    for (const name of acknowledged) expect(listed.has(name)).toBe(true);
    // Every repository listed has its directory on the shared DATA_DIR.
    for (const name of listed) expect(fs.existsSync(path.join(repositoryDir(dataDir, 'survivor', name), 'HEAD'))).toBe(true);
  });

  it("kill -9 of A's Galera node under load: A moves to a live node, no 500, no acknowledged write lost", async () => {
    const token = await makeUser(a.url, 'nodeloss');
    for (let worker = 0; worker < 4; worker++) expect((await call(b.url, 'POST', '/user/repos', token, { name: `r${worker}` })).status).toBe(201);
    const acknowledged: string[] = [];
    const failures: number[] = [];
    let stop = false;
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let index = 0; !stop; index++) {
          // Straight to A, whose first node dies.
          const response = await call(a.url, 'PUT', `/user/starred/nodeloss/r${worker}`, token).catch(() => ({ status: 0 }));
          if (response.status === 204) acknowledged.push(`${worker}-${index}`);
          else failures.push(response.status);
          const created = await call(a.url, 'POST', '/user/repos', token, { name: `n${worker}-${index}` }).catch(() => ({ status: 0 }));
          if (created.status === 201) acknowledged.push(`n${worker}-${index}`);
          else failures.push(created.status);
        }
      }),
    );
    await waitFor('some writes', 60_000, async () => acknowledged.length >= 8);
    await cluster.killNode(0);
    const afterKill = acknowledged.length;
    await waitFor('writes through another node', 60_000, async () => acknowledged.length >= afterKill + 20);
    stop = true;
    await load;
    expect(failures.filter((status) => status !== 503)).toEqual([]);
    for (const name of acknowledged.filter((entry) => entry.startsWith('n'))) {
      expect((await call(b.url, 'GET', `/repos/nodeloss/${name}`, token)).status).toBe(200);
    }
    await cluster.startNode(0);
    await cluster.waitForSize(3);
  });

  it('a rolling restart of both instances under load through the gateway: zero failed requests', async () => {
    const token = await makeUser(a.url, 'roller');
    expect((await call(a.url, 'POST', '/user/repos', token, { name: 'steady' })).status).toBe(201);
    const failures: string[] = [];
    let answered = 0;
    let stop = false;
    let phase = 'both up';
    const answeredBy = new Set<string>();
    const load = Promise.all(
      Array.from({ length: 4 }, async (_, worker) => {
        for (let index = 0; !stop; index++) {
          const [method, route] = index % 2 === 0 ? ['GET', '/repos/roller/steady'] : [worker % 2 ? 'PUT' : 'DELETE', '/user/starred/roller/steady'];
          const response = await call(gateway.url, method, route, token).catch((error: Error) => ({ status: 0, body: error.message, upstream: undefined }));
          answered += 1;
          // The last address is the instance that answered (the ones before it refused or failed first).
          const answerer = response.upstream?.split(', ').pop();
          if (response.status < 300 && answerer) answeredBy.add(answerer);
          if (response.status >= 300 && response.status !== 404) {
            failures.push(`${new Date().toISOString()} ${phase}: ${method} ${response.status} via ${response.upstream} ${JSON.stringify(response.body)}`);
          }
        }
      }),
    );
    await waitFor('load', 60_000, async () => answered >= 40);
    for (const instance of [a, b]) {
      phase = `${instance.name} stopping`;
      await instance.stop();
      phase = `${instance.name} starting`;
      instance.start();
      await instance.ready();
      phase = `${instance.name} ready`;
      // As an operator's rolling restart does, the next instance stops only once the gateway has taken this one
      // back: a request through it was answered by the restarted instance.
      answeredBy.clear();
      await waitFor(`the gateway sending requests to ${instance.name} again`, 60_000, async () => answeredBy.has(`127.0.0.1:${instance.port}`));
      const seen = answered;
      await waitFor('load after the restart', 60_000, async () => answered >= seen + 40);
    }
    stop = true;
    await load;
    // What the gateway saw is printed with a failure: which upstream refused or failed, and when.
    if (failures.length > 0) console.log(`gateway's log:\n${gateway.errorLog()}\nA:\n${a.log()}\nB:\n${b.log()}`);
    expect(failures).toEqual([]);
  });

  it('throughput: one instance alone, then the gateway over both (bench/cluster.bench.js; every answer a 200)', async () => {
    const token = await makeUser(a.url, 'bencher');
    expect((await call(a.url, 'POST', '/user/repos', token, { name: 'bench', auto_init: true })).status).toBe(201);
    const seconds = process.env.CLUSTER_BENCH_SECONDS ?? '5';
    const figures: Record<string, unknown>[] = [];
    // One instance alone: B stops, so the machine is A's.
    await b.stop();
    for (const [label, url] of [
      ['one instance', a.url],
      ['gateway, two instances', gateway.url],
    ] as const) {
      if (label !== 'one instance') {
        b.start();
        await b.ready();
      }
      const { stdout } = await run(process.execPath, [path.join(ROOT, 'bench', 'cluster.bench.js')], {
        env: { PATH: process.env.PATH, BENCH_URL: url, BENCH_TOKEN: token, BENCH_REPO: 'bencher/bench', BENCH_SECONDS: seconds, BENCH_CONNS: '16' },
      });
      figures.push({ label, ...JSON.parse(stdout.trim()) });
    }
    console.log(`cluster throughput: ${JSON.stringify(figures)}`);
    expect(figures.map((figure) => figure.failures)).toEqual([{}, {}]);
  });
});
