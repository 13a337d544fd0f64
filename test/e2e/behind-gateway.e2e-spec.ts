import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { UsersService } from '../../src/users/users.service';
import { UserStore } from '../../src/users/user.store';
import { makeRepo, makeToken, makeUser, uniqueName, withToken } from '../support/factories';
import { GitClient } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

/** One request from a chosen local address (127.0.0.2 is loopback too, but not a trusted proxy here). */
function requestFrom(baseUrl: string, localAddress: string, requestPath: string, headers: Record<string, string>): Promise<{ status: number; body: string }> {
  const url = new URL(requestPath, baseUrl);
  return new Promise((resolve, reject) => {
    const request = http.get({ host: url.hostname, port: url.port, path: url.pathname + url.search, localAddress, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
  });
}

describe('sign-in by the gateway (REVERSE_PROXY_AUTH_ENABLED), auto-registration off', () => {
  let t: TestApp;
  let baseUrl: string;
  let git: GitClient;
  const gateway = (name: string) => ({ 'X-WEBAUTH-USER': name });

  beforeAll(async () => {
    // Only 127.0.0.1 is a trusted proxy: requests from 127.0.0.2 stand for any other client.
    t = await startTestApp({
      REVERSE_PROXY_AUTH_ENABLED: 'true',
      REVERSE_PROXY_TRUSTED_PROXIES: '127.0.0.1/32,::1/128',
      RATE_LIMIT_SIGN_IN_PER_IP: '2',
    });
    baseUrl = await t.listen();
    git = new GitClient();
  });
  afterAll(async () => {
    git.dispose();
    await t.close();
  });

  it('signs in the user the trusted gateway names, over the API, with every scope, token routes included', async () => {
    const alice = await makeUser(t);
    const me = await t.http.get(t.api('/user')).set(gateway(alice.name)).expect(200);
    expect(me.body.login).toBe(alice.name);
    // A write needs write scopes: a session has them all.
    const other = await makeUser(t);
    await t.http
      .put(t.api(`/user/following/${other.name}`))
      .set(gateway(alice.name))
      .expect(204);
    // Token management takes the account password or the gateway's sign-in, as Forgejo.
    const created = await t.http
      .post(t.api(`/users/${alice.name}/tokens`))
      .set(gateway(alice.name))
      .send({ name: 'ci', scopes: ['read:user'] })
      .expect(201);
    expect(created.body.sha1).toMatch(/^[0-9a-f]{40}$/);
  });

  it('lets a token sent through the gateway decide, with its own scopes', async () => {
    const alice = await makeUser(t);
    const bob = await makeUser(t);
    const readOnly = await makeToken(t, bob.user, ['read:user']);
    const me = await t.http
      .get(t.api('/user'))
      .set({ ...gateway(alice.name), ...withToken(readOnly) })
      .expect(200);
    expect(me.body.login).toBe(bob.name);
    await t.http
      .put(t.api(`/user/following/${alice.name}`))
      .set({ ...gateway(alice.name), ...withToken(readOnly) })
      .expect(403);
  });

  it('refuses an unknown user (401) and leaves the header alone when the feature would create nobody', async () => {
    const ghost = uniqueName('ghost');
    await t.http.get(t.api('/user')).set(gateway(ghost)).expect(401);
    expect(await t.app.get(UserStore).findByName(ghost)).toBeNull();
  });

  it('applies account state: a disabled account gets 403, as with a password', async () => {
    const carol = await makeUser(t);
    await t.app.get(UsersService).edit(carol.name, { prohibitLogin: true });
    const refused = await t.http.get(t.api('/user')).set(gateway(carol.name)).expect(403);
    expect(refused.body.message).toContain('prohibited from signing in');
    const dave = await makeUser(t);
    await t.app.get(UsersService).edit(dave.name, { mustChangePassword: true });
    expect((await t.http.get(t.api('/user')).set(gateway(dave.name)).expect(403)).body.message).toContain('You must change your password');
  });

  it('clones a private repository over HTTP as the gateway user, and refuses git to a disabled one', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { private: true, autoInit: true });
    const url = `${baseUrl}${owner.name}/${repo.name}.git`;
    const target = path.join(git.home, uniqueName('clone'));
    await git.ok(['-c', `http.extraHeader=X-WEBAUTH-USER: ${owner.name}`, 'clone', '--quiet', url, target]);
    expect(fs.existsSync(path.join(target, 'README.md'))).toBe(true);
    // Without the header git gets nothing.
    const anonymous = await git.run(['clone', '--quiet', url, path.join(git.home, uniqueName('clone'))]);
    expect(anonymous.code).not.toBe(0);
    await t.app.get(UsersService).edit(owner.name, { prohibitLogin: true });
    const disabled = await git.run(['-c', `http.extraHeader=X-WEBAUTH-USER: ${owner.name}`, 'clone', '--quiet', url, path.join(git.home, uniqueName('clone'))]);
    expect(disabled.code).not.toBe(0);
    expect(disabled.stderr).toContain('Your account is disabled.');
  });

  it('ignores the header from an address that is not a trusted proxy: API and git alike', async () => {
    const erin = await makeUser(t);
    const repo = await makeRepo(t, erin, { private: true, autoInit: true });
    const spoofed = await requestFrom(baseUrl, '127.0.0.2', '/api/v1/user', gateway(erin.name));
    expect(spoofed.status).toBe(401);
    const refs = await requestFrom(baseUrl, '127.0.0.2', `/${erin.name}/${repo.name}.git/info/refs?service=git-upload-pack`, gateway(erin.name));
    expect(refs.status).toBe(401);
    // The same requests from the trusted proxy are signed in.
    expect((await requestFrom(baseUrl, '127.0.0.1', '/api/v1/user', gateway(erin.name))).status).toBe(200);
    expect((await requestFrom(baseUrl, '127.0.0.1', `/${erin.name}/${repo.name}.git/info/refs?service=git-upload-pack`, gateway(erin.name))).status).toBe(200);
  });

  it('counts failed sign-ins against the socket address when the peer is not trusted: a spoofed X-Forwarded-For moves nothing', async () => {
    const bad = { Authorization: 'token 0000000000000000000000000000000000000000' };
    for (const [index, status] of [401, 401, 429, 429].entries()) {
      const answer = await requestFrom(baseUrl, '127.0.0.2', '/api/v1/user', { ...bad, 'X-Forwarded-For': `198.51.100.${index + 1}` });
      expect(answer.status).toBe(status);
    }
  });

  it('counts failed sign-ins against the forwarded address when the peer is a trusted proxy: one bucket per client', async () => {
    const bad = { Authorization: 'token 1111111111111111111111111111111111111111' };
    const from = (client: string) => requestFrom(baseUrl, '127.0.0.1', '/api/v1/user', { ...bad, 'X-Forwarded-For': `203.0.113.77, ${client}` });
    expect((await from('192.0.2.10')).status).toBe(401);
    expect((await from('192.0.2.10')).status).toBe(401);
    expect((await from('192.0.2.10')).status).toBe(429);
    // Another client behind the same proxy has its own allowance.
    expect((await from('192.0.2.11')).status).toBe(401);
  });

  it('believes only the configured forwarding header: a client’s own Forwarded, passed on by the gateway, moves nothing', async () => {
    const bad = { Authorization: 'token 2222222222222222222222222222222222222222' };
    // As the documented nginx does: it appends the peer to X-Forwarded-For and passes the client's Forwarded on.
    const statuses: number[] = [];
    for (let index = 0; index < 4; index++) {
      const answer = await requestFrom(baseUrl, '127.0.0.1', '/api/v1/user', {
        ...bad,
        Forwarded: `for=198.51.100.${index + 20}`,
        'X-Forwarded-For': '192.0.2.30',
      });
      statuses.push(answer.status);
    }
    expect(statuses).toEqual([401, 401, 429, 429]);
    // The failures were recorded against the gateway's word, never the client's.
    const rows = (await t.dataSource.query(
      "SELECT address FROM audit_event WHERE action = 'sign_in' AND address IN ('192.0.2.30', '198.51.100.20', '198.51.100.21')",
    )) as { address: string }[];
    expect(rows.length).toBeGreaterThan(0);
    expect(new Set(rows.map((row) => row.address))).toEqual(new Set(['192.0.2.30']));
  });
});

