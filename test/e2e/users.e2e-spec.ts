import { makeOrg, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const USER_KEYS = [
  'id',
  'login',
  'full_name',
  'email',
  'avatar_url',
  'html_url',
  'is_admin',
  'created',
  'restricted',
  'active',
  'prohibit_login',
  'location',
  'website',
  'description',
  'visibility',
  'followers_count',
  'following_count',
  'starred_repos_count',
  'username',
];

describe('user profiles: GET /users/{username} and GET /user', () => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let limited: TestUser;
  let secret: TestUser;

  const patch = (name: string, body: Record<string, unknown>) =>
    t.http
      .patch(t.api(`/admin/users/${name}`))
      .set(withToken(admin.token))
      .send(body)
      .expect(200);

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    alice = await makeUser(t, { fullName: 'Alice Liddell' });
    bob = await makeUser(t);
    limited = await makeUser(t, { visibility: 'limited' });
    secret = await makeUser(t, { visibility: 'private' });
    await patch(alice.name, { location: 'Wonderland', website: 'https://alice.example', description: 'curious' });
  });
  afterAll(() => t.close());

  describe('GET /users/{username}', () => {
    it('answers a public user to anonymous callers with exactly the User fields, in order', async () => {
      const response = await t.http.get(t.api(`/users/${alice.name}`)).expect(200);
      expect(Object.keys(response.body)).toEqual(USER_KEYS);
      expect(response.headers['content-type']).toBe('application/json;charset=utf-8');
      expect(response.body).toMatchObject({
        id: alice.user.id,
        login: alice.name,
        username: alice.name,
        full_name: 'Alice Liddell',
        avatar_url: 'http://anvil.test/assets/img/avatar_default.png',
        html_url: `http://anvil.test/${alice.name}`,
        location: 'Wonderland',
        website: 'https://alice.example',
        description: 'curious',
        visibility: 'public',
        is_admin: false,
        active: false,
        prohibit_login: false,
        restricted: false,
        followers_count: 0,
        following_count: 0,
        starred_repos_count: 0,
      });
      expect(response.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    });

    it('matches the name case-insensitively and answers with the stored spelling', async () => {
      const response = await t.http.get(t.api(`/users/${alice.name.toUpperCase()}`)).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('gives anonymous callers the no-reply placeholder instead of the address', async () => {
      const response = await t.http.get(t.api(`/users/${alice.name}`)).expect(200);
      expect(response.body.email).toBe(`${alice.name.toLowerCase()}@noreply.anvil.test`);
    });

    it('shows the real address to signed-in callers', async () => {
      const response = await t.http
        .get(t.api(`/users/${alice.name}`))
        .set(withToken(bob.token))
        .expect(200);
      expect(response.body.email).toBe(alice.email);
    });

    it('hides a private address (hide_email) from other users, not from the user or a site admin', async () => {
      const hider = await makeUser(t);
      await patch(hider.name, { hide_email: true });
      const placeholder = `${hider.name.toLowerCase()}@noreply.anvil.test`;
      expect(
        (
          await t.http
            .get(t.api(`/users/${hider.name}`))
            .set(withToken(bob.token))
            .expect(200)
        ).body.email,
      ).toBe(placeholder);
      expect(
        (
          await t.http
            .get(t.api(`/users/${hider.name}`))
            .set(withToken(hider.token))
            .expect(200)
        ).body.email,
      ).toBe(hider.email);
      expect(
        (
          await t.http
            .get(t.api(`/users/${hider.name}`))
            .set(withToken(admin.token))
            .expect(200)
        ).body.email,
      ).toBe(hider.email);
    });

    it('shows is_admin, active and prohibit_login only to the user and site admins; restricted to everyone', async () => {
      const flagged = await makeUser(t);
      await patch(flagged.name, { admin: true, restricted: true });
      const other = (
        await t.http
          .get(t.api(`/users/${flagged.name}`))
          .set(withToken(bob.token))
          .expect(200)
      ).body;
      expect(other).toMatchObject({ is_admin: false, active: false, prohibit_login: false, restricted: true });
      const self = (
        await t.http
          .get(t.api(`/users/${flagged.name}`))
          .set(withToken(flagged.token))
          .expect(200)
      ).body;
      expect(self).toMatchObject({ is_admin: true, active: true, prohibit_login: false, restricted: true });
      const byAdmin = (
        await t.http
          .get(t.api(`/users/${flagged.name}`))
          .set(withToken(admin.token))
          .expect(200)
      ).body;
      expect(byAdmin).toMatchObject({ is_admin: true, active: true });
    });

    it('answers 404 with an empty body for an unknown user', async () => {
      const response = await t.http.get(t.api('/users/nobody-here')).expect(404);
      expect(response.text).toBe('');
    });

    it('hides a limited user from anonymous callers only', async () => {
      await t.http.get(t.api(`/users/${limited.name}`)).expect(404);
      const response = await t.http
        .get(t.api(`/users/${limited.name}`))
        .set(withToken(bob.token))
        .expect(200);
      expect(response.body.visibility).toBe('limited');
    });

    it('hides a limited user from a restricted caller', async () => {
      const restricted = await makeUser(t);
      await patch(restricted.name, { restricted: true });
      await t.http
        .get(t.api(`/users/${limited.name}`))
        .set(withToken(restricted.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${alice.name}`))
        .set(withToken(restricted.token))
        .expect(200);
    });

    it('shows a private user to themselves and site admins only, even one who follows the caller', async () => {
      await t.http
        .put(t.api(`/user/following/${bob.name}`))
        .set(withToken(secret.token))
        .expect(204);
      await t.http.get(t.api(`/users/${secret.name}`)).expect(404);
      await t.http
        .get(t.api(`/users/${secret.name}`))
        .set(withToken(bob.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${secret.name}`))
        .set(withToken(secret.token))
        .expect(200);
      const response = await t.http
        .get(t.api(`/users/${secret.name}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(response.body.visibility).toBe('private');
    });

    it('answers a public-only token 403 on a non-public user, after the lookup', async () => {
      const publicOnly = await makeToken(t, bob.user, ['public-only', 'read:user']);
      const response = await t.http
        .get(t.api(`/users/${limited.name}`))
        .set(withToken(publicOnly))
        .expect(403);
      expect(response.body).toEqual({ message: 'token scope is limited to public users', url: 'http://anvil.test/api/swagger' });
      await t.http.get(t.api('/users/nobody-here')).set(withToken(publicOnly)).expect(404);
      await t.http
        .get(t.api(`/users/${alice.name}`))
        .set(withToken(publicOnly))
        .expect(200);
    });

    it('lets a public-only token read its own non-public user', async () => {
      const publicOnly = await makeToken(t, limited.user, ['public-only', 'read:user']);
      await t.http
        .get(t.api(`/users/${limited.name}`))
        .set(withToken(publicOnly))
        .expect(200);
    });

    it('answers a token without read:user 403 before the lookup', async () => {
      const token = await makeToken(t, bob.user, ['read:repository']);
      const response = await t.http.get(t.api('/users/nobody-here')).set(withToken(token)).expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
    });

    it('renders an organisation as a User, and hides a private one from non-members', async () => {
      const org = await makeOrg(t, alice.user);
      const response = await t.http.get(t.api(`/users/${org.name}`)).expect(200);
      expect(Object.keys(response.body)).toEqual(USER_KEYS);
      expect(response.body).toMatchObject({ id: org.id, login: org.name, visibility: 'public' });
      const hidden = await makeOrg(t, alice.user, { visibility: 'private' });
      await t.http
        .get(t.api(`/users/${hidden.name}`))
        .set(withToken(bob.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}`))
        .set(withToken(alice.token))
        .expect(200);
      await t.http
        .get(t.api(`/users/${hidden.name}`))
        .set(withToken(admin.token))
        .expect(200);
    });

    it('shows the stored follower counters', async () => {
      const fan = await makeUser(t);
      const star = await makeUser(t);
      await t.http
        .put(t.api(`/user/following/${star.name}`))
        .set(withToken(fan.token))
        .expect(204);
      expect((await t.http.get(t.api(`/users/${star.name}`)).expect(200)).body.followers_count).toBe(1);
      expect((await t.http.get(t.api(`/users/${fan.name}`)).expect(200)).body.following_count).toBe(1);
    });
  });

  describe('GET /user', () => {
    it('answers the caller with the real private fields', async () => {
      const response = await t.http.get(t.api('/user')).set(withToken(alice.token)).expect(200);
      expect(Object.keys(response.body)).toEqual(USER_KEYS);
      expect(response.body).toMatchObject({ id: alice.user.id, login: alice.name, email: alice.email, active: true, is_admin: false });
    });

    it('keeps the real address for the caller even when it is hidden from others', async () => {
      const hider = await makeUser(t);
      await patch(hider.name, { hide_email: true });
      expect((await t.http.get(t.api('/user')).set(withToken(hider.token)).expect(200)).body.email).toBe(hider.email);
    });

    it('answers the sudo target for a site admin', async () => {
      const response = await t.http
        .get(t.api(`/user?sudo=${bob.name}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(response.body).toMatchObject({ login: bob.name, email: bob.email, is_admin: false });
    });

    it('answers anonymous callers 401', async () => {
      const response = await t.http.get(t.api('/user')).expect(401);
      expect(response.body.message).toBe('token is required');
    });

    it('answers a token without read:user 403', async () => {
      const token = await makeToken(t, alice.user, ['read:repository']);
      const response = await t.http.get(t.api('/user')).set(withToken(token)).expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
    });
  });
});
