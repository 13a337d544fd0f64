import { UsersService } from '../../src/users/users.service';
import { makeToken, makeUser, TestUser, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('authentication and authorization', () => {
  let t: TestApp;
  let alice: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const me = (headers: Record<string, string>, query = '') => t.http.get(t.api(`/user${query}`)).set(headers);

  describe('credential carriers', () => {
    it.each([
      ['token', (token: string) => ({ Authorization: `token ${token}` })],
      ['Bearer', (token: string) => ({ Authorization: `Bearer ${token}` })],
      ['case-insensitive scheme', (token: string) => ({ Authorization: `TOKEN ${token}` })],
    ])('accepts the %s header', async (_name, header) => {
      const response = await me(header(alice.token)).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('accepts Basic auth with the password', async () => {
      const response = await me(withBasic(alice.name, alice.password)).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('accepts Basic auth with the user name case-insensitively', async () => {
      await me(withBasic(alice.name.toUpperCase(), alice.password)).expect(200);
    });

    it('accepts a token as the Basic password', async () => {
      const response = await me(withBasic(alice.name, alice.token)).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it.each(['', 'x-oauth-basic'])('takes the user name as the token when the password is "%s"', async (password) => {
      const response = await me(withBasic(alice.token, password)).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it.each(['token', 'access_token'])('accepts ?%s= and warns that it is deprecated', async (key) => {
      const response = await me({}, `?${key}=${alice.token}`).expect(200);
      expect(response.body.login).toBe(alice.name);
      expect(response.headers.warning).toMatch(/deprecated/);
    });
  });

  describe('bad credentials are a 401 on every route', () => {
    const badToken = 'f'.repeat(40);

    it.each(['/version', '/user', '/no/such/route'])('a token that does not exist on %s', async (path) => {
      const response = await t.http.get(t.api(path)).set(withToken(badToken)).expect(401);
      expect(response.body.message).toContain('access token does not exist');
      expect(response.body.url).toBe('http://anvil.test/api/swagger');
    });

    it('an uppercase copy of a valid token does not exist', async () => {
      await me(withToken(alice.token.toUpperCase())).expect(401);
    });

    it('a token of the wrong length does not exist', async () => {
      await me(withToken(alice.token.slice(1))).expect(401);
    });

    it('a bad token in the query string', async () => {
      await t.http.get(t.api(`/version?token=${badToken}`)).expect(401);
    });

    it.each([
      ['three parts', 'token a b'],
      ['one part', 'token'],
      ['an unknown scheme', 'Digest abc'],
      ['Basic data that is not base64', 'Basic !!!notbase64'],
      ['Basic data without a colon', `Basic ${Buffer.from('nocolon').toString('base64')}`],
    ])('a malformed Authorization header (%s)', async (_name, header) => {
      const response = await t.http.get(t.api('/version')).set('Authorization', header).expect(401);
      expect(response.body.message).toEqual(expect.any(String));
    });

    it('a wrong password', async () => {
      const response = await me(withBasic(alice.name, 'wrong-password')).expect(401);
      expect(response.body.message).not.toBe('');
    });

    it('an unknown user with a password', async () => {
      await me(withBasic('nobody-here', 'whatever-password')).expect(401);
    });
  });

  it('an anonymous call to a signed-in route is a 401 "token is required"', async () => {
    const response = await t.http.get(t.api('/user')).expect(401);
    expect(response.body).toEqual({ message: 'token is required', url: 'http://anvil.test/api/swagger' });
  });

  it('anonymous callers may use public routes', async () => {
    await t.http.get(t.api('/version')).expect(200);
  });

  describe('account state (403 on every route)', () => {
    it('a user whose login is prohibited', async () => {
      const user = await makeUser(t);
      await t.app.get(UsersService).edit(user.name, { prohibitLogin: true });
      const response = await t.http.get(t.api('/version')).set(withToken(user.token)).expect(403);
      expect(response.body).toEqual({
        message: 'This account is prohibited from signing in, please contact your site administrator.',
        url: 'http://anvil.test/api/swagger',
      });
    });

    it('an inactive user', async () => {
      const user = await makeUser(t);
      await t.app.get(UsersService).edit(user.name, { active: false });
      const response = await me(withBasic(user.name, user.password)).expect(403);
      expect(response.body.message).toContain('prohibited from signing in');
    });

    it('a user who must change the password cannot call anything, not even token creation, until an admin clears it', async () => {
      const user = await makeUser(t);
      await t.app.get(UsersService).edit(user.name, { mustChangePassword: true });
      const denied = await me(withToken(user.token)).expect(403);
      expect(denied.body.message).toMatch(/^You must change your password\. Change it at: http:\/\/anvil\.test\//);
      await t.http
        .post(t.api(`/users/${user.name}/tokens`))
        .set(withBasic(user.name, user.password))
        .send({ name: 'x', scopes: ['all'] })
        .expect(403);
      await t.http
        .patch(t.api(`/admin/users/${user.name}`))
        .set(withToken(admin.token))
        .send({ must_change_password: false })
        .expect(200);
      await me(withToken(user.token)).expect(200);
    });
  });

  describe('sudo', () => {
    it('an admin acts as another user with ?sudo=', async () => {
      const response = await me(withToken(admin.token), `?sudo=${alice.name}`).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('an admin acts as another user with the Sudo header', async () => {
      const response = await me({ ...withToken(admin.token), Sudo: alice.name }).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('anyone else gets a 403', async () => {
      const response = await me(withToken(alice.token), `?sudo=${admin.name}`).expect(403);
      expect(response.body.message).toBe('Only administrators allowed to sudo.');
    });

    it('an admin with a public-only token may not sudo', async () => {
      const token = await makeToken(t, admin.user, ['public-only', 'all']);
      await me(withToken(token), `?sudo=${alice.name}`).expect(403);
    });

    it('an unknown sudo target is a 404', async () => {
      await me(withToken(admin.token), '?sudo=no-such-user').expect(404);
    });
  });

  describe('token scopes', () => {
    it('a token with the read scope may read', async () => {
      const token = await makeToken(t, alice.user, ['read:user']);
      await me(withToken(token)).expect(200);
    });

    it('a token without the category gets a 403 naming the required scope', async () => {
      const token = await makeToken(t, alice.user, ['read:repository']);
      const response = await me(withToken(token)).expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
    });

    it('write implies read', async () => {
      const token = await makeToken(t, alice.user, ['write:user']);
      await me(withToken(token)).expect(200);
    });

    it('a read scope does not allow writing', async () => {
      const token = await makeToken(t, admin.user, ['read:admin']);
      const response = await t.http.post(t.api('/admin/users')).set(withToken(token)).send({}).expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [write:admin]');
    });

    it('the scope check comes before the sign-in check (scope 403 → sign-in 401)', async () => {
      const token = await makeToken(t, alice.user, ['read:misc']);
      await me(withToken(token)).expect(403);
    });

    it('password Basic auth is never restricted by scopes', async () => {
      await t.http
        .patch(t.api(`/admin/users/${alice.name}`))
        .set(withBasic(admin.name, admin.password))
        .send({})
        .expect(200);
    });

    it('a public-only token loses the caller’s admin powers', async () => {
      const token = await makeToken(t, admin.user, ['public-only', 'all']);
      const response = await t.http
        .patch(t.api(`/admin/users/${alice.name}`))
        .set(withToken(token))
        .send({})
        .expect(403);
      expect(response.body.message).toBe('user should be the site admin');
    });
  });

  describe('site admin guard', () => {
    it('a signed-in non-admin gets 403 "user should be the site admin"', async () => {
      const response = await t.http.post(t.api('/admin/users')).set(withToken(alice.token)).send({}).expect(403);
      expect(response.body.message).toBe('user should be the site admin');
    });

    it('an anonymous caller gets 401', async () => {
      await t.http.post(t.api('/admin/users')).send({}).expect(401);
    });
  });

  it('GET /user renders the caller with the private fields', async () => {
    const response = await me(withToken(admin.token)).expect(200);
    expect(response.body).toMatchObject({
      id: admin.user.id,
      login: admin.name,
      email: admin.email,
      is_admin: true,
      active: true,
      prohibit_login: false,
      username: admin.name,
    });
    expect(Object.keys(response.body).at(-1)).toBe('username');
    expect(typeof response.body.id).toBe('number');
  });
});
