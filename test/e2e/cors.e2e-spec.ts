import { makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const preflight = (t: TestApp, path: string, origin: string) =>
  t.http.options(path).set('Origin', origin).set('Access-Control-Request-Method', 'GET').set('Access-Control-Request-Headers', 'authorization,sudo');

describe('CORS (CORS_ALLOWED_ORIGINS)', () => {
  describe('with a list of origins', () => {
    let t: TestApp;
    let alice: TestUser;
    beforeAll(async () => {
      t = await startTestApp({ CORS_ALLOWED_ORIGINS: 'https://tools.example.com, http://127.0.0.1:8080' });
      alice = await makeUser(t);
    });
    afterAll(() => t.close());

    it('answers a preflight from an allowed origin with 204, the methods and the Authorization and Sudo headers', async () => {
      const response = await preflight(t, t.api('/user'), 'https://tools.example.com').expect(204);
      expect(response.headers['access-control-allow-origin']).toBe('https://tools.example.com');
      expect(response.headers['access-control-allow-methods'].split(',')).toEqual(expect.arrayContaining(['GET', 'POST', 'PATCH', 'DELETE']));
      const headers = response.headers['access-control-allow-headers'].toLowerCase().split(',');
      expect(headers).toEqual(expect.arrayContaining(['authorization', 'sudo', 'content-type']));
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      expect(response.headers.vary).toMatch(/Origin/);
    });

    it('lets an allowed origin read an authorised answer and the paging headers', async () => {
      const response = await t.http.get(t.api('/user')).set('Origin', 'http://127.0.0.1:8080').set(withToken(alice.token)).expect(200);
      expect(response.headers['access-control-allow-origin']).toBe('http://127.0.0.1:8080');
      expect(response.headers['access-control-expose-headers'].split(',')).toEqual(['Link', 'X-Total-Count', 'Warning']);
      expect(response.body.login).toBe(alice.name);
    });

    it('gives another origin no Access-Control-Allow-Origin, and the preflight still is not a 405', async () => {
      const response = await preflight(t, t.api('/user'), 'https://evil.example.net').expect(204);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      const simple = await t.http.get(t.api('/version')).set('Origin', 'https://evil.example.net').expect(200);
      expect(simple.headers['access-control-allow-origin']).toBeUndefined();
    });
  });

  describe('with *', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp({ CORS_ALLOWED_ORIGINS: '*' });
    });
    afterAll(() => t.close());

    it('allows any origin, never with credentials', async () => {
      const response = await preflight(t, t.api('/repos/search'), 'https://anywhere.example').expect(204);
      expect(response.headers['access-control-allow-origin']).toBe('*');
      expect(response.headers['access-control-allow-credentials']).toBeUndefined();
      const get = await t.http.get(t.api('/version')).set('Origin', 'https://anywhere.example').expect(200);
      expect(get.headers['access-control-allow-origin']).toBe('*');
    });
  });

  describe('by default', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await startTestApp();
    });
    afterAll(() => t.close());

    it('allows no cross-origin caller, but answers preflights with 204 rather than 405', async () => {
      const response = await preflight(t, t.api('/user'), 'https://tools.example.com').expect(204);
      expect(response.headers['access-control-allow-origin']).toBeUndefined();
      const get = await t.http.get(t.api('/version')).set('Origin', 'https://tools.example.com').expect(200);
      expect(get.headers['access-control-allow-origin']).toBeUndefined();
    });

    it('answers a plain OPTIONS with 204 and the allowed methods', async () => {
      const response = await t.http.options(t.api('/user')).expect(204);
      expect(response.headers['access-control-allow-methods']).toContain('PATCH');
    });
  });
});
