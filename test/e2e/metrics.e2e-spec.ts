import { makeRepo, makeUser } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/** The value of one sample line of the Prometheus text format, or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t.close());

    it('is off (404)', async () => {
      await t.http.get('/metrics').expect(404);
    });
  });

  describe('with METRICS_ENABLED=true', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ METRICS_ENABLED: 'true' });
    });
    afterAll(() => t.close());

    it('counts requests and their latency by route template and status, in Prometheus text format', async () => {
      const alice = await makeUser(t);
      const repo = await makeRepo(t, alice);
      await t.http.get(t.api('/version')).expect(200);
      await t.http.get(t.api('/version')).expect(200);
      await t.http.get(t.api(`/repos/${alice.name}/${repo.name}`)).expect(200);
      await t.http.get(t.api(`/repos/${alice.name}/no-such-repo`)).expect(404);
      await t.http.get('/no/such/path').expect(404);
      const response = await t.http.get('/metrics').expect(200);
      expect(response.headers['content-type']).toMatch(/^text\/plain;.*version=0\.0\.4/);
      const text = response.text;
      expect(sample(text, 'anvil_http_requests_total{method="GET",route="/api/v1/version",status="200"}')).toBe(2);
      expect(sample(text, 'anvil_http_requests_total{method="GET",route="/api/v1/repos/:owner/:repo",status="200"}')).toBe(1);
      expect(sample(text, 'anvil_http_requests_total{method="GET",route="/api/v1/repos/:owner/:repo",status="404"}')).toBe(1);
      expect(sample(text, 'anvil_http_requests_total{method="GET",route="unmatched",status="404"}')).toBe(1);
      expect(text).not.toContain(repo.name);
      expect(sample(text, 'anvil_http_request_duration_seconds_count{method="GET",route="/api/v1/version",status="200"}')).toBe(2);
      expect(sample(text, 'anvil_http_request_duration_seconds_bucket{le="+Inf",method="GET",route="/api/v1/version",status="200"}')).toBe(2);
      // The scrape itself is the one request in flight.
      expect(sample(text, 'anvil_http_requests_in_flight')).toBe(1);
    });

    it('reports the database pool, the markdown renderer and the process', async () => {
      const text = (await t.http.get('/metrics').expect(200)).text;
      expect(sample(text, 'anvil_database_connections{state="total"}')).toBeGreaterThanOrEqual(1);
      expect(sample(text, 'anvil_database_connections{state="waiting"}')).toBe(0);
      expect(sample(text, 'anvil_markdown_render_pool{state="queued"}')).toBe(0);
      expect(sample(text, 'anvil_markdown_render_pool{state="busy"}')).toBe(0);
      expect(sample(text, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
      expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
    });
  });

  describe('with METRICS_TOKEN', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ METRICS_ENABLED: 'true', METRICS_TOKEN: 'scrape-secret' });
    });
    afterAll(() => t.close());

    it('answers only the bearer of the token; others get 401', async () => {
      const missing = await t.http.get('/metrics').expect(401);
      expect(missing.headers['www-authenticate']).toBe('Bearer realm="metrics"');
      await t.http.get('/metrics').set('Authorization', 'Bearer wrong-secret').expect(401);
      await t.http.get('/metrics').set('Authorization', 'token scrape-secret').expect(401);
      const allowed = await t.http.get('/metrics').set('Authorization', 'Bearer scrape-secret').expect(200);
      expect(allowed.text).toContain('anvil_http_requests_total');
    });
  });
});
