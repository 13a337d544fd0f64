import { AccessTokenEntity } from '../../src/users/access-token.entity';
import { makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('access tokens', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const create = (owner: string, headers: Record<string, string>, body: unknown) =>
    t.http
      .post(t.api(`/users/${owner}/tokens`))
      .set(headers)
      .send(body as object);

  describe('POST /users/{username}/tokens', () => {
    it('creates a token shown once, which then authenticates', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), {
        name: uniqueName('ci'),
        scopes: ['write:repository', 'read:user'],
      }).expect(201);
      expect(response.body).toEqual({
        id: expect.any(Number),
        name: expect.any(String),
        sha1: expect.stringMatching(/^[0-9a-f]{40}$/),
        token_last_eight: response.body.sha1.slice(-8),
        scopes: ['write:repository', 'read:user'],
        created_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/),
        repositories: null,
      });
      const me = await t.http.get(t.api('/user')).set(withToken(response.body.sha1)).expect(200);
      expect(me.body.login).toBe(alice.name);
    });

    it('stores only a salted hash and the last eight characters', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: uniqueName(), scopes: ['all'] }).expect(201);
      const row = await t.dataSource.getRepository(AccessTokenEntity).findOneByOrFail({ id: response.body.id });
      const stored = JSON.stringify(row);
      expect(stored).not.toContain(response.body.sha1);
      expect(row.tokenLastEight).toBe(response.body.sha1.slice(-8));
      expect(row.tokenHash).toMatch(/^[0-9a-f]{100}$/);
      expect(row.tokenSalt).not.toBe('');
    });

    it.each([
      [['write:user', 'read:user', 'sudo', ''], ['write:user']],
      [['all'], ['all']],
      [['read:repository,write:issue'], ['write:issue', 'read:repository']],
      [
        ['public-only', 'read:user', 'read:admin'],
        ['public-only', 'read:admin', 'read:user'],
      ],
      [
        [
          'write:activitypub',
          'write:admin',
          'write:misc',
          'write:notification',
          'write:organization',
          'write:package',
          'write:issue',
          'write:repository',
          'write:user',
        ],
        ['all'],
      ],
    ])('normalises scopes %j to %j', async (scopes, expected) => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: uniqueName(), scopes }).expect(201);
      expect(response.body.scopes).toEqual(expected);
    });

    it('refuses token authentication with 401 "auth method not allowed"', async () => {
      const response = await create(alice.name, withToken(alice.token), { name: uniqueName(), scopes: ['all'] }).expect(401);
      expect(response.body.message).toBe('auth method not allowed');
    });

    it('refuses a token presented as the Basic password', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.token), { name: uniqueName(), scopes: ['all'] }).expect(401);
      expect(response.body.message).toBe('auth method not allowed');
    });

    it('anonymous callers get 401', async () => {
      await create(alice.name, {}, { name: 'x', scopes: ['all'] }).expect(401);
    });

    it('another user who is not an admin gets 403', async () => {
      const response = await create(alice.name, withBasic(bob.name, bob.password), { name: uniqueName(), scopes: ['all'] }).expect(403);
      expect(response.body.message).toBe('doer should be the site admin or be same as the contextUser');
    });

    it('a site admin may create a token for another user', async () => {
      const response = await create(alice.name, withBasic(admin.name, admin.password), { name: uniqueName(), scopes: ['read:user'] }).expect(201);
      const me = await t.http.get(t.api('/user')).set(withToken(response.body.sha1)).expect(200);
      expect(me.body.login).toBe(alice.name);
    });

    it('an unknown user is a 404', async () => {
      await create('no-such-user', withBasic(admin.name, admin.password), { name: 'x', scopes: ['all'] }).expect(404);
    });

    it('a missing name is a 422 "[Name]: Required"', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { scopes: ['all'] }).expect(422);
      expect(response.body).toEqual({ message: '[Name]: Required', url: 'http://anvil.test/api/swagger' });
    });

    it('a name used already is a 400', async () => {
      const name = uniqueName();
      await create(alice.name, withBasic(alice.name, alice.password), { name, scopes: ['all'] }).expect(201);
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name, scopes: ['all'] }).expect(400);
      expect(response.body.message).toBe('access token name has been used already');
    });

    it('an invalid scope is a 400', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: uniqueName(), scopes: ['write:everything'] }).expect(400);
      expect(response.body.message).toBe('invalid access token scope provided: invalid access token scope: write:everything');
    });

    it('an empty scope list is a 400', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: uniqueName(), scopes: ['sudo'] }).expect(400);
      expect(response.body.message).toBe('access token must have a scope');
    });

    it('repository-limited tokens are refused with 400', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: uniqueName(), scopes: ['all'], repositories: [] }).expect(400);
      expect(response.body.message).toBe('repository-specific tokens are not supported');
    });

    it('a wrongly typed field is a 422 naming the field', async () => {
      const response = await create(alice.name, withBasic(alice.name, alice.password), { name: 5, scopes: ['all'] }).expect(422);
      expect(response.body.message).toMatch(/^\[Name\]: /);
    });

    it('malformed JSON is a 400', async () => {
      const response = await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .set('Content-Type', 'application/json')
        .send('{"name": ')
        .expect(400);
      expect(response.body.url).toBe('http://anvil.test/api/swagger');
    });

    it('a body that is not an object is a 422', async () => {
      await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .set('Content-Type', 'application/json')
        .send('[1, 2]')
        .expect(422);
    });

    it('a POST without a content type is a 422 "Empty Content-Type"', async () => {
      const response = await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .expect(422);
      expect(response.body.message).toBe('Empty Content-Type');
    });

    it('an unsupported content type is a 422 "Unsupported Content-Type"', async () => {
      const response = await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .set('Content-Type', 'text/plain')
        .send('name=x')
        .expect(422);
      expect(response.body.message).toBe('Unsupported Content-Type');
    });

    it('accepts a form-encoded body, as Forgejo clients may send', async () => {
      const response = await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .type('form')
        .send({ name: uniqueName(), scopes: 'read:user,read:repository' })
        .expect(201);
      expect(response.body.scopes).toEqual(['read:repository', 'read:user']);
    });

    it('an empty JSON body counts as {} (so the name is missing)', async () => {
      const response = await t.http
        .post(t.api(`/users/${alice.name}/tokens`))
        .set(withBasic(alice.name, alice.password))
        .set('Content-Type', 'application/json')
        .send('null')
        .expect(422);
      expect(response.body.message).toBe('[Name]: Required');
    });
  });

  describe('GET /users/{username}/tokens', () => {
    it('lists the user’s tokens newest first, without the plaintext', async () => {
      const owner = await makeUser(t);
      for (const name of ['first', 'second']) {
        await create(owner.name, withBasic(owner.name, owner.password), { name, scopes: ['read:user'] }).expect(201);
      }
      const response = await t.http
        .get(t.api(`/users/${owner.name}/tokens`))
        .set(withToken(owner.token))
        .expect(200);
      expect(response.body.map((token: { name: string }) => token.name).slice(0, 2)).toEqual(['second', 'first']);
      expect(response.body.every((token: { sha1: string }) => token.sha1 === '')).toBe(true);
      expect(response.headers['x-total-count']).toBe('3');
    });

    it('anonymous callers get 401', async () => {
      await t.http.get(t.api(`/users/${alice.name}/tokens`)).expect(401);
    });

    it('another non-admin user gets 403', async () => {
      await t.http
        .get(t.api(`/users/${alice.name}/tokens`))
        .set(withToken(bob.token))
        .expect(403);
    });

    it('a site admin may list anyone’s tokens', async () => {
      await t.http
        .get(t.api(`/users/${alice.name}/tokens`))
        .set(withToken(admin.token))
        .expect(200);
    });

    it('an unknown user is a 404', async () => {
      await t.http.get(t.api('/users/no-such-user/tokens')).set(withToken(admin.token)).expect(404);
    });

    it('pages with X-Total-Count and Link', async () => {
      const owner = await makeUser(t);
      for (let i = 0; i < 4; i++) {
        await create(owner.name, withBasic(owner.name, owner.password), { name: `t${i}`, scopes: ['read:user'] }).expect(201);
      }
      const response = await t.http
        .get(t.api(`/users/${owner.name}/tokens?limit=2&page=2`))
        .set(withToken(owner.token))
        .expect(200);
      expect(response.body).toHaveLength(2);
      expect(response.headers['x-total-count']).toBe('5');
      const base = `http://anvil.test/api/v1/users/${owner.name}/tokens`;
      expect(response.headers.link).toBe(
        `<${base}?limit=2&page=3>; rel="next",<${base}?limit=2&page=3>; rel="last",<${base}?limit=2&page=1>; rel="first",<${base}?limit=2&page=1>; rel="prev"`,
      );
      expect(response.headers['access-control-expose-headers']).toContain('X-Total-Count');
    });
  });

  describe('DELETE /users/{username}/tokens/{token}', () => {
    it('deletes by id, and the token stops authenticating at once', async () => {
      const owner = await makeUser(t);
      const created = await create(owner.name, withBasic(owner.name, owner.password), { name: 'doomed', scopes: ['all'] }).expect(201);
      await t.http.get(t.api('/user')).set(withToken(created.body.sha1)).expect(200);
      await t.http
        .delete(t.api(`/users/${owner.name}/tokens/${created.body.id}`))
        .set(withBasic(owner.name, owner.password))
        .expect(204);
      await t.http.get(t.api('/user')).set(withToken(created.body.sha1)).expect(401);
    });

    it('deletes by name', async () => {
      const owner = await makeUser(t);
      const created = await create(owner.name, withBasic(owner.name, owner.password), { name: 'by-name', scopes: ['all'] }).expect(201);
      await t.http
        .delete(t.api(`/users/${owner.name}/tokens/by-name`))
        .set(withBasic(owner.name, owner.password))
        .expect(204);
      await t.http.get(t.api('/user')).set(withToken(created.body.sha1)).expect(401);
    });

    it('an unknown token is a 404', async () => {
      await t.http
        .delete(t.api(`/users/${alice.name}/tokens/999999`))
        .set(withBasic(alice.name, alice.password))
        .expect(404);
      await t.http
        .delete(t.api(`/users/${alice.name}/tokens/no-such-name`))
        .set(withBasic(alice.name, alice.password))
        .expect(404);
    });

    it('a name matching several tokens is a 422', async () => {
      const owner = await makeUser(t);
      await create(owner.name, withBasic(owner.name, owner.password), { name: 'Deploy', scopes: ['all'] }).expect(201);
      await create(owner.name, withBasic(owner.name, owner.password), { name: 'deploy', scopes: ['all'] }).expect(201);
      const response = await t.http
        .delete(t.api(`/users/${owner.name}/tokens/deploy`))
        .set(withBasic(owner.name, owner.password))
        .expect(422);
      expect(response.body.message).toBe("multiple matches for token name 'deploy'");
    });

    it('token authentication is refused', async () => {
      await t.http
        .delete(t.api(`/users/${alice.name}/tokens/1`))
        .set(withToken(alice.token))
        .expect(401);
    });

    it('another non-admin user gets 403', async () => {
      await t.http
        .delete(t.api(`/users/${alice.name}/tokens/1`))
        .set(withBasic(bob.name, bob.password))
        .expect(403);
    });
  });
});
