import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
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
}

/** Checks an acknowledged write against a (restarted) server. */
type Check = (server: ServerProcess) => Promise<void>;

let token = '';
let round = 0;

function api(server: ServerProcess, method: string, route: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  const raw = body instanceof Uint8Array;
  return fetch(`${server.url}${route}`, {
    method,
    headers: { Authorization: `token ${token}`, ...(body === undefined ? {} : { 'Content-Type': raw ? 'application/octet-stream' : 'application/json' }), ...headers },
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
  ...['attachment.parked', 'attachment.committed'].map((point) => ({
    point,
    leavesLeftover: true,
    async write(server: ServerProcess, n: number) {
      const repo = n === 1 ? await fixtureRepository(server) : `fixture-${round}`;
      const release = await json<{ id: number }>(api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases`, { tag_name: `v${n}`, name: `v${n}` }), 201);
      const bytes = randomBytes(200_000 + n);
      const asset = await json<{ uuid: string }>(api(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases/${release.id}/assets?name=file-${n}.bin`, bytes), 201);
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
    env = { ...baseEnv(dataDir, database?.url), RECONCILE_STALE_AFTER: '0' };
    token = await adminToken(env, ADMIN);
  });
  afterAll(async () => {
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

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
      const repaired = Number(/reconciliation repaired (\d+)/.exec(restarted.startupLine)?.[1]);
      if (item.leavesLeftover) expect(repaired).toBeGreaterThan(0);
      else expect(repaired).toBeGreaterThanOrEqual(0);
      try {
        for (const check of acknowledged) await check(restarted);
      } catch (error) {
        throw new Error(`${(error as Error).message}\nreconciliation: ${restarted.output().split('\n').filter((line) => line.includes('Reconciliation')).join('\n')}`);
      }
    } finally {
      await restarted.stop();
    }
    const doctor = await cli(env, ['doctor']);
    expect(doctor.stdout.trim().split('\n').pop()).toBe('0 found, 0 repaired');
    expect(doctor.status).toBe(0);
  });
});
