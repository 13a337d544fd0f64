import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const ED25519 = (comment: string, body: string) => `ssh-ed25519 ${body} ${comment}`;
// Two ed25519 public keys generated once for this test.
const KEY_A = 'AAAAC3NzaC1lZDI1NTE5AAAAIIzNbYFAaEJi6VKGc74Rzw0pO4R1UlFhRBMZsidsCGkB';
const KEY_B = 'AAAAC3NzaC1lZDI1NTE5AAAAIKkcU9cw4KnTQRrFEHVykIk7mRJQ4J6N+wt/QLtIqNlb';

describe('lookups and lists: /repositories/{id}, /orgs/{org}/repos, /user/orgs, org permissions, PATCH /orgs, /admin lists', () => {
  let t: TestApp;
  let admin: TestUser;
  let owner: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    owner = await makeUser(t);
    stranger = await makeUser(t);
  });
  afterAll(() => t.close());

  describe('GET /repositories/{id}', () => {
    it('answers as GET /repos/{owner}/{repo} for those who may read it, 404 otherwise', async () => {
      const repo = await makeRepo(t, owner, { private: true });
      const byName = await t.http
        .get(t.api(`/repos/${repo.full_name}`))
        .set(withToken(owner.token))
        .expect(200);
      const byId = await t.http
        .get(t.api(`/repositories/${repo.id}`))
        .set(withToken(owner.token))
        .expect(200);
      expect(byId.body).toEqual(byName.body);
      await t.http
        .get(t.api(`/repositories/${repo.id}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .get(t.api(`/repositories/${repo.id}`))
        .set(withToken(admin.token))
        .expect(200);
      await t.http.get(t.api('/repositories/999999999')).set(withToken(owner.token)).expect(404);
      await t.http.get(t.api('/repositories/abc')).set(withToken(owner.token)).expect(404);
      // Forgejo asks for a token here.
      await t.http.get(t.api(`/repositories/${repo.id}`)).expect(401);
    });

    it('refuses a public-only token on a private repository with 403', async () => {
      const repo = await makeRepo(t, owner, { private: true });
      const publicOnly = await makeToken(t, owner.user, ['public-only', 'read:repository']);
      await t.http
        .get(t.api(`/repositories/${repo.id}`))
        .set(withToken(publicOnly))
        .expect(403);
    });
  });

  describe('GET /orgs/{org}/repos', () => {
    it("lists an organisation's repositories by id, paged, with the caller's visibility", async () => {
      const org = await makeOrg(t, owner.user);
      const first = await makeRepo(t, owner, { org: org.name, name: 'zeta' });
      const hidden = await makeRepo(t, owner, { org: org.name, name: 'alpha', private: true });
      const third = await makeRepo(t, owner, { org: org.name, name: 'mid' });
      const own = await t.http
        .get(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(owner.token))
        .expect(200);
      expect(own.body.map((repo: { id: number }) => repo.id)).toEqual([first.id, hidden.id, third.id]);
      expect(own.headers['x-total-count']).toBe('3');
      expect(own.body[0].permissions).toEqual({ admin: true, push: true, pull: true });
      const other = await t.http
        .get(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(other.body.map((repo: { id: number }) => repo.id)).toEqual([first.id, third.id]);
      expect(other.body[0].permissions).toEqual({ admin: false, push: false, pull: true });
      const anonymous = await t.http.get(t.api(`/orgs/${org.name}/repos?limit=1&page=2`)).expect(200);
      expect(anonymous.body.map((repo: { id: number }) => repo.id)).toEqual([third.id]);
      expect(anonymous.headers['x-total-count']).toBe('2');
      expect(anonymous.headers.link).toContain('rel="first"');
    });

    it('answers 404 for a user, an unknown name and a private organisation the caller cannot see', async () => {
      await t.http.get(t.api(`/orgs/${owner.name}/repos`)).expect(404);
      await t.http.get(t.api(`/orgs/${uniqueName('nobody')}/repos`)).expect(404);
      const secret = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .get(t.api(`/orgs/${secret.name}/repos`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .get(t.api(`/orgs/${secret.name}/repos`))
        .set(withToken(owner.token))
        .expect(200);
    });
  });

  describe('organisations of a user', () => {
    it('/user/orgs lists every organisation of the caller by name; others see only public memberships', async () => {
      const member = await makeUser(t);
      const b = await makeOrg(t, member.user, { name: uniqueName('b-org') });
      const a = await makeOrg(t, member.user, { name: uniqueName('a-org'), visibility: 'private' });
      const mine = await t.http.get(t.api('/user/orgs')).set(withToken(member.token)).expect(200);
      expect(mine.body.map((org: { name: string }) => org.name)).toEqual([a.name, b.name]);
      expect(Object.keys(mine.body[0])).toEqual(expect.arrayContaining(['id', 'name', 'full_name', 'visibility', 'username']));
      expect(mine.headers['x-total-count']).toBe('2');
      const paged = await t.http.get(t.api('/user/orgs?limit=1&page=2')).set(withToken(member.token)).expect(200);
      expect(paged.body.map((org: { name: string }) => org.name)).toEqual([b.name]);
      // Memberships are private until published, as Forgejo's default.
      const seen = await t.http
        .get(t.api(`/users/${member.name}/orgs`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(seen.body).toEqual([]);
      const byAdmin = await t.http
        .get(t.api(`/users/${member.name}/orgs`))
        .set(withToken(admin.token))
        .expect(200);
      expect(byAdmin.body).toHaveLength(2);
      await t.http.get(t.api('/user/orgs')).expect(401);
      await t.http
        .get(t.api(`/users/${uniqueName('nobody')}/orgs`))
        .set(withToken(stranger.token))
        .expect(404);
    });

    it('/users/{u}/orgs/{org}/permissions tells what the user may do there', async () => {
      const org = await makeOrg(t, owner.user);
      const ownerView = await t.http
        .get(t.api(`/users/${owner.name}/orgs/${org.name}/permissions`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(ownerView.body).toEqual({ is_owner: true, is_admin: true, can_write: true, can_read: true, can_create_repository: true });
      const outsider = await t.http
        .get(t.api(`/users/${stranger.name}/orgs/${org.name}/permissions`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(outsider.body).toEqual({ is_owner: false, is_admin: false, can_write: false, can_read: false, can_create_repository: false });
      const secret = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .get(t.api(`/users/${stranger.name}/orgs/${secret.name}/permissions`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${owner.name}/orgs/${uniqueName('nobody')}/permissions`))
        .set(withToken(owner.token))
        .expect(404);
    });
  });

  describe('PATCH /orgs/{org}', () => {
    it('lets owners change the profile and visibility; others get 403', async () => {
      const org = await makeOrg(t, owner.user);
      const edited = await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .send({ full_name: 'Full', description: 'desc', website: 'https://example.com', location: 'here', visibility: 'limited', email: 'org@example.com' })
        .expect(200);
      expect(edited.body).toMatchObject({
        full_name: 'Full',
        description: 'desc',
        website: 'https://example.com',
        location: 'here',
        visibility: 'limited',
        email: 'org@example.com',
      });
      const read = await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .expect(200);
      expect(read.body).toMatchObject({ full_name: 'Full', visibility: 'limited' });
      await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .send({ full_name: 'x' })
        .expect(403);
      // Now limited: anonymous callers do not see it at all; a public one asks them to sign in.
      await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .send({ full_name: 'x' })
        .expect(404);
      const open = await makeOrg(t, owner.user);
      await t.http
        .patch(t.api(`/orgs/${open.name}`))
        .send({ full_name: 'x' })
        .expect(401);
      const cleared = await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .send({ full_name: 'Only' })
        .expect(200);
      // As Forgejo: text fields not sent become empty, visibility and e-mail stay.
      expect(cleared.body).toMatchObject({ full_name: 'Only', description: '', website: '', visibility: 'limited', email: 'org@example.com' });
      await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .send({ visibility: 'secret' })
        .expect(422);
      await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .send({ website: 'not a url' })
        .expect(422);
      await t.http
        .patch(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .send({ email: 'not-an-address' })
        .expect(422);
      await t.http
        .patch(t.api(`/orgs/${uniqueName('nobody')}`))
        .set(withToken(owner.token))
        .send({})
        .expect(404);
    });
  });

  describe('/admin lists and actions', () => {
    it('GET /admin/users lists individual users alphabetically, with q, login_name and paging', async () => {
      const all = await t.http.get(t.api('/admin/users?limit=50')).set(withToken(admin.token)).expect(200);
      const logins = all.body.map((user: { login: string }) => user.login);
      expect(logins).toEqual([...logins].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())));
      expect(logins).toEqual(expect.arrayContaining([admin.name, owner.name, stranger.name]));
      expect(Number(all.headers['x-total-count'])).toBe(logins.length);
      const byLogin = await t.http
        .get(t.api(`/admin/users?login_name=${owner.name.toUpperCase()}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(byLogin.body.map((user: { login: string }) => user.login)).toEqual([owner.name]);
      const byQuery = await t.http
        .get(t.api(`/admin/users?q=${stranger.name}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(byQuery.body.map((user: { login: string }) => user.login)).toEqual([stranger.name]);
      const newest = await t.http.get(t.api('/admin/users?sort=newest&limit=1')).set(withToken(admin.token)).expect(200);
      expect(newest.body).toHaveLength(1);
      const otherSource = await t.http.get(t.api('/admin/users?source_id=3')).set(withToken(admin.token)).expect(200);
      expect(otherSource.body).toEqual([]);
      await t.http.get(t.api('/admin/users')).set(withToken(owner.token)).expect(403);
    });

    it('GET /admin/orgs lists every organisation, private ones included; POST /admin/users/{u}/orgs creates one', async () => {
      const name = uniqueName('adminorg');
      const created = await t.http
        .post(t.api(`/admin/users/${stranger.name}/orgs`))
        .set(withToken(admin.token))
        .send({ username: name, visibility: 'private' })
        .expect(201);
      expect(created.body).toMatchObject({ name, visibility: 'private' });
      const perms = await t.http
        .get(t.api(`/users/${stranger.name}/orgs/${name}/permissions`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(perms.body.is_owner).toBe(true);
      const orgs = await t.http.get(t.api('/admin/orgs?limit=50')).set(withToken(admin.token)).expect(200);
      expect(orgs.body.map((org: { name: string }) => org.name)).toContain(name);
      await t.http
        .post(t.api(`/admin/users/${stranger.name}/orgs`))
        .set(withToken(admin.token))
        .send({ username: name })
        .expect(422);
      await t.http
        .post(t.api(`/admin/users/${uniqueName('nobody')}/orgs`))
        .set(withToken(admin.token))
        .send({ username: uniqueName('o') })
        .expect(404);
      await t.http.get(t.api('/admin/orgs')).set(withToken(owner.token)).expect(403);
    });

    it('POST and DELETE /admin/users/{u}/keys manage a user’s SSH keys', async () => {
      const user = await makeUser(t);
      const created = await t.http
        .post(t.api(`/admin/users/${user.name}/keys`))
        .set(withToken(admin.token))
        .send({ title: 'ci', key: ED25519('ci@example', KEY_A) })
        .expect(201);
      expect(created.body).toMatchObject({ title: 'ci', key: `ssh-ed25519 ${KEY_A} ci@example` });
      const listed = await t.http.get(t.api('/user/keys')).set(withToken(user.token)).expect(200);
      expect(listed.body.map((key: { id: number }) => key.id)).toEqual([created.body.id]);
      const other = await t.http
        .post(t.api('/user/keys'))
        .set(withToken(owner.token))
        .send({ title: 'o', key: ED25519('o', KEY_B) })
        .expect(201);
      await t.http
        .delete(t.api(`/admin/users/${user.name}/keys/${other.body.id}`))
        .set(withToken(admin.token))
        .expect(403);
      await t.http
        .delete(t.api(`/admin/users/${user.name}/keys/${created.body.id}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http
        .delete(t.api(`/admin/users/${user.name}/keys/${created.body.id}`))
        .set(withToken(admin.token))
        .expect(404);
      await t.http
        .post(t.api(`/admin/users/${user.name}/keys`))
        .set(withToken(admin.token))
        .send({ title: 'bad', key: 'ssh-ed25519 nonsense' })
        .expect(422);
      await t.http
        .post(t.api(`/admin/users/${user.name}/keys`))
        .set(withToken(owner.token))
        .send({ title: 'x', key: ED25519('x', KEY_A) })
        .expect(403);
    });
  });
});
