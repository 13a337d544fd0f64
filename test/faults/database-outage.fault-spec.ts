import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { PrivateMariaDb } from './support/private-mariadb';
import { Answer, call, eventually, makeAdmin, ServerProcess, startServer } from './support/server-process';

/** The bounds asserted: the health check answers within this (its own limit is 1.5 s; the rest is a busy machine). */
const HEALTH_BOUND_MS = 4_000;
/** Any other request, with DATABASE_CONNECT_TIMEOUT 2 s, DATABASE_ACQUIRE_TIMEOUT 3 s, DATABASE_QUERY_TIMEOUT 3 s. */
const REQUEST_BOUND_MS = 20_000;
const UNAVAILABLE = 'the database is unavailable; try again later';

/**
 * The real server on a MariaDB of the test's own, which is hung (SIGSTOP) and then stopped (SIGKILL) under it:
 * every answer is a 503 with Retry-After and the service's words (never the driver's), within bounded waits; the
 * health check answers within seconds and names the database; no 500, the process never exits, and it serves
 * again as soon as the database is back, without a restart, with every write it acknowledged before.
 */
describe('a MariaDB that hangs and stops under the server', () => {
  let mariadb: PrivateMariaDb;
  let dataDir: string;
  let server: ServerProcess;
  let admin: { name: string; token: string };
  const repo = 'outage';

  const healthz = () => call(server.url, 'GET', '/api/healthz', { timeoutMs: HEALTH_BOUND_MS });
  const me = () => call(server.url, 'GET', '/api/v1/user', { token: admin.token, timeoutMs: REQUEST_BOUND_MS });
  const search = () => call(server.url, 'GET', '/api/v1/repos/search?q=out', { timeoutMs: REQUEST_BOUND_MS });
  const star = (method: 'PUT' | 'GET') =>
    call(server.url, method, `/api/v1/user/starred/${admin.name}/${repo}`, { token: admin.token, timeoutMs: REQUEST_BOUND_MS });

  function expectUnavailable(answer: Answer): void {
    expect(answer.status).toBe(503);
    expect(answer.headers['retry-after']).toMatch(/^\d+$/);
    expect(answer.body).not.toMatch(/ECONN|ETIMEDOUT|PROTOCOL_|connect |Query|SQL/i);
  }

  async function expectServedWhileDown(): Promise<void> {
    const [health, user, found, starring] = await Promise.all([healthz(), me(), search(), star('PUT')]);
    expect(health.status).toBe(503);
    expect(health.json()).toMatchObject({ status: 'fail', database: 'fail', message: 'the database does not answer' });
    for (const answer of [user, starring]) {
      expectUnavailable(answer);
      expect(answer.json()).toEqual({ message: UNAVAILABLE, url: 'http://anvil.test/api/swagger' });
    }
    expectUnavailable(found);
    expect(found.json()).toEqual({ ok: false, error: UNAVAILABLE });
    expect(server.hasExited()).toBe(false);
  }

  async function expectRecovered(): Promise<void> {
    await eventually(me, (answer) => answer.status === 200);
    expect((await healthz()).status).toBe(200);
    // Acknowledged before the outage: still there.
    expect((await star('GET')).status).toBe(204);
    expect((await call(server.url, 'GET', `/api/v1/repos/${admin.name}/${repo}`, { token: admin.token })).json()).toMatchObject({ stars_count: 1 });
    expect(server.hasExited()).toBe(false);
  }

  beforeAll(async () => {
    mariadb = await PrivateMariaDb.create();
    await mariadb.createDatabase('anvil');
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-fault-outage-'));
    const env = {
      DATA_DIR: dataDir,
      DATABASE_URL: mariadb.url('anvil'),
      DATABASE_CONNECT_TIMEOUT: '2',
      DATABASE_ACQUIRE_TIMEOUT: '3',
      DATABASE_QUERY_TIMEOUT: '3',
    };
    admin = await makeAdmin(env);
    server = await startServer(env);
    expect((await call(server.url, 'POST', '/api/v1/user/repos', { token: admin.token, body: { name: repo } })).status).toBe(201);
    expect((await star('PUT')).status).toBe(204);
  });
  afterAll(async () => {
    await server?.stop();
    await mariadb?.destroy();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('hung (SIGSTOP): 503 with Retry-After in bounded time, the health check within seconds; served again after SIGCONT', async () => {
    mariadb.pause();
    try {
      await expectServedWhileDown();
      // Still hung: the pool has no healthy connection left, and the next requests are answered the same way.
      await expectServedWhileDown();
    } finally {
      mariadb.resume();
    }
    await expectRecovered();
  });

  it('stopped (SIGKILL): 503 with Retry-After, never the driver text; served again once it is started, without a restart', async () => {
    await mariadb.kill();
    try {
      await expectServedWhileDown();
    } finally {
      await mariadb.start();
    }
    await expectRecovered();
    expect(server.output()).not.toMatch(/"statusCode":500|answered 500/);
  });
});
