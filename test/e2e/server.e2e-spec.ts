import { startTestApp, TestApp } from '../support/test-app';

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
