import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { adminToken, baseEnv, buildOnce, cli, git, ServerProcess, startServer } from './support/built-server';

/**
 * kill -9 at named points of every write path (ANVIL_FAULT_KILL_AT, src/common/fault-points.ts), on the database
 * TEST_DATABASE names: each round starts the real server armed at one point, acknowledges one write of that path,
 * starts a second one that kills the server, restarts it on the same data and checks that every acknowledged write
 * is there, byte for byte, and that `anvil doctor` finds nothing half-made after the start-up reconciliation.
 */

const ADMIN = 'faults-admin';

interface Round {
  point: string;
  /** Makes the round's write number `n` (1 is acknowledged, 2 is killed); returns the check of an acknowledged one. */
  write(server: ServerProcess, n: number): Promise<Check>;
  /** The restart must have repaired something (the point leaves a leftover by construction). */
  leavesLeftover: boolean;
  /** What the restarted server must still do for the killed write (a delivery sent again, say). */
  afterRestart?: (server: ServerProcess) => Promise<void>;
}

/** Checks an acknowledged write against a (restarted) server. */
type Check = (server: ServerProcess) => Promise<void>;

let token = '';
let round = 0;

function api(server: ServerProcess, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const raw = body instanceof Uint8Array;
  return fetch(`${server.url}${route}`, {
    method,
    headers: {
      Authorization: `token ${token}`,
      ...(body === undefined ? {} : { 'Content-Type': raw ? 'application/octet-stream' : 'application/json' }),
      ...headers,
    },
    body: body === undefined ? undefined : raw ? (body as Uint8Array) : JSON.stringify(body),
  });
}

async function json<T>(response: Promise<Response>, status: number): Promise<T> {
  const answer = await response;
  const text = await answer.text();
  if (answer.status !== status) throw new Error(`${answer.url}: expected ${status}, got ${answer.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

async function createRepository(server: ServerProcess, name: string): Promise<void> {
  await json(api(server, 'POST', '/api/v1/user/repos', { name, auto_init: true }), 201);
}

async function headOf(server: ServerProcess, repo: string): Promise<string> {
  return (await git(['ls-remote', `${server.url}/${ADMIN}/${repo}.git`, 'refs/heads/main'])).split('\t')[0];
}

/**
 * The acknowledged commit is on the branch: it or a later commit (a write that was not acknowledged may still
 * have landed) is its head.
 */
async function assertOnMain(server: ServerProcess, repo: string, sha: string): Promise<void> {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-check-'));
  try {
    await git(['clone', '--quiet', '--bare', server.url.replace('http://', `http://${ADMIN}:${token}@`) + `/${ADMIN}/${repo}.git`, copy]);
    await git(['--git-dir', copy, 'merge-base', '--is-ancestor', sha, 'refs/heads/main']);
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}

/** A repository made through the API (the first write of rounds that need one). */
async function fixtureRepository(server: ServerProcess): Promise<string> {
  const name = `fixture-${round}`;
  await createRepository(server, name);
  return name;
}

/** Waits (a ceiling, not a speed requirement) until `check` holds. */
async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let attempt = 0; attempt < 600; attempt++) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`never happened: ${what}`);
}

/** A write whose kill happens in the background after its answer (a sync, a delivery): waits for the kill. */
async function killedInBackground(server: ServerProcess): Promise<never> {
  await server.exited;
  throw new Error('the server was killed in the background');
}

/** The pushes (by `after` commit) a local webhook receiver was sent, with how many times each. */
const received = new Map<string, number>();
let receiver: http.Server | undefined;
async function receiverUrl(): Promise<string> {
  if (!receiver) {
    receiver = http.createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => (body += chunk.toString()));
      request.on('end', () => {
        const after = (JSON.parse(body || '{}') as { after?: string }).after;
        if (after) received.set(after, (received.get(after) ?? 0) + 1);
        response.writeHead(200).end('ok');
      });
    });
    await new Promise<void>((resolve) => receiver!.listen(0, '127.0.0.1', resolve));
  }
  return `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}

/** The commit of the file written by the API (a push event for the hooks). */
async function writeFile(server: ServerProcess, repo: string, name: string): Promise<string> {
  const written = await json<{ commit: { sha: string } }>(
    api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/contents/${name}`, { content: randomBytes(500).toString('base64'), message: name }),
    201,
  );
  return written.commit.sha;
}

