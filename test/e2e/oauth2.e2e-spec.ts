import * as fs from 'node:fs';
import * as path from 'node:path';
import * as client from 'openid-client';
import { recordSecrets } from '../support/e2e-log';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { databaseUrl, startTestApp, TestApp } from '../support/test-app';

const ISSUER = 'http://anvil.test/';
const REDIRECT_URI = 'https://ci.example.com/authorize';

/** A browser's cookie jar, reduced to what the flow needs: the latest value of each cookie, sent everywhere. */
class Browser {
  private readonly cookies = new Map<string, string>();

  constructor(
    /** The server requests go to; a test may move the browser to another instance. */
    public base: string,
    /** Headers every request carries (a gateway's identity header, say). */
    private readonly headers: Record<string, string> = {},
  ) {}

  /** One request, redirects not followed; `url` may be on the issuer's host (it is sent to the test server). */
  async request(url: string, init: { method?: string; form?: Record<string, string> } = {}): Promise<Response> {
    const headers: Record<string, string> = { ...this.headers };
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const response = await fetch(onServer(new URL(url, ISSUER).href, this.base), { method: init.method ?? 'GET', headers, body, redirect: 'manual' });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const at = pair.indexOf('=');
      const value = pair.slice(at + 1);
      if (value === '' || /expires=Thu, 01 Jan 1970/i.test(line)) this.cookies.delete(pair.slice(0, at));
      else this.cookies.set(pair.slice(0, at), value);
    }
    return response;
  }
}

/** The issuer's URLs are ROOT_URL's (http://anvil.test/); requests go to the test server's loopback port. */
function onServer(url: string, base: string): string {
  return url.startsWith(ISSUER) ? base + url.slice(ISSUER.length) : url;
}

interface Application {
  id: number;
  name: string;
  client_id: string;
  client_secret: string;
}

async function createApplication(t: TestApp, owner: TestUser, confidential = true): Promise<Application> {
  const created = await t.http
    .post(t.api('/user/applications/oauth2'))
    .set(withToken(owner.token))
    .send({ name: uniqueName('ci'), redirect_uris: [REDIRECT_URI], confidential_client: confidential })
    .expect(201);
  recordSecrets(created.body.client_secret as string);
  return created.body as Application;
}

