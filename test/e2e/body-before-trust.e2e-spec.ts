import { makeUser, TestUser, withToken } from '../support/factories';
import { listen, rawRequest } from '../support/raw-http';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Work before trust: no body byte is read before the route is matched and
 * the caller passes its auth guard; bodies have a 1 MiB default limit and caps on fields and depth. Each
 * attack announces a large body and sends only its first bytes: an answer that arrives while the body is
 * still unsent proves the server did not wait to read (or parse) it.
 */
describe('request bodies are read only after routing and authentication', () => {
  let t: TestApp;
  let address: { host: string; port: number };
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ HTTP_BODY_TIMEOUT: '1', HTTP_MAX_CONNECTIONS_PER_CLIENT: '40', RATE_LIMIT_KEY_UPLOAD: '1' });
    address = await listen(t);
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  const announced = (method: string, path: string, headers: Record<string, string> = {}) =>
    `${method} ${path} HTTP/1.1\r\nHost: anvil.test\r\nContent-Type: application/json\r\nContent-Length: 9000000\r\n` +
    Object.entries(headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('') +
    '\r\n{"text": "';

  it('an anonymous POST to an unknown path is answered 404 before its body arrives, and the connection closes', async () => {
    const exchange = rawRequest(address, announced('POST', '/api/v1/no/such/path'));
    expect(await exchange.status()).toBe(404);
    await exchange.closed();
    expect(exchange.received()).toMatch(/connection: close/i);
  });

  it('an anonymous POST /markdown gets its 401 before its body arrives', async () => {
    const exchange = rawRequest(address, announced('POST', '/api/v1/markdown'));
    expect(await exchange.status()).toBe(401);
    exchange.socket.destroy();
  });

  it('a PATCH refused by its permission check never reads the body', async () => {
    const exchange = rawRequest(address, announced('PATCH', `/api/v1/repos/${alice.name}/missing-repo`, withToken(alice.token)));
    expect(await exchange.status()).toBe(404);
    exchange.socket.destroy();
  });

  it("a caller over a route's rate limit gets its 429 before its body arrives (the limit is a guard before BodyGuard)", async () => {
    const first = await t.http.post('/api/v1/user/keys').set(withToken(alice.token)).send({ title: 'k', key: 'not a key' });
    expect(first.status).toBe(422);
    const exchange = rawRequest(address, announced('POST', '/api/v1/user/keys', withToken(alice.token)));
    expect(await exchange.status()).toBe(429);
    exchange.socket.destroy();
  });

  it('a body announced over the 1 MiB default limit is refused 413 without being read', async () => {
    const exchange = rawRequest(address, announced('POST', '/api/v1/user/repos', withToken(alice.token)));
    expect(await exchange.status()).toBe(413);
    exchange.socket.destroy();
  });

  it('a body sent whole over the limit is refused 413', async () => {
    const response = await t.http
      .post(t.api('/user/repos'))
      .set(withToken(alice.token))
      .set('Content-Type', 'application/json')
      .send(JSON.stringify({ name: 'x', description: 'd'.repeat(1024 * 1024) }))
      .expect(413);
    expect(response.body.message).toMatch(/request body is too large/);
  });

  it('a form body with more fields than the cap is refused 413, not parsed', async () => {
    const form = Array.from({ length: 1500 }, (_, index) => `f${index}=1`).join('&');
    await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).type('form').send(form).expect(413);
  });

  it('a JSON body with more values than the cap is refused 413', async () => {
    const body = JSON.stringify({ name: 'x', list: Array.from({ length: 1500 }, () => 1) });
    await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).set('Content-Type', 'application/json').send(body).expect(413);
  });

  it('a JSON body nested deeper than the cap is refused 400', async () => {
    const body = `{"name": ${'['.repeat(40)}${']'.repeat(40)}}`;
    const response = await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).set('Content-Type', 'application/json').send(body).expect(400);
    expect(response.body.message).toMatch(/nested deeper than 32 levels/);
  });

  it('a body trickled slower than the body time budget loses its connection', async () => {
    const exchange = rawRequest(
      address,
      announced('POST', '/api/v1/user/repos', { ...withToken(alice.token), 'Content-Length': '1000' }).replace('Content-Length: 9000000\r\n', ''),
    );
    let sent = 0;
    const trickle = setInterval(() => {
      exchange.socket.write('a');
      sent++;
    }, 200);
    await exchange.closed();
    clearInterval(trickle);
    // Closed long before the 1000 announced bytes could arrive at this pace.
    expect(sent).toBeLessThan(100);
    expect(exchange.received()).not.toMatch(/^HTTP\/1\.1 201/);
  });

  it('keeps idle connections longer than a gateway does (keep-alive 65 s, headers timeout above it)', () => {
    const server = t.app.getHttpServer();
    expect(server.keepAliveTimeout).toBe(65_000);
    expect(server.headersTimeout).toBeGreaterThan(server.keepAliveTimeout);
  });
});

describe('connections per client are capped', () => {
  let t: TestApp;
  let address: { host: string; port: number };

  beforeAll(async () => {
    t = await startTestApp({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '3' });
    address = await listen(t);
  });
  afterAll(() => t.close());

  it('a client holding the most connections allowed has its next one closed, and may connect again once one ends', async () => {
    const held = [1, 2, 3].map(() => rawRequest(address, 'GET /api/v1/version HTTP/1.1\r\nHost: a\r\n\r\n'));
    await Promise.all(held.map((exchange) => exchange.status()));
    const refused = rawRequest(address, 'GET /api/v1/version HTTP/1.1\r\nHost: a\r\n\r\n');
    await refused.closed();
    expect(refused.received()).toBe('');
    held[0].socket.destroy();
    await held[0].closed();
    await new Promise((resolve) => setImmediate(resolve));
    const again = rawRequest(address, 'GET /api/v1/version HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n');
    expect(await again.status()).toBe(200);
    held.slice(1).forEach((exchange) => exchange.socket.destroy());
  });
});