let deliveredAgain = '';
let hookedRepo = '';

/** The pull request a merge round's killed merge was for. */
let cutMerge = { repo: '', index: 0, head: '' };

/**
 * A pull request of one new file on a branch made by the contents API, once its mergeability test has run
 * (a ceiling, not a speed requirement).
 */
async function mergeablePull(server: ServerProcess, repo: string, n: number): Promise<number> {
  await json(
    api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/contents/merged-${n}.bin`, { content: randomBytes(3000).toString('base64'), new_branch: `topic-${n}` }),
    201,
  );
  const created = await json<{ number: number }>(
    api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/pulls`, { head: `topic-${n}`, base: 'main', title: `merge ${n}` }),
    201,
  );
  await eventually(
    `pull request ${created.number} is mergeable`,
    async () => (await json<{ mergeable: boolean }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/pulls/${created.number}`), 200)).mergeable,
  );
  return created.number;
}

const rounds: Round[] = [
  ...['repository.create.built', 'repository.create.moved', 'repository.create.committed'].map((point) => ({
    point,
    leavesLeftover: point !== 'repository.create.committed',
    async write(server: ServerProcess, n: number) {
      const name = `created-${round}-${n}`;
      await createRepository(server, name);
      const head = await headOf(server, name);
      return async (server: ServerProcess) => {
        const repo = await json<{ empty: boolean; size: number }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}`), 200);
        expect(repo.empty).toBe(false);
        expect(repo.size).toBeGreaterThan(0);
        expect(await headOf(server, name)).toBe(head);
      };
    },
  })),
  {
    point: 'repository.delete.committed',
    leavesLeftover: true,
    async write(server, n) {
      const name = `deleted-${round}-${n}`;
      await createRepository(server, name);
      await json(api(server, 'DELETE', `/api/v1/repos/${ADMIN}/${name}`), 204);
      return async (server: ServerProcess) => {
        await json(api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}`), 404);
      };
    },
  },
  ...['repository.rename.moved', 'repository.rename.committed'].map((point) => ({
    point,
    // The journal entry stays; after `moved` the directory is under the new name and the row under the old one.
    leavesLeftover: true,
    async write(server: ServerProcess, n: number) {
      const name = `renamed-${round}-${n}`;
      await createRepository(server, name);
      const head = await headOf(server, name);
      await json(api(server, 'PATCH', `/api/v1/repos/${ADMIN}/${name}`, { name: `${name}-new` }), 200);
      return async (server: ServerProcess) => {
        await json(api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}`), 404);
        const repo = await json<{ empty: boolean }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}-new`), 200);
        expect(repo.empty).toBe(false);
        expect(await headOf(server, `${name}-new`)).toBe(head);
      };
    },
  })),
  ...['attachment.parked', 'attachment.committed'].map((point) => ({
    point,
    leavesLeftover: true,
    async write(server: ServerProcess, n: number) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const release = await json<{ id: number }>(api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases`, { tag_name: `v${n}`, name: `v${n}` }), 201);
      const bytes = randomBytes(200_000 + n);
      const asset = await json<{ uuid: string }>(
        api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases/${release.id}/assets?name=file-${n}.bin`, bytes),
        201,
      );
      return async (server: ServerProcess) => {
        const download = await fetch(`${server.url}/attachments/${asset.uuid}`, { headers: { Authorization: `token ${token}` } });
        expect(download.status).toBe(200);
        expect(Buffer.compare(Buffer.from(await download.arrayBuffer()), bytes)).toBe(0);
      };
    },
  })),
  ...['package.parked', 'package.committed'].map((point) => ({
    point,
    leavesLeftover: true,
    async write(server: ServerProcess, n: number) {
      const version = `/generic/pkg-${round}/1.0.${n}`;
      const route = `/api/packages/${ADMIN}${version}/file-${n}.bin`;
      const bytes = randomBytes(150_000 + n);
      await json(api(server, 'PUT', route, bytes), 201);
      return async (server: ServerProcess) => {
        const download = await api(server, 'GET', route);
        expect(download.status).toBe(200);
        expect(Buffer.compare(Buffer.from(await download.arrayBuffer()), bytes)).toBe(0);
        await json(api(server, 'GET', `/api/v1/packages/${ADMIN}${version}`), 200);
      };
    },
  })),
  ...['commit.tree-written', 'contents.ref-updated'].map((point) => ({
    point,
    // The tree's temporary index stays behind; a ref moved without its recording leaves a stale size.
    leavesLeftover: true,
    async write(server: ServerProcess, n: number) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const content = randomBytes(5000 + n);
      const written = await json<{ commit: { sha: string } }>(
        api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/contents/data-${n}.bin`, { content: content.toString('base64'), message: `file ${n}` }),
        201,
      );
      return async (server: ServerProcess) => {
        const raw = await api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/raw/data-${n}.bin`);
        expect(raw.status).toBe(200);
        expect(Buffer.compare(Buffer.from(await raw.arrayBuffer()), content)).toBe(0);
        await assertOnMain(server, repo, written.commit.sha);
      };
    },
  })),
  {
    point: 'push.received',
    leavesLeftover: false,
    async write(server, n) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-push-'));
      try {
        const remote = `${server.url.replace('http://', `http://${ADMIN}:${token}@`)}/${ADMIN}/${repo}.git`;
        await git(['clone', '--quiet', remote, work]);
        fs.writeFileSync(path.join(work, `pushed-${n}.bin`), randomBytes(30_000));
        await git(['add', '.'], work);
        await git(['commit', '--quiet', '-m', `push ${n}`], work);
        const sha = (await git(['rev-parse', 'HEAD'], work)).trim();
        await git(['push', '--quiet', 'origin', 'HEAD:main'], work);
        return (server: ServerProcess) => assertOnMain(server, repo, sha);
      } finally {
        fs.rmSync(work, { recursive: true, force: true });
      }
    },
  },
  ...['release.tag-created', 'release.committed'].map((point) => ({
    point,
    leavesLeftover: false,
    async write(server: ServerProcess, n: number) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const created = await json<{ id: number }>(
        api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases`, { tag_name: `r${n}`, name: `release ${n}` }),
        201,
      );
      const tag = (await git(['ls-remote', `${server.url}/${ADMIN}/${repo}.git`, `refs/tags/r${n}`])).split('\t')[0];
      return async (server: ServerProcess) => {
        const release = await json<{ id: number; name: string }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/releases/tags/r${n}`), 200);
        expect(release).toMatchObject({ id: created.id, name: `release ${n}` });
        expect((await git(['ls-remote', `${server.url}/${ADMIN}/${repo}.git`, `refs/tags/r${n}`])).split('\t')[0]).toBe(tag);
      };
    },
  })),
  {
    point: 'migration.cloned',
    // The clone made aside stays in the incoming area.
    leavesLeftover: true,
    async write(server, n) {
      const source = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const name = `migrated-${round}-${n}`;
      const head = await headOf(server, source);
      await json(api(server, 'POST', '/api/v1/repos/migrate', { clone_addr: `${server.url}/${ADMIN}/${source}.git`, repo_name: name }), 201);
      return async (server: ServerProcess) => {
        expect((await json<{ empty: boolean }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}`), 200)).empty).toBe(false);
        expect(await headOf(server, name)).toBe(head);
      };
    },
  },
  {
    point: 'mirror.fetched',
    leavesLeftover: false,
    async write(server, n) {
      const source = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const mirror = `mirror-${round}`;
      if (n === 1) {
        await json(api(server, 'POST', '/api/v1/repos/migrate', { clone_addr: `${server.url}/${ADMIN}/${source}.git`, repo_name: mirror, mirror: true }), 201);
      }
      const sha = await writeFile(server, source, `synced-${n}.txt`);
      await json(api(server, 'POST', `/api/v1/repos/${ADMIN}/${mirror}/mirror-sync`), 200);
      if (n === 2) return killedInBackground(server);
      await eventually(`the mirror has ${sha}`, async () => (await headOf(server, mirror)) === sha);
      return async (server: ServerProcess) => {
        expect(await headOf(server, mirror)).not.toBe('');
        await assertOnMain(server, mirror, sha);
        expect((await json<{ empty: boolean; size: number }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${mirror}`), 200)).size).toBeGreaterThan(0);
      };
    },
  },
  {
    point: 'webhook.sent',
    leavesLeftover: false,
    async write(server, n) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      if (n === 1) {
        await json(
          api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/hooks`, {
            type: 'gitea',
            config: { url: await receiverUrl(), content_type: 'json' },
            events: ['push'],
            active: true,
          }),
          201,
        );
      }
      const written = writeFile(server, repo, `hooked-${n}.txt`);
      if (n === 2) {
        // Sent, killed before its outcome was recorded: the restarted server sends it again. The delivery may
        // leave (and the server die) before the write's 201 reaches this test: the commit is then found after
        // the restart, as the branch's head.
        hookedRepo = repo;
        deliveredAgain = await written.catch(() => '');
        return killedInBackground(server);
      }
      const sha = await written;
      await eventually(`the receiver got ${sha}`, () => Promise.resolve(received.has(sha)));
      return async () => {
        expect(received.get(sha)).toBeGreaterThanOrEqual(1);
      };
    },
    async afterRestart(server) {
      deliveredAgain ||= await headOf(server, hookedRepo);
      // Sent before the kill, and at least once more after the restart (at-least-once delivery), without waiting
      // for the killed holder's lease to lapse.
      await eventually(`the receiver got ${deliveredAgain} again`, () => Promise.resolve((received.get(deliveredAgain) ?? 0) >= 2));
    },
  },
  ...['merge.intent-recorded', 'merge.ref-updated', 'merge.push-recorded'].map((point) => ({
    point,
    // A base moved without its recording leaves a stale size, measured again by the sweep.
    leavesLeftover: false,
    async write(server: ServerProcess, n: number) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const index = await mergeablePull(server, repo, n);
      const head = (await git(['ls-remote', `${server.url}/${ADMIN}/${repo}.git`, `refs/heads/topic-${n}`])).split('\t')[0];
      if (n === 2) cutMerge = { repo, index, head };
      await json(api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/pulls/${index}/merge`, { Do: 'squash' }), 200);
      return async (server: ServerProcess) => {
        const pull = await json<{ merged: boolean; state: string; merge_commit_sha: string }>(
          api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/pulls/${index}`),
          200,
        );
        expect(pull).toMatchObject({ merged: true, state: 'closed' });
        await assertOnMain(server, repo, pull.merge_commit_sha);
      };
    },
    async afterRestart(server: ServerProcess) {
      // The cut merge: either the base holds it and the pull request says merged, or neither.
      const { repo, index } = cutMerge;
      const pull = await json<{ merged: boolean; state: string; merge_commit_sha: string | null }>(
        api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/pulls/${index}`),
        200,
      );
      const raw = await api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}/raw/merged-2.bin?ref=main`);
      await raw.arrayBuffer();
      expect({ merged: pull.merged, state: pull.state }).toEqual(raw.status === 200 ? { merged: true, state: 'closed' } : { merged: false, state: 'open' });
      if (pull.merged) await assertOnMain(server, repo, pull.merge_commit_sha!);
      // Whichever it was, the pull request is consistent enough to merge (again): nothing is left half-made.
      if (!pull.merged) await json(api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/pulls/${index}/merge`, { Do: 'merge' }), 200);
      if (point === 'merge.intent-recorded') expect(raw.status).toBe(404);
      else expect(raw.status).toBe(200);
    },
  })),
  {
    point: 'star.written',
    leavesLeftover: false,
    async write(server, n) {
      const repo = `starred-${round}-${n}`;
      await createRepository(server, repo);
      await json(api(server, 'PUT', `/api/v1/user/starred/${ADMIN}/${repo}`), 204);
      return async (server: ServerProcess) => {
        await json(api(server, 'GET', `/api/v1/user/starred/${ADMIN}/${repo}`), 204);
        expect((await json<{ stars_count: number }>(api(server, 'GET', `/api/v1/repos/${ADMIN}/${repo}`), 200)).stars_count).toBe(1);
      };
    },
  },
];

describe(`kill -9 at named points of every write path (${usesMysql() ? 'MariaDB' : 'SQLite'})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let env: Record<string, string>;
  /** Checks of every write acknowledged so far, in every round: all must still hold at the end. */
  const acknowledged: Check[] = [];

  beforeAll(async () => {
    buildOnce();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-kill-'));
    database = usesMysql() ? await createMysqlDatabase() : undefined;
    // Stale at once: no other instance shares this DATA_DIR, so every leftover is a crash's.
    // Migrations, mirrors and webhooks talk to this machine's loopback (the server itself, the test's receiver).
    // WEBHOOK_TIMEOUT 600: a lease of the killed server lapses only after 605 s, longer than any wait here, so the
    // delivery sent again after the restart can only come from the new process taking the dead one's leases back.
    env = {
      ...baseEnv(dataDir, database?.url),
      RECONCILE_STALE_AFTER: '0',
      ALLOW_LOCAL_NETWORKS: 'true',
      WEBHOOK_ALLOWED_HOSTS: 'loopback',
      WEBHOOK_TIMEOUT: '600',
    };
    token = await adminToken(env, ADMIN);
  });
  afterAll(async () => {
    receiver?.close();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  /** After a rename killed at either point, the repository answers under exactly one of its names, with its branch. */
  async function assertRenamePairedBack(server: ServerProcess): Promise<void> {
    const name = `renamed-${round}-2`;
    const old = await api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}`);
    const renamed = await api(server, 'GET', `/api/v1/repos/${ADMIN}/${name}-new`);
    expect([old.status, renamed.status].sort()).toEqual([200, 404]);
    const answering = old.status === 200 ? name : `${name}-new`;
    expect(((await (old.status === 200 ? old : renamed).json()) as { empty: boolean }).empty).toBe(false);
    expect(await headOf(server, answering)).toMatch(/^[0-9a-f]{40}$/);
    // Paired back, not taken for a lost directory and a stray one.
    const lostFound = path.join(dataDir, 'lost+found');
    const quarantined = fs.existsSync(lostFound)
      ? fs
          .readdirSync(lostFound, { recursive: true })
          .map(String)
          .filter((entry) => entry.includes(name))
      : [];
    expect(quarantined).toEqual([]);
  }

  it.each(rounds.map((item) => [item.point, item]))('%s: acknowledged writes survive, nothing half-made remains', async (_point, item) => {
    round += 1;
    const armed = await startServer({ ...env, ANVIL_FAULT_KILL_AT: `${item.point}:2` });
    try {
      acknowledged.push(await item.write(armed, 1));
      await expect(item.write(armed, 2)).rejects.toThrow();
      expect(await armed.exited).toEqual({ code: null, signal: 'SIGKILL' });
    } finally {
      await armed.stop();
    }
    const restarted = await startServer(env);
    try {
      // Leftovers are repaired before the server listens, the repositories' sizes by the sweep after it.
      const swept = /repaired (\d+)/.exec(await restarted.sweepLine())?.[1];
      const repaired = Number(/reconciliation repaired (\d+)/.exec(restarted.startupLine)?.[1]) + Number(swept);
      if (item.leavesLeftover) expect(repaired).toBeGreaterThan(0);
      else expect(repaired).toBeGreaterThanOrEqual(0);
      try {
        for (const check of acknowledged) await check(restarted);
        if (item.point.startsWith('repository.rename.')) await assertRenamePairedBack(restarted);
        await item.afterRestart?.(restarted);
      } catch (error) {
        throw new Error(
          `${(error as Error).message}\nreconciliation: ${restarted
            .output()
            .split('\n')
            .filter((line) => line.includes('Reconciliation'))
            .join('\n')}`,
        );
      }
    } finally {
      await restarted.stop();
    }
    const doctor = await cli(env, ['doctor']);
    // The whole report on failure: it names what was found.
    expect(doctor.stdout.trim()).toMatch(/(^|\n)0 found, 0 repaired$/);
    expect(doctor.status).toBe(0);
  });
});