describe('OAuth2 / OpenID Connect provider', () => {
  let t: TestApp;
  let base: string;
  const git = new GitClient();

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
  });
  afterAll(async () => {
    git.dispose();
    await t.close();
  });

  async function discover(application: Application, confidential = true, server = base): Promise<client.Configuration> {
    return client.discovery(
      new URL(ISSUER),
      application.client_id,
      confidential ? { client_secret: application.client_secret } : undefined,
      confidential ? client.ClientSecretBasic(application.client_secret) : client.None(),
      { execute: [client.allowInsecureRequests], [client.customFetch]: (url, options) => fetch(onServer(url, server), options as RequestInit) },
    );
  }

  /**
   * The browser's part: open the authorization URL, sign in and consent on Anvil's page (with its cookies and
   * CSRF token), follow the provider back; answers the URL the application is sent to.
   */
  async function authorizeInBrowser(authorizationUrl: URL, user: TestUser): Promise<URL> {
    const browser = new Browser(base);
    const start = await browser.request(authorizationUrl.href);
    expect(start.status).toBe(303);
    const interactionUrl = start.headers.get('location')!;
    expect(new URL(interactionUrl, ISSUER).pathname).toMatch(/^\/login\/oauth\/interaction\/[\w-]+$/);
    const form = await browser.request(interactionUrl);
    expect(form.status).toBe(200);
    const page = await form.text();
    expect(page).toContain('<h1>Authorize ');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    // A wrong password is refused on the page, nothing issued.
    const refused = await browser.request(interactionUrl, {
      method: 'POST',
      form: { _csrf: csrf, decision: 'authorize', user_name: user.name, password: 'wrong password' },
    });
    expect(refused.status).toBe(401);
    const again = /name="_csrf" value="([^"]+)"/.exec(await refused.text())![1];
    const signedIn = await browser.request(interactionUrl, {
      method: 'POST',
      form: { _csrf: again, decision: 'authorize', user_name: user.name, password: user.password },
    });
    expect(signedIn.status).toBe(303);
    const resumed = await browser.request(signedIn.headers.get('location')!);
    expect(resumed.status).toBe(303);
    const callback = new URL(resumed.headers.get('location')!);
    expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT_URI);
    return callback;
  }

  it('publishes the discovery document and keys at Forgejo’s paths', async () => {
    const discovery = await t.http.get('/.well-known/openid-configuration').expect(200);
    expect(discovery.body).toMatchObject({
      issuer: ISSUER,
      authorization_endpoint: `${ISSUER}login/oauth/authorize`,
      token_endpoint: `${ISSUER}login/oauth/access_token`,
      userinfo_endpoint: `${ISSUER}login/oauth/userinfo`,
      jwks_uri: `${ISSUER}login/oauth/keys`,
      introspection_endpoint: `${ISSUER}login/oauth/introspect`,
    });
    expect(discovery.body.grant_types_supported).toEqual(expect.arrayContaining(['authorization_code', 'refresh_token']));
    expect(discovery.body.grant_types_supported).not.toContain('client_credentials');
    expect(discovery.body.code_challenge_methods_supported).toContain('S256');
    expect(discovery.body.scopes_supported).toEqual(expect.arrayContaining(['openid', 'profile', 'email', 'groups']));
    const keys = await t.http.get('/login/oauth/keys').expect(200);
    expect(keys.body.keys).toHaveLength(1);
    expect(keys.body.keys[0]).toMatchObject({ kty: 'RSA', alg: 'RS256', use: 'sig' });
    expect(keys.body.keys[0].d).toBeUndefined();
  });

  it('completes the authorization code flow with PKCE driven by openid-client, then uses the token on the API and for git', async () => {
    const owner = await makeUser(t, { fullName: 'Olive Owner' });
    const repo = await makeRepo(t, owner, { private: true, autoInit: true });
    const application = await createApplication(t, owner);
    const config = await discover(application);

    const codeVerifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const nonce = client.randomNonce();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid profile email',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state,
      nonce,
    });
    const callback = await authorizeInBrowser(authorizationUrl, owner);

    // The library checks state, issuer, the code exchange, and the ID token (signature from the keys, iss, aud, nonce, exp).
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: state, expectedNonce: nonce });
    recordSecrets(tokens.access_token, tokens.refresh_token!);
    expect(tokens.token_type.toLowerCase()).toBe('bearer');
    expect(tokens.refresh_token).toBeDefined();
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({
      iss: ISSUER,
      aud: application.client_id,
      sub: String(owner.user.id),
      preferred_username: owner.name,
      name: 'Olive Owner',
      email: owner.email,
    });

    const userinfo = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(userinfo).toMatchObject({
      sub: String(owner.user.id),
      preferred_username: owner.name,
      email: owner.email,
      picture: `${ISSUER}assets/img/avatar_default.png`,
    });

    // Refresh: a new pair (the refresh token rotated).
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    recordSecrets(refreshed.access_token, refreshed.refresh_token!);
    expect(refreshed.refresh_token).toBeDefined();
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);

    // The database holds no code or token itself, only hashes of them.
    const stored = (await t.dataSource.query('SELECT id_hash, payload FROM oauth2_record')) as { id_hash: string; payload: string }[];
    expect(stored.length).toBeGreaterThan(0);
    for (const secret of [callback.searchParams.get('code')!, tokens.access_token, tokens.refresh_token!, refreshed.access_token, refreshed.refresh_token!]) {
      expect(stored.filter((row) => row.payload.includes(secret) || row.id_hash.includes(secret))).toEqual([]);
    }

    // The access token on the API, as a bearer token, with the owner's rights.
    const me = await t.http.get(t.api('/user')).set('Authorization', `Bearer ${refreshed.access_token}`).expect(200);
    expect(me.body.login).toBe(owner.name);
    await t.http
      .get(t.api(`/repos/${owner.name}/${repo.name}`))
      .set('Authorization', `Bearer ${refreshed.access_token}`)
      .expect(200);

    // And as the password of git over HTTP: a private repository clones.
    const clone = path.join(git.home, uniqueName('clone'));
    await git.ok(['clone', '--quiet', withCredentials(base, `${owner.name}/${repo.name}.git`, 'oauth2', refreshed.access_token), clone]);
    expect(fs.existsSync(path.join(clone, 'README.md'))).toBe(true);

    // Deleting the application revokes its grants and tokens at the next request.
    await t.http
      .delete(t.api(`/user/applications/oauth2/${application.id}`))
      .set(withToken(owner.token))
      .expect(204);
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${refreshed.access_token}`).expect(401);
    const denied = await git.run(['ls-remote', withCredentials(base, `${owner.name}/${repo.name}.git`, 'oauth2', refreshed.access_token)]);
    expect(denied.code).not.toBe(0);
    // The client itself is gone: the token endpoint refuses it (401, invalid_client).
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ status: 401 });
  });

  it('requires PKCE of a public client, and a public client needs no secret', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner, false);
    const withoutPkce = new URL(`${ISSUER}login/oauth/authorize`);
    withoutPkce.search = new URLSearchParams({
      client_id: application.client_id,
      redirect_uri: REDIRECT_URI,
      response_type: 'code',
      scope: 'openid',
      state: 'x',
    }).toString();
    const refused = await new Browser(base).request(withoutPkce.href);
    expect(refused.status).toBe(303);
    const location = new URL(refused.headers.get('location')!);
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT_URI);
    expect(location.searchParams.get('error')).toBe('invalid_request');

    const config = await discover(application, false);
    const codeVerifier = client.randomPKCECodeVerifier();
    const authorizationUrl = client.buildAuthorizationUrl(config, {
      redirect_uri: REDIRECT_URI,
      scope: 'openid read:user',
      code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
      code_challenge_method: 'S256',
      state: 'public',
    });
    const callback = await authorizeInBrowser(authorizationUrl, owner);
    const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: 'public' });
    recordSecrets(tokens.access_token);
    // The grant named an API scope: the token may read the user, and nothing else.
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await t.http
      .post(t.api('/user/repos'))
      .set('Authorization', `Bearer ${tokens.access_token}`)
      .send({ name: uniqueName('repo') })
      .expect(403);

    // A refresh token is good once: presented again (stolen and replayed), it is refused and the whole grant is
    // revoked, so the tokens issued since stop working too.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    recordSecrets(refreshed.access_token, refreshed.refresh_token!);
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${refreshed.access_token}`).expect(200);
    await expect(client.refreshTokenGrant(config, tokens.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${refreshed.access_token}`).expect(401);
    await expect(client.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: 'invalid_grant' });
  });

  it('bounds every token by the grant’s consented scopes: a refresh or a silent re-authorization narrows, never widens', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const config = await discover(application);
    const browser = new Browser(base);
    const start = await browser.request(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid read:user', state: 'narrow' }).href);
    const interactionUrl = start.headers.get('location')!;
    const page = await (await browser.request(interactionUrl)).text();
    expect(page).toContain('<code>read:user</code>');
    expect(page).not.toContain('full access');
    const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
    const signedIn = await browser.request(interactionUrl, {
      method: 'POST',
      form: { _csrf: csrf, decision: 'authorize', user_name: owner.name, password: owner.password },
    });
    const callback = new URL((await browser.request(signedIn.headers.get('location')!)).headers.get('location')!);
    const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: 'narrow' });
    recordSecrets(tokens.access_token, tokens.refresh_token!);
    const createRepo = (token: string) =>
      t.http
        .post(t.api('/user/repos'))
        .set('Authorization', `Bearer ${token}`)
        .send({ name: uniqueName('escalated') });
    await createRepo(tokens.access_token).expect(403);

    // A refresh asking for `openid` alone (no API scope) keeps the grant's bound instead of meaning `all`.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!, { scope: 'openid' });
    recordSecrets(refreshed.access_token, refreshed.refresh_token!);
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${refreshed.access_token}`).expect(200);
    await createRepo(refreshed.access_token).expect(403);

    // So does a silent re-authorization in the same browser session asking for `openid` alone.
    const again = await browser.request(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', state: 'silent' }).href);
    let location = new URL(again.headers.get('location')!, ISSUER);
    for (let hop = 0; hop < 3 && location.pathname !== new URL(REDIRECT_URI).pathname; hop++) {
      location = new URL((await browser.request(location.href)).headers.get('location')!, ISSUER);
    }
    expect(location.searchParams.get('code')).toBeTruthy();
    const silent = await client.authorizationCodeGrant(config, location, { expectedState: 'silent' });
    recordSecrets(silent.access_token, silent.refresh_token ?? '');
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${silent.access_token}`).expect(200);
    await createRepo(silent.access_token).expect(403);
    const owned = await t.http.get(t.api('/user/repos')).set(withToken(owner.token)).expect(200);
    expect(owned.body).toEqual([]);

    // A grant without API scopes gives full access, and its consent page says so.
    const other = await createApplication(t, owner);
    const fresh = new Browser(base);
    const full = await fresh.request(client.buildAuthorizationUrl(await discover(other), { redirect_uri: REDIRECT_URI, scope: 'openid', state: 'full' }).href);
    const fullPage = await (await fresh.request(full.headers.get('location')!)).text();
    expect(fullPage).toContain('full access to your account');
  });

  it('serves a client that asks as Woodpecker and Drone do: no scope, no PKCE, a confidential client with Basic', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const config = await discover(application);
    const authorizationUrl = client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, state: 'ci-state' });
    expect(authorizationUrl.searchParams.has('scope')).toBe(false);
    const callback = await authorizeInBrowser(authorizationUrl, owner);
    const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: 'ci-state' });
    recordSecrets(tokens.access_token, tokens.refresh_token ?? '');
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeDefined();
    // No API scope was asked for: as from Forgejo, the token may do all its user may.
    const created = await t.http
      .post(t.api('/user/repos'))
      .set('Authorization', `token ${tokens.access_token}`)
      .send({ name: uniqueName('repo'), private: true })
      .expect(201);
    expect(created.body.owner.login).toBe(owner.name);
  });

  it('exchanges a code as Drone does: the client’s credentials in the form, GitHub-style scopes Anvil does not know', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const authorize = new URL(`${ISSUER}login/oauth/authorize`);
    authorize.search = new URLSearchParams({
      response_type: 'code',
      client_id: application.client_id,
      scope: 'repo user:email',
      state: 'drone',
      redirect_uri: REDIRECT_URI,
    }).toString();
    const callback = await authorizeInBrowser(authorize, owner);
    expect(callback.searchParams.get('state')).toBe('drone');
    const exchanged = await fetch(`${base}login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code: callback.searchParams.get('code')!,
        client_id: application.client_id,
        client_secret: application.client_secret,
        state: 'drone',
        redirect_uri: REDIRECT_URI,
      }).toString(),
    });
    expect(exchanged.status).toBe(200);
    const tokens = (await exchanged.json()) as { access_token: string; refresh_token: string; token_type: string; expires_in: number };
    recordSecrets(tokens.access_token, tokens.refresh_token);
    expect(tokens).toMatchObject({ token_type: 'Bearer', expires_in: 3600 });
    expect(typeof tokens.refresh_token).toBe('string');
    const me = await t.http.get(t.api('/user')).set('Authorization', `token ${tokens.access_token}`).expect(200);
    expect(me.body.login).toBe(owner.name);
  });

  it('revoking the grant (its refresh token, at the revocation endpoint) stops its access token at the next request', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const config = await discover(application);
    const callback = await authorizeInBrowser(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', state: 'revoke' }), owner);
    const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: 'revoke' });
    recordSecrets(tokens.access_token, tokens.refresh_token!);
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
    await client.tokenRevocation(config, tokens.refresh_token!, { token_type_hint: 'refresh_token' });
    await t.http.get(t.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
    const rows = await t.dataSource.query("SELECT COUNT(*) AS n FROM oauth2_record WHERE client_id = ? AND kind IN ('Grant', 'AccessToken', 'RefreshToken')", [
      application.client_id,
    ]);
    expect(Number(rows[0].n)).toBe(0);

    // The audit log has the application, the user's consent (from the browser's address) and the revocation,
    // newest first, and no secret.
    const admin = await makeUser(t, { admin: true });
    const events = await t.http
      .get(t.api('/admin/audit'))
      .query({ target: `oauth2_application:${application.name}` })
      .set(withToken(admin.token))
      .expect(200);
    expect(events.body.map((event: { action: string }) => event.action)).toEqual(['oauth2_grant.revoke', 'oauth2_grant.create', 'oauth2_application.create']);
    const [revoked, granted] = events.body;
    expect(granted).toMatchObject({
      outcome: 'success',
      actor: { id: owner.user.id, login: owner.name },
      target: { type: 'oauth2_application', id: application.id },
      detail: { client_id: application.client_id, scopes: ['openid'] },
    });
    expect(granted.address).toMatch(/127\.0\.0\.1$/);
    expect(revoked.detail).toMatchObject({ client_id: application.client_id, account_id: owner.user.id });
    const text = JSON.stringify(events.body);
    for (const secret of [application.client_secret, tokens.access_token, tokens.refresh_token!]) expect(text).not.toContain(secret);
  });

  it('refuses a sign-in form without its CSRF token, and a body over the cap', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const config = await discover(application);
    const browser = new Browser(base);
    const start = await browser.request(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid', state: 's' }).href);
    const interactionUrl = start.headers.get('location')!;
    const page = await browser.request(interactionUrl);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect(page.headers.get('cache-control')).toBe('no-store');
    for (const csrf of ['forged', '']) {
      const refused = await browser.request(interactionUrl, {
        method: 'POST',
        form: { _csrf: csrf, decision: 'authorize', user_name: owner.name, password: owner.password },
      });
      expect(refused.status).toBe(403);
      expect(refused.headers.get('location')).toBeNull();
    }
    const tooLarge = await fetch(`${base}login/oauth/access_token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=authorization_code&code=${'x'.repeat(20_000)}`,
    });
    expect(tooLarge.status).toBe(413);
  });

  it('a code from an unregistered redirect URI is never issued', async () => {
    const owner = await makeUser(t);
    const application = await createApplication(t, owner);
    const url = new URL(`${ISSUER}login/oauth/authorize`);
    url.search = new URLSearchParams({
      client_id: application.client_id,
      redirect_uri: 'https://ci.example.com/authorize/other',
      response_type: 'code',
      scope: 'openid',
    }).toString();
    const answer = await new Browser(base).request(url.href);
    expect(answer.status).toBe(400);
    expect(answer.headers.get('location')).toBeNull();
  });

  describe('behind a gateway that signs users in, with a tight OAuth2 rate limit', () => {
    let g: TestApp;
    let gatewayBase: string;
    const LIMIT = 8;
    const REQUESTS = 40;

    beforeAll(async () => {
      // The window is long so that no count expires while the test runs, however slow the machine.
      g = await startTestApp({
        REVERSE_PROXY_AUTH_ENABLED: 'true',
        RATE_LIMIT_OAUTH2: String(LIMIT),
        RATE_LIMIT_OAUTH2_REQUESTS: String(REQUESTS),
        RATE_LIMIT_WINDOW_MS: '3600000',
      });
      gatewayBase = await g.listen();
    });
    afterAll(() => g.close());

    it('takes the gateway’s user on the consent page (no password asked), then refuses the client address past the limit', async () => {
      const owner = await makeUser(g);
      const application = await createApplication(g, owner);
      const config = await discover(application, true, gatewayBase);
      const browser = new Browser(gatewayBase, { 'X-WEBAUTH-USER': owner.name });
      const start = await browser.request(client.buildAuthorizationUrl(config, { redirect_uri: REDIRECT_URI, scope: 'openid profile', state: 'gw' }).href);
      expect(start.status).toBe(303);
      const interactionUrl = start.headers.get('location')!;
      const page = await (await browser.request(interactionUrl)).text();
      expect(page).toContain(`Signed in as <strong>${owner.name}</strong>`);
      expect(page).not.toContain('name="password"');
      const csrf = /name="_csrf" value="([^"]+)"/.exec(page)![1];
      const consented = await browser.request(interactionUrl, { method: 'POST', form: { _csrf: csrf, decision: 'authorize' } });
      expect(consented.status).toBe(303);
      const resumed = await browser.request(consented.headers.get('location')!);
      const callback = new URL(resumed.headers.get('location')!);
      const tokens = await client.authorizationCodeGrant(config, callback, { expectedState: 'gw' });
      recordSecrets(tokens.access_token, tokens.refresh_token ?? '');
      expect(tokens.claims()).toMatchObject({ sub: String(owner.user.id), preferred_username: owner.name });
      const me = await g.http.get(g.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
      expect(me.body.login).toBe(owner.name);

      // Successes are not failures: one address (an office behind one NAT) uses the token at userinfo many more
      // times than RATE_LIMIT_OAUTH2 allows failures.
      const userinfo = (from: string) =>
        fetch(`${gatewayBase}login/oauth/userinfo`, { headers: { authorization: `Bearer ${tokens.access_token}`, 'x-forwarded-for': from } });
      for (let call = 0; call < 3 * LIMIT; call++) expect((await userinfo('198.51.100.50')).status).toBe(200);
      // Every request, successful or not, meets the generous cap RATE_LIMIT_OAUTH2_REQUESTS.
      const statuses: number[] = [];
      for (let call = 0; call <= REQUESTS; call++) statuses.push((await userinfo('198.51.100.60')).status);
      expect(statuses).toEqual([...Array(REQUESTS).fill(200), 429]);

      // Failures are counted: the token endpoint refuses this address once it failed RATE_LIMIT_OAUTH2 times,
      // and says when to come back.
      let refused: Response | undefined;
      for (let attempt = 0; attempt <= LIMIT && !refused; attempt++) {
        const answer = await fetch(`${gatewayBase}login/oauth/access_token`, {
          method: 'POST',
          headers: {
            'content-type': 'application/x-www-form-urlencoded',
            authorization: `Basic ${Buffer.from(`${application.client_id}:${application.client_secret}`).toString('base64')}`,
          },
          body: 'grant_type=authorization_code&code=unknown&redirect_uri=' + encodeURIComponent(REDIRECT_URI),
        });
        if (answer.status === 429) refused = answer;
        else expect(answer.status).toBe(400);
      }
      expect(refused).toBeDefined();
      expect(Number(refused!.headers.get('retry-after'))).toBeGreaterThan(0);
    });
  });

  describe('two instances on one database, sharing SECRET_KEY', () => {
    let first: TestApp;
    let second: TestApp;
    let firstBase: string;
    let secondBase: string;

    beforeAll(async () => {
      const env = { SECRET_KEY: 'a shared secret key for both instances' };
      first = await startTestApp(env);
      second = await startTestApp({ ...env, DATABASE_URL: databaseUrl(first.config) });
      firstBase = await first.listen();
      secondBase = await second.listen();
    });
    afterAll(async () => {
      await second?.close();
      await first?.close();
    });

    it('sign with one key, and a flow started on one instance finishes on the other', async () => {
      const keys = await Promise.all([first, second].map(async (app) => (await app.http.get('/login/oauth/keys').expect(200)).body));
      expect(keys[1]).toEqual(keys[0]);

      const owner = await makeUser(first);
      const application = await createApplication(first, owner);
      const config = await discover(application, true, secondBase);
      const codeVerifier = client.randomPKCECodeVerifier();
      const authorizationUrl = client.buildAuthorizationUrl(config, {
        redirect_uri: REDIRECT_URI,
        scope: 'openid',
        code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
        code_challenge_method: 'S256',
        state: 'two',
      });
      // Authorize and sign in on the first instance, resume on the second; the code is exchanged on the second.
      const browser = new Browser(firstBase);
      const interactionUrl = (await browser.request(authorizationUrl.href)).headers.get('location')!;
      const csrf = /name="_csrf" value="([^"]+)"/.exec(await (await browser.request(interactionUrl)).text())![1];
      const signedIn = await browser.request(interactionUrl, {
        method: 'POST',
        form: { _csrf: csrf, decision: 'authorize', user_name: owner.name, password: owner.password },
      });
      expect(signedIn.status).toBe(303);
      browser.base = secondBase;
      const callback = new URL((await browser.request(signedIn.headers.get('location')!)).headers.get('location')!);
      const tokens = await client.authorizationCodeGrant(config, callback, { pkceCodeVerifier: codeVerifier, expectedState: 'two' });
      recordSecrets(tokens.access_token, tokens.refresh_token ?? '');
      expect(tokens.claims()!.sub).toBe(String(owner.user.id));
      // The token works on the instance that did not issue it, and is revoked on both by a delete on either.
      await first.http.get(first.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(200);
      await second.http
        .delete(second.api(`/user/applications/oauth2/${application.id}`))
        .set(withToken(owner.token))
        .expect(204);
      await first.http.get(first.api('/user')).set('Authorization', `Bearer ${tokens.access_token}`).expect(401);
    });

    it('an instance with another SECRET_KEY starts, and its OAuth2 endpoints answer 503 instead of signing with another key', async () => {
      const stranger = await startTestApp({ SECRET_KEY: 'another key', DATABASE_URL: databaseUrl(first.config) });
      try {
        const refused = await stranger.http.get('/.well-known/openid-configuration').expect(503);
        expect(refused.body.error_description).toContain('SECRET_KEY');
        await stranger.http.get('/login/oauth/keys').expect(503);
        await stranger.http.get(stranger.api('/version')).expect(200);
      } finally {
        await stranger.close();
      }
    });
  });

  describe('applications API', () => {
    it('shows the secret only when created, stores it hashed, and lists the caller’s applications', async () => {
      const owner = await makeUser(t);
      const created = await t.http
        .post(t.api('/user/applications/oauth2'))
        .set(withToken(owner.token))
        .send({ name: 'Woodpecker', redirect_uris: [REDIRECT_URI], confidential_client: true })
        .expect(201);
      recordSecrets(created.body.client_secret);
      expect(created.body).toMatchObject({ name: 'Woodpecker', redirect_uris: [REDIRECT_URI], confidential_client: true });
      expect(created.body.client_secret).toMatch(/^gto_[a-z2-7]{52}$/);
      expect(created.body.client_id).toMatch(/^[0-9a-f-]{36}$/);
      expect(Number.isNaN(Date.parse(created.body.created))).toBe(false);
      const listed = await t.http.get(t.api('/user/applications/oauth2')).set(withToken(owner.token)).expect(200);
      expect(listed.headers['x-total-count']).toBe('1');
      expect(listed.body).toEqual([{ ...created.body, client_secret: '' }]);
      const one = await t.http
        .get(t.api(`/user/applications/oauth2/${created.body.id}`))
        .set(withToken(owner.token))
        .expect(200);
      expect(one.body.client_secret).toBe('');
      const rows = await t.dataSource.query('SELECT client_secret_hash FROM oauth2_application WHERE id = ?', [created.body.id]);
      expect(rows[0].client_secret_hash).not.toContain(created.body.client_secret);
      expect(rows[0].client_secret_hash).toMatch(/^[0-9a-f]{100}$/);

      // PATCH changes the application and gives it a new secret, as Forgejo does.
      const updated = await t.http
        .patch(t.api(`/user/applications/oauth2/${created.body.id}`))
        .set(withToken(owner.token))
        .send({ name: 'Drone', redirect_uris: ['https://drone.example.com/login'] })
        .expect(200);
      recordSecrets(updated.body.client_secret);
      expect(updated.body).toMatchObject({
        id: created.body.id,
        client_id: created.body.client_id,
        name: 'Drone',
        redirect_uris: ['https://drone.example.com/login'],
        confidential_client: false,
      });
      expect(updated.body.client_secret).toMatch(/^gto_/);
      expect(updated.body.client_secret).not.toBe(created.body.client_secret);
    });

    it('answers 422 for a missing or bad redirect URI or name', async () => {
      const owner = await makeUser(t);
      for (const body of [
        { name: 'ci', redirect_uris: ['not a url'] },
        { name: 'ci', redirect_uris: ['https://ci.example.com/cb#fragment'] },
        { name: 'ci', redirect_uris: ['javascript:alert(1)'] },
        { name: 'ci', redirect_uris: [] },
        { name: 'ci' },
        { redirect_uris: [REDIRECT_URI] },
      ]) {
        await t.http.post(t.api('/user/applications/oauth2')).set(withToken(owner.token)).send(body).expect(422);
      }
      const listed = await t.http.get(t.api('/user/applications/oauth2')).set(withToken(owner.token)).expect(200);
      expect(listed.body).toEqual([]);
    });

    it('answers 404 for another user’s application, and 401 without sign-in', async () => {
      const owner = await makeUser(t);
      const other = await makeUser(t);
      const application = await createApplication(t, owner);
      const id = application.id;
      await t.http
        .get(t.api(`/user/applications/oauth2/${id}`))
        .set(withToken(other.token))
        .expect(404);
      await t.http
        .patch(t.api(`/user/applications/oauth2/${id}`))
        .set(withToken(other.token))
        .send({ name: 'x', redirect_uris: [REDIRECT_URI] })
        .expect(404);
      await t.http
        .delete(t.api(`/user/applications/oauth2/${id}`))
        .set(withToken(other.token))
        .expect(404);
      await t.http.get(t.api('/user/applications/oauth2/nonsense')).set(withToken(owner.token)).expect(404);
      await t.http.get(t.api('/user/applications/oauth2')).expect(401);
      await t.http
        .get(t.api(`/user/applications/oauth2/${id}`))
        .set(withToken(owner.token))
        .expect(200);
    });
  });
});
