import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import request from 'supertest';
import { loadConfig } from '../../src/config/config';
import { serve } from '../../src/server/serve';
import { makeRepo, makeUser } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { git, repositoryDir } from '../support/git';
import { createMysqlDatabase, startTestApp, TestApp, usesMysql } from '../support/test-app';

describe('server routes', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('GET /version answers both keys with the package version', async () => {
    const response = await t.http.get(t.api('/version')).expect(200);
    expect(response.headers['content-type']).toBe('application/json;charset=utf-8');
    expect(response.text.endsWith('}\n')).toBe(true);
    expect(response.body.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(response.body.Version).toBe(response.body.version);
  });

  it('GET /api/healthz answers 200 while the database answers', async () => {
    const response = await t.http.get('/api/healthz').expect(200);
    expect(response.body).toEqual({ status: 'pass', database: 'pass', storage: 'pass' });
  });

  it('an unknown route is a 404 with an empty body and no content type', async () => {
    const response = await t.http.get(t.api('/no/such/route')).expect(404);
    expect(response.text).toBe('');
    expect(response.headers['content-type']).toBeUndefined();
  });

  it('a known path with an unsupported method is a 405 with the standard body', async () => {
    const response = await t.http.delete(t.api('/version')).expect(405);
    expect(response.body).toEqual({ message: expect.any(String), url: 'http://anvil.test/api/swagger' });
  });

  it('every answer carries the security headers', async () => {
    const response = await t.http.get(t.api('/version'));
    expect(response.headers['x-content-type-options']).toBe('nosniff');
    expect(response.headers['x-frame-options']).toBeDefined();
    expect(response.headers['cache-control']).toContain('max-age=0');
  });
});

describe('health when the database is gone', () => {
  it('GET /api/healthz answers 503', async () => {
    const t = await startTestApp();
    try {
      await t.dataSource.destroy();
      const response = await t.http.get('/api/healthz').expect(503);
      expect(response.body).toEqual({ status: 'fail', database: 'fail', storage: 'pass', message: 'the database does not answer' });
      expect(response.headers['retry-after']).toBe('5');
    } finally {
      await t.close();
    }
  });
});

describe('readiness for a gateway', () => {
  it('GET /api/healthz/ready answers 200 while the instance takes requests', async () => {
    const t = await startTestApp();
    try {
      const response = await t.http.get('/api/healthz/ready').expect(200);
      expect(response.body.status).toBe('pass');
    } finally {
      await t.close();
    }
  });

  it('from the moment shutdown begins, readiness answers 503 while the listener still serves other requests', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ready-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      SSH_ENABLED: 'false',
      LOG_LEVEL: 'silent',
      SHUTDOWN_DELAY: '30',
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
    const lines: string[] = [];
    const server = await serve(config, { info: (line) => lines.push(line) });
    const base = `http://${server.httpAddress}`;
    try {
      expect((await fetch(`${base}/api/healthz/ready`)).status).toBe(200);
      const stopping = server.stop('SIGTERM');
      const ready = await fetch(`${base}/api/healthz/ready`);
      expect(ready.status).toBe(503);
      expect(await ready.json()).toEqual({ status: 'draining', database: 'unchecked' });
      // Still listening and answering everything else.
      expect((await fetch(`${base}/api/v1/version`)).status).toBe(200);
      expect((await fetch(`${base}/api/healthz`)).status).toBe(200);
      expect(lines.some((line) => line.includes('not ready, still serving'))).toBe(true);
      stopping.catch(() => undefined);
    } finally {
      // The delay is long on purpose (the checks above run inside it); the test ends the server itself.
      await server.app.close();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('shutdown with connections already open', () => {
  it('a push whose refs were fetched before SIGTERM still lands, and a keep-alive request is answered with Connection: close', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-grace-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    // A grace far longer than the test needs: the shutdown ends as soon as the last connection closes.
    const config = loadConfig({
      DATA_DIR: dataDir,
      PORT: '0',
      SSH_ENABLED: 'false',
      LOG_LEVEL: 'silent',
      SHUTDOWN_GRACE: '120',
      ...(database ? { DATABASE_URL: database.url } : {}),
    });
    const lines: string[] = [];
    let listenerClosed: () => void = () => undefined;
    const closed = new Promise<void>((resolve) => (listenerClosed = resolve));
    const server = await serve(config, {
      info: (line) => {
        lines.push(line);
        if (line.includes('no new connections')) setImmediate(listenerClosed);
      },
    });
    const base = `http://${server.httpAddress}`;
    const t = { app: server.app, http: request(base), api: (apiPath: string) => `/api/v1${apiPath}` } as unknown as TestApp;
    const client = new GitClient();
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let stopping: Promise<void> | undefined;
    // The client's pre-push hook runs after git fetched the refs and before it sends the pack: it asks this
    // little server to begin the shutdown and waits until the listener is closed.
    const control = http.createServer((_request, response) => {
      stopping = server.stop('SIGTERM');
      void closed.then(() => response.end('stopped'));
    });
    await new Promise<void>((resolve) => control.listen(0, '127.0.0.1', resolve));
    try {
      const owner = await makeUser(t);
      const repo = await makeRepo(t, owner);
      const work = await client.workingCopy('main', { 'a.txt': 'across the shutdown\n' });
      // The set-up's own keep-alive connections would hold the shutdown open for the whole grace.
      http.globalAgent.destroy();
      // A keep-alive connection opened before the shutdown.
      const first = await get(`${base}/api/v1/version`, agent);
      expect(first.status).toBe(200);
      expect(first.connection).toBe('keep-alive');
      const hook = path.join(work, '.git', 'hooks', 'pre-push');
      const controlUrl = `http://127.0.0.1:${(control.address() as AddressInfo).port}/`;
      fs.writeFileSync(hook, `#!/bin/sh\ncurl -s -o /dev/null ${controlUrl} || exit 1\n`, { mode: 0o755 });
      const url = withCredentials(base, `/${owner.name}/${repo.name}.git`, owner.name, owner.token);
      const pushed = await client.run(['push', url, 'main'], { cwd: work });
      expect({ code: pushed.code, stderr: pushed.stderr }).toEqual({ code: 0, stderr: expect.any(String) });
      expect(lines).toContain('shutting down (SIGTERM): no new connections, finishing requests in flight');
      const head = git(repositoryDir(dataDir, owner.name, repo.name), 'rev-parse', 'refs/heads/main').trim();
      expect(head).toBe(git(path.join(work, '.git'), 'rev-parse', 'HEAD').trim());
      // The listener is closed, yet a request on the connection opened before is answered, and told to close it.
      const late = await get(`${base}/api/v1/version`, agent);
      expect(late).toEqual({ status: 200, connection: 'close' });
      await stopping;
      expect(lines[lines.length - 1]).toBe('shutdown complete');
    } finally {
      agent.destroy();
      await new Promise<void>((resolve) => control.close(() => resolve()));
      await (stopping ?? server.stop('test end'));
      client.dispose();
      await database?.drop();
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

function get(url: string, agent: http.Agent): Promise<{ status: number; connection: string | undefined }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { agent }, (response) => {
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, connection: response.headers.connection }));
      })
      .on('error', reject);
  });
}
