import { EmailAddressEntity } from '../../src/users/email-address.entity';
import { UserEntity } from '../../src/users/user.entity';
import { makeOrg, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('admin users', () => {
  let t: TestApp;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  const createUser = (body: Record<string, unknown>) => t.http.post(t.api('/admin/users')).set(withToken(admin.token)).send(body);
  const valid = () => {
    const username = uniqueName('new');
    return { username, email: `${username}@example.com`, password: 'long-enough-password' };
  };

  describe('POST /admin/users', () => {
    it('creates an active user, shown in the admin view, with a verified primary address', async () => {
      const body = { ...valid(), full_name: 'New Person' };
      const response = await createUser(body).expect(201);
      expect(response.body).toMatchObject({
        login: body.username,
        username: body.username,
        email: body.email,
        full_name: 'New Person',
        active: true,
        is_admin: false,
        visibility: 'public',
      });
      const address = await t.dataSource.getRepository(EmailAddressEntity).findOneByOrFail({ uid: response.body.id });
      expect(address).toMatchObject({ isActivated: true, isPrimary: true, email: body.email });
    });

    it('must_change_password defaults to true: the new user cannot use the API yet', async () => {
      const body = valid();
      await createUser(body).expect(201);
      const response = await t.http.get(t.api('/user')).set(withBasic(body.username, body.password)).expect(403);
      expect(response.body.message).toMatch(/^You must change your password/);
    });

    it('must_change_password false lets the user sign in', async () => {
      const body = { ...valid(), must_change_password: false };
      await createUser(body).expect(201);
      await t.http.get(t.api('/user')).set(withBasic(body.username, body.password)).expect(200);
    });

    it('stores the password hashed with a slow KDF', async () => {
      const body = valid();
      const response = await createUser(body).expect(201);
      const row = await t.dataSource.getRepository(UserEntity).findOneByOrFail({ id: response.body.id });
      expect(row.passwdHash).toMatch(/^scrypt\$/);
      expect(row.passwdHash).not.toContain(body.password);
    });

    it('honours created_at and visibility', async () => {
      const response = await createUser({ ...valid(), created_at: '2020-02-03T04:05:06Z', visibility: 'limited' }).expect(201);
      expect(response.body.created).toBe('2020-02-03T04:05:06Z');
      expect(response.body.visibility).toBe('limited');
    });

    it.each([
      [{ username: undefined }, '[Username]: Required'],
      [{ username: 'bad name!' }, '[Username]: Username'],
      [{ username: '-starts-with-dash' }, '[Username]: Username'],
      [{ username: 'two..dots' }, '[Username]: Username'],
      [{ username: 'ends-with-dot.' }, '[Username]: Username'],
      [{ username: 'a'.repeat(41) }, '[Username]: MaxSize'],
      [{ email: undefined }, '[Email]: Required'],
      [{ email: 'not-an-address' }, '[Email]: Email'],
      [{ visibility: 'secret' }, '[Visibility]: In'],
      [{ full_name: 'x'.repeat(101) }, '[FullName]: MaxSize'],
    ])('refuses %j with 422 %s', async (change, message) => {
      const response = await createUser({ ...valid(), ...change }).expect(422);
      expect(response.body).toEqual({ message, url: 'http://anvil.test/api/swagger' });
    });

    it.each([
      ['admin', 'name is reserved [name: admin]'],
      ['API', 'name is reserved [name: API]'],
      ['someone.keys', 'name pattern is not allowed [pattern: *.keys]'],
      ['someone.gpg', 'name pattern is not allowed [pattern: *.gpg]'],
      ['someone.png', 'name pattern is not allowed [pattern: *.png]'],
    ])('refuses the reserved name %s', async (username, message) => {
      const response = await createUser({ ...valid(), username }).expect(422);
      expect(response.body.message).toBe(message);
    });

    it('refuses a taken name, case-insensitively', async () => {
      const response = await createUser({ ...valid(), username: alice.name.toUpperCase() }).expect(422);
      expect(response.body.message).toBe(`user already exists [name: ${alice.name.toUpperCase()}]`);
    });

    it('refuses an e-mail address in use', async () => {
      const response = await createUser({ ...valid(), email: alice.email.toUpperCase() }).expect(422);
      expect(response.body.message).toBe(`e-mail already in use [email: ${alice.email.toUpperCase()}]`);
    });

    it('refuses a short password with 400 PasswordIsRequired', async () => {
      const response = await createUser({ ...valid(), password: 'short' }).expect(400);
      expect(response.body.message).toBe('PasswordIsRequired');
    });

    it('is for site admins only', async () => {
      await t.http.post(t.api('/admin/users')).set(withToken(alice.token)).send(valid()).expect(403);
      await t.http.post(t.api('/admin/users')).send(valid()).expect(401);
    });
  });

  describe('PATCH /admin/users/{username}', () => {
    const edit = (username: string, body: Record<string, unknown>) =>
      t.http
        .patch(t.api(`/admin/users/${username}`))
        .set(withToken(admin.token))
        .send(body);

    it('changes only the fields given', async () => {
      const user = await makeUser(t, { fullName: 'Before' });
      const response = await edit(user.name, { location: 'Berlin', website: 'https://example.com' }).expect(200);
      expect(response.body).toMatchObject({ location: 'Berlin', website: 'https://example.com', full_name: 'Before', email: user.email });
    });

    it('makes a user an admin', async () => {
      const user = await makeUser(t);
      const response = await edit(user.name, { admin: true }).expect(200);
      expect(response.body.is_admin).toBe(true);
    });

    it('changes the password', async () => {
      const user = await makeUser(t);
      await edit(user.name, { password: 'a-brand-new-password' }).expect(200);
      await t.http.get(t.api('/user')).set(withBasic(user.name, 'a-brand-new-password')).expect(200);
      await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(401);
    });

    it('changes the e-mail address', async () => {
      const user = await makeUser(t);
      const response = await edit(user.name, { email: `changed-${user.email}` }).expect(200);
      expect(response.body.email).toBe(`changed-${user.email}`);
    });

    it('an empty body leaves the user as it was', async () => {
      const response = await edit(alice.name, {}).expect(200);
      expect(response.body.login).toBe(alice.name);
    });

    it('a PATCH without a content type is an empty body', async () => {
      await t.http
        .patch(t.api(`/admin/users/${alice.name}`))
        .set(withToken(admin.token))
        .expect(200);
    });

    it('an unknown user is a 404', async () => {
      await edit('no-such-user', {}).expect(404);
    });

    it('a short password is a 400', async () => {
      const response = await edit(alice.name, { password: 'short' }).expect(400);
      expect(response.body.message).toBe('password must be at least 8 characters');
    });

    it('an invalid e-mail address is a 400', async () => {
      await edit(alice.name, { email: 'nope' }).expect(400);
    });

    it('an address used by someone else is a 400', async () => {
      const response = await edit(alice.name, { email: admin.email }).expect(400);
      expect(response.body.message).toBe(`e-mail already in use [email: ${admin.email}]`);
    });

    it('an invalid website is a 422', async () => {
      await edit(alice.name, { website: 'ftp://example.com' }).expect(422);
    });

    it('an invalid visibility is a 422', async () => {
      const response = await edit(alice.name, { visibility: 'hidden' }).expect(422);
      expect(response.body.message).toBe('[Visibility]: In');
    });

    it('removing admin from the last admin is a 400', async () => {
      const fresh = await startTestApp();
      try {
        const only = await makeUser(fresh, { admin: true });
        const response = await fresh.http
          .patch(fresh.api(`/admin/users/${only.name}`))
          .set(withToken(only.token))
          .send({ admin: false })
          .expect(400);
        expect(response.body.message).toBe(`can not delete the last admin user [uid: ${only.user.id}]`);
      } finally {
        await fresh.close();
      }
    });
  });

  describe('DELETE /admin/users/{username}', () => {
    it('deletes the user and their tokens', async () => {
      const user = await makeUser(t);
      await t.http
        .delete(t.api(`/admin/users/${user.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http.get(t.api('/user')).set(withToken(user.token)).expect(401);
      await t.http
        .delete(t.api(`/admin/users/${user.name}`))
        .set(withToken(admin.token))
        .expect(404);
    });

    it('a member of an organisation must leave it first (no organisation loses its last owner)', async () => {
      const user = await makeUser(t);
      await makeOrg(t, user.user);
      const response = await t.http
        .delete(t.api(`/admin/users/${user.name}`))
        .set(withToken(admin.token))
        .expect(422);
      expect(response.body.message).toBe(`user still has membership of organizations [uid: ${user.user.id}]`);
      await t.http.get(t.api('/user')).set(withToken(user.token)).expect(200);
    });

    it('an admin cannot delete themselves', async () => {
      const response = await t.http
        .delete(t.api(`/admin/users/${admin.name}`))
        .set(withToken(admin.token))
        .expect(422);
      expect(response.body.message).toBe('you cannot delete yourself');
    });

    it('is for site admins only', async () => {
      await t.http
        .delete(t.api(`/admin/users/${admin.name}`))
        .set(withToken(alice.token))
        .expect(403);
    });
  });
});

describe('concurrent user creation', () => {
  it('creates many users in parallel without losing any (no deadlock escapes)', async () => {
    const t = await startTestApp();
    try {
      const admin = await makeUser(t, { admin: true });
      const names = Array.from({ length: 12 }, () => uniqueName('par'));
      const responses = await Promise.all(
        names.map((username) =>
          t.http
            .post(t.api('/admin/users'))
            .set(withToken(admin.token))
            .send({ username, email: `${username}@example.com`, password: 'parallel-password' }),
        ),
      );
      expect(responses.map((response) => response.status)).toEqual(names.map(() => 201));
      expect(await t.dataSource.getRepository(UserEntity).countBy({})).toBe(13);
    } finally {
      await t.close();
    }
  });
});
