import * as fs from 'node:fs';
import * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { adminToken, baseEnv, buildOnce, cli, ServerProcess, startServer } from './support/built-server';

/**
 * Two instances on one DATA_DIR and database, the second as if on another machine (a PID namespace of its own:
 * its pid tells the first nothing). kill -9 of the second in the middle of a repository creation and of an
 * upload leaves a directory at its final path without its row, a journal entry and a partial upload; the first
 * clears them once the dead one's liveness lease lapses, though nothing is older than RECONCILE_STALE_AFTER (1 h).
 */
const ADMIN = 'lease-admin';

describe(`leftovers of an instance that died elsewhere (${usesMysql() ? 'MariaDB' : 'SQLite'})`, () => {
  let dataDir: string;
  let database: { url: string; drop(): Promise<void> } | undefined;
  let env: Record<string, string>;
  let token = '';
  const servers: ServerProcess[] = [];

  const api = (server: ServerProcess, method: string, route: string, body?: unknown) =>
    fetch(`${server.url}${route}`, {
      method,
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    buildOnce();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lease-'));
    database = usesMysql() ? await createMysqlDatabase() : undefined;
    // The default staleness (1 h) stays: only the lapsed lease can make these leftovers a dead process's.
    env = { ...baseEnv(dataDir, database?.url), RECONCILE_PROCESS_LEASE: '2' };
    token = await adminToken(env, ADMIN);
  });
  afterAll(async () => {
    for (const server of servers) await server.stop();
    await database?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('clears a dead instance’s half-made repository and upload once its lease lapses, not after an hour', async () => {
    const survivor = await startServer(env);
    servers.push(survivor);
    const doomed = await startServer({ ...env, ANVIL_FAULT_KILL_AT: 'repository.create.moved' }, { otherMachine: true });
    servers.push(doomed);
    const repositories = path.join(dataDir, 'repositories');
    const uploads = path.join(dataDir, 'tmp', 'uploads');
    const scratchBefore = new Set(fs.existsSync(uploads) ? fs.readdirSync(uploads) : []);

    // An upload in flight on the doomed instance: half its body sent, the rest never comes.
    const upload = http.request(`${doomed.url}/api/packages/${ADMIN}/generic/held/1.0.0/held.bin`, {
      method: 'PUT',
      headers: { Authorization: `token ${token}`, 'Content-Type': 'application/octet-stream', 'Content-Length': String(1024 * 1024) },
    });
    upload.on('error', () => undefined);
    upload.write(Buffer.alloc(256 * 1024, 7));
    const partial = await eventually('the upload in the doomed instance’s scratch directory', () => {
      const added = fs.existsSync(uploads) ? fs.readdirSync(uploads).filter((name) => !scratchBefore.has(name)) : [];
      return added.length === 1 && fs.readdirSync(path.join(uploads, added[0])).length > 0 ? path.join(uploads, added[0]) : undefined;
    });
    // Named by the doomed process's tag, of another machine: the survivor cannot tell from it that it died.
    expect(path.basename(partial)).toMatch(/^[0-9a-f]{12}-\d+-\d+-[0-9a-f]{16}~/);

    // Killed between the directory's move to its final path and the row's commit.
    await expect(api(doomed, 'POST', '/api/v1/user/repos', { name: 'half', auto_init: true })).rejects.toThrow();
    await doomed.exited;
    upload.destroy();
    const halfDir = path.join(repositories, ADMIN, 'half.git');
    expect(fs.existsSync(halfDir)).toBe(true);
    // Nothing of it is visible meanwhile.
    expect((await api(survivor, 'GET', `/api/v1/repos/${ADMIN}/half`)).status).toBe(404);

    // The survivor clears it once the dead one's liveness lease lapsed: no start, no hour.
    const cleared = await eventually('the survivor clearing the dead instance’s leftovers', () => {
      const match = /leftovers of \d+ process\(es\) whose liveness lease lapsed: repaired ([1-9]\d*)/.exec(survivor.output());
      return match ? Number(match[1]) : undefined;
    });
    expect(cleared).toBeGreaterThanOrEqual(2);
    expect(fs.existsSync(halfDir)).toBe(false);
    const quarantined = fs.readdirSync(path.join(dataDir, 'lost+found'), { recursive: true }).map(String);
    expect(quarantined.some((entry) => entry.endsWith('half.git'))).toBe(true);
    const journal = path.join(repositories, '.journal');
    expect(fs.existsSync(journal) ? fs.readdirSync(journal) : []).toEqual([]);
    expect(fs.readdirSync(partial, { recursive: true }).filter((entry) => fs.statSync(path.join(partial, String(entry))).isFile())).toEqual([]);

    // The name is free again, and what was made answers whole.
    expect((await api(survivor, 'POST', '/api/v1/user/repos', { name: 'half', auto_init: true })).status).toBe(201);
    expect((await api(survivor, 'GET', `/api/v1/repos/${ADMIN}/half`)).status).toBe(200);
    await survivor.stop();
    const doctor = await cli(env, ['doctor']);
    expect(doctor.stdout.trim().split('\n').pop()).toBe('0 found, 0 repaired');
  });
});

/** Waits (a ceiling, not a speed requirement) until `probe` answers something. */
async function eventually<T>(what: string, probe: () => T | undefined): Promise<T> {
  for (let round = 0; round < 2400; round++) {
    const found = probe();
    if (found !== undefined) return found;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}
