import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../../src/config/config';
import { serve } from '../../src/server/serve';
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
    const config = loadConfig({ DATA_DIR: dataDir, PORT: '0', SSH_ENABLED: 'false', LOG_LEVEL: 'silent', SHUTDOWN_DELAY: '30', ...(database ? { DATABASE_URL: database.url } : {}) });
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