describe('sign-in by the gateway with auto-registration on', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({
      REVERSE_PROXY_AUTH_ENABLED: 'true',
      REVERSE_PROXY_AUTO_REGISTRATION: 'true',
      REVERSE_PROXY_AUTH_EMAIL: 'X-Auth-Email',
      REVERSE_PROXY_AUTH_FULL_NAME: 'X-Auth-Name',
    });
  });
  afterAll(() => t.close());

  it('creates the user the gateway names, with the e-mail and full name from its headers, once', async () => {
    const name = uniqueName('sso');
    const headers = { 'X-WEBAUTH-USER': name, 'X-Auth-Email': `${name}@corp.example`, 'X-Auth-Name': 'Sam Single-Sign-On' };
    const first = await t.http.get(t.api('/user')).set(headers).expect(200);
    expect(first.body).toMatchObject({ login: name, email: `${name}@corp.example`, full_name: 'Sam Single-Sign-On' });
    const again = await t.http.get(t.api('/user')).set(headers).expect(200);
    expect(again.body.id).toBe(first.body.id);
    const stored = await t.app.get(UserStore).findByName(name);
    expect(stored?.passwdHash).toBe('');
    expect(stored?.mustChangePassword).toBe(false);
  });

  it('refuses a name that cannot be a user name (401), creating nothing', async () => {
    await t.http.get(t.api('/user')).set({ 'X-WEBAUTH-USER': 'not a name!' }).expect(401);
    expect(await t.app.get(UserStore).findByName('not a name!')).toBeNull();
  });
});
