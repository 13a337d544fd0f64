import { Transactions } from '../../src/database/transactions';
import { UserStore } from '../../src/users/user.store';
import { makeOrg, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const SWAGGER = 'http://anvil.test/api/swagger';
const ORG_KEYS = [
  'id',
  'name',
  'full_name',
  'email',
  'avatar_url',
  'description',
  'website',
  'location',
  'visibility',
  'repo_admin_change_team_access',
  'created',
  'username',
];

describe('organisations: /orgs, /orgs/{org}/teams|members, /teams/{id}/members', () => {
  let t: TestApp;
  let admin: TestUser;
  let owner: TestUser;
  let stranger: TestUser;

  const patch = (name: string, body: Record<string, unknown>) =>
    t.http
      .patch(t.api(`/admin/users/${name}`))
      .set(withToken(admin.token))
      .send(body)
      .expect(200);
  const createOrg = (who: TestUser, body: Record<string, unknown>) => t.http.post(t.api('/orgs')).set(withToken(who.token)).send(body);
  const ownersTeam = async (org: string, who: TestUser) =>
    (
      await t.http
        .get(t.api(`/orgs/${org}/teams`))
        .set(withToken(who.token))
        .expect(200)
    ).body[0] as { id: number };
  const logins = (body: { login: string }[]) => body.map((user) => user.login);

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    owner = await makeUser(t);
    stranger = await makeUser(t);
  });
  afterAll(() => t.close());

  describe('POST /orgs', () => {
    it('creates an organisation whose only member is the creator, in the Owners team', async () => {
      const name = uniqueName('Org');
      const response = await createOrg(owner, {
        username: name,
        full_name: 'The Org',
        email: 'contact@org.example',
        description: 'we build',
        website: 'https://org.example',
        location: 'Earth',
        visibility: 'limited',
        repo_admin_change_team_access: true,
      }).expect(201);
      expect(Object.keys(response.body)).toEqual(ORG_KEYS);
      expect(response.body).toMatchObject({
        name,
        username: name,
        full_name: 'The Org',
        email: 'contact@org.example',
        avatar_url: 'http://anvil.test/assets/img/avatar_default.png',
        description: 'we build',
        website: 'https://org.example',
        location: 'Earth',
        visibility: 'limited',
        repo_admin_change_team_access: true,
      });
      expect(response.body.created).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const members = await t.http
        .get(t.api(`/orgs/${name}/members`))
        .set(withToken(owner.token))
        .expect(200);
      expect(logins(members.body)).toEqual([owner.name]);
      const teams = await t.http
        .get(t.api(`/orgs/${name}/teams`))
        .set(withToken(owner.token))
        .expect(200);
      expect(teams.body).toEqual([
        {
          id: expect.any(Number),
          name: 'Owners',
          description: '',
          organization: null,
          includes_all_repositories: true,
          permission: 'owner',
          units: ['repo.code'],
          units_map: { 'repo.code': 'owner' },
          can_create_org_repo: true,
        },
      ]);
      expect(teams.headers['x-total-count']).toBe('1');
    });

    it('defaults to public visibility and empty fields, and accepts a form body', async () => {
      const name = uniqueName('org');
      const response = await t.http.post(t.api('/orgs')).set(withToken(owner.token)).type('form').send({ username: name }).expect(201);
      expect(response.body).toMatchObject({ name, visibility: 'public', full_name: '', email: '', repo_admin_change_team_access: false });
    });

    it('does not claim the contact address as an account address', async () => {
      await createOrg(owner, { username: uniqueName('org'), email: owner.email }).expect(201);
      await createOrg(stranger, { username: uniqueName('org'), email: owner.email }).expect(201);
    });

    it.each([
      [{}, '[UserName]: Required'],
      [{ username: '' }, '[UserName]: Required'],
      [{ username: 'bad name' }, '[UserName]: Username'],
      [{ username: '-dash' }, '[UserName]: Username'],
      [{ username: 'a'.repeat(41) }, '[UserName]: MaxSize'],
      [{ username: 'api' }, 'name is reserved [name: api]'],
      [{ username: 'Assets' }, 'name is reserved [name: Assets]'],
      [{ username: 'x.keys' }, 'name pattern is not allowed [pattern: *.keys]'],
      [{ username: 'okname', visibility: 'secret' }, '[Visibility]: In'],
      [{ username: 'okname', website: 'ftp://x' }, '[Website]: ValidUrl'],
      [{ username: 'okname', full_name: 'x'.repeat(101) }, '[FullName]: MaxSize'],
      [{ username: 'okname', location: 'x'.repeat(51) }, '[Location]: MaxSize'],
      [{ username: 'okname', description: 'x'.repeat(256) }, '[Description]: MaxSize'],
      [{ username: 'okname', email: 'x'.repeat(256) }, '[Email]: MaxSize'],
    ])('refuses %j with 422 %s', async (body, message) => {
      const response = await createOrg(owner, body).expect(422);
      expect(response.body).toEqual({ message, url: SWAGGER });
    });

    it('refuses a name taken by a user or an organisation, case-insensitively', async () => {
      const taken = stranger.name.toUpperCase();
      expect((await createOrg(owner, { username: taken }).expect(422)).body.message).toBe(`user already exists [name: ${taken}]`);
      const org = await makeOrg(t, owner.user);
      expect((await createOrg(owner, { username: org.name }).expect(422)).body.message).toBe(`user already exists [name: ${org.name}]`);
    });

    it('makes the name unavailable to users too (shared namespace)', async () => {
      const name = uniqueName('org');
      await createOrg(owner, { username: name }).expect(201);
      const response = await t.http
        .post(t.api('/admin/users'))
        .set(withToken(admin.token))
        .send({ username: name, email: `${name}@example.com`, password: 'long-enough-password' })
        .expect(422);
      expect(response.body.message).toBe(`user already exists [name: ${name}]`);
    });

    it('answers 400 for malformed JSON', async () => {
      await t.http.post(t.api('/orgs')).set(withToken(owner.token)).set('Content-Type', 'application/json').send('{"username":').expect(400);
    });

    it('refuses a caller not allowed to create organisations (403), unless a site admin', async () => {
      const barred = await makeUser(t);
      await patch(barred.name, { allow_create_organization: false });
      const response = await createOrg(barred, { username: uniqueName('org') }).expect(403);
      expect(response.body).toEqual({ message: 'Create organization not allowed', url: SWAGGER });
      const barredAdmin = await makeUser(t, { admin: true });
      await patch(barredAdmin.name, { allow_create_organization: false });
      await createOrg(barredAdmin, { username: uniqueName('org') }).expect(201);
    });

    it('answers anonymous callers 401 and a token without write:organization 403', async () => {
      await t.http
        .post(t.api('/orgs'))
        .send({ username: uniqueName('org') })
        .expect(401);
      const token = await makeToken(t, owner.user, ['read:organization', 'write:user']);
      const response = await t.http
        .post(t.api('/orgs'))
        .set(withToken(token))
        .send({ username: uniqueName('org') })
        .expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [write:organization]');
    });
  });

  describe('GET /orgs/{org}', () => {
    it('answers everyone for a public organisation, with the e-mail only for signed-in callers', async () => {
      const name = uniqueName('org');
      await createOrg(owner, { username: name, email: 'hello@org.example' }).expect(201);
      const anonymous = await t.http.get(t.api(`/orgs/${name.toUpperCase()}`)).expect(200);
      expect(anonymous.body).toMatchObject({ name, email: '' });
      const signedIn = await t.http
        .get(t.api(`/orgs/${name}`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(signedIn.body.email).toBe('hello@org.example');
    });

    it('hides a limited organisation from anonymous callers', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'limited' });
      await t.http.get(t.api(`/orgs/${org.name}`)).expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .expect(200);
    });

    it('shows a private organisation to members and site admins only', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http.get(t.api(`/orgs/${org.name}`)).expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .expect(200);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(admin.token))
        .expect(200);
    });

    it('answers a public-only token 403 on a non-public organisation', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'limited' });
      const token = await makeToken(t, owner.user, ['public-only', 'read:organization']);
      const response = await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(token))
        .expect(403);
      expect(response.body).toEqual({ message: 'token scope is limited to public orgs', url: SWAGGER });
    });

    it('answers 404 for an unknown name and for an individual user', async () => {
      await t.http.get(t.api('/orgs/nothing-here')).expect(404);
      await t.http.get(t.api(`/orgs/${stranger.name}`)).expect(404);
    });

    it('answers a token without read:organization 403', async () => {
      const token = await makeToken(t, owner.user, ['read:user']);
      await t.http.get(t.api('/orgs/nothing-here')).set(withToken(token)).expect(403);
    });
  });

  describe('GET /orgs/{org}/teams', () => {
    it('answers a non-member 403, anonymous callers 401, and site admins the list', async () => {
      const org = await makeOrg(t, owner.user);
      const response = await t.http
        .get(t.api(`/orgs/${org.name}/teams`))
        .set(withToken(stranger.token))
        .expect(403);
      expect(response.body).toEqual({ message: 'Must be an organization member', url: SWAGGER });
      await t.http.get(t.api(`/orgs/${org.name}/teams`)).expect(401);
      await t.http.get(t.api('/orgs/nothing-here/teams')).expect(404);
      expect(
        (
          await t.http
            .get(t.api(`/orgs/${org.name}/teams`))
            .set(withToken(admin.token))
            .expect(200)
        ).body,
      ).toHaveLength(1);
    });
  });

  describe('team membership: PUT and DELETE /teams/{id}/members/{username}', () => {
    it('adds a member idempotently, who then is an owner', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      const newcomer = await makeUser(t);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${newcomer.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${newcomer.name.toUpperCase()}`))
        .set(withToken(owner.token))
        .expect(204);
      const members = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(newcomer.token))
        .expect(200);
      expect(logins(members.body)).toEqual([owner.name, newcomer.name]);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${newcomer.name}`))
        .set(withToken(owner.token))
        .expect(204);
      // The newcomer may now manage the team.
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${owner.name}`))
        .set(withToken(newcomer.token))
        .expect(204);
      const after = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(newcomer.token))
        .expect(200);
      expect(logins(after.body)).toEqual([newcomer.name]);
    });

    it('refuses to remove the last owner with 422, and ignores a non-member', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      const response = await t.http
        .delete(t.api(`/teams/${team.id}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(422);
      expect(response.body).toEqual({ message: 'the last owner of an organization cannot be removed', url: SWAGGER });
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${stranger.name}`))
        .set(withToken(owner.token))
        .expect(204);
    });

    it('answers 404 for an unknown or non-numeric team, a non-member caller, an unknown user or an organisation', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      await t.http
        .put(t.api(`/teams/999999/members/${stranger.name}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .put(t.api(`/teams/abc/members/${stranger.name}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${stranger.name}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${owner.name}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .put(t.api(`/teams/${team.id}/members/nobody-here`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${org.name}`))
        .set(withToken(owner.token))
        .expect(404);
    });

    it('answers anonymous callers 401 after the team lookup', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      await t.http.put(t.api(`/teams/999999/members/${stranger.name}`)).expect(404);
      expect((await t.http.put(t.api(`/teams/${team.id}/members/${stranger.name}`)).expect(401)).body.message).toBe('token is required');
    });

    it('lets a site admin manage any team', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'private' });
      const team = await ownersTeam(org.name, owner);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${stranger.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .expect(200);
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${stranger.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .expect(404);
    });

    it('answers a public-only token 403 on a non-public organisation’s team', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'limited' });
      const team = await ownersTeam(org.name, owner);
      const token = await makeToken(t, owner.user, ['public-only', 'write:organization']);
      const response = await t.http
        .put(t.api(`/teams/${team.id}/members/${stranger.name}`))
        .set(withToken(token))
        .expect(403);
      expect(response.body.message).toBe('token scope is limited to public orgs');
    });

    it('answers a token without write:organization 403', async () => {
      const token = await makeToken(t, owner.user, ['read:organization']);
      await t.http
        .put(t.api(`/teams/1/members/${stranger.name}`))
        .set(withToken(token))
        .expect(403);
    });
  });

  describe('GET /orgs/{org}/members and /orgs/{org}/members/{username}', () => {
    it('shows members to members and site admins, and an empty list to everyone else', async () => {
      const org = await makeOrg(t, owner.user);
      const own = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(owner.token))
        .expect(200);
      expect(logins(own.body)).toEqual([owner.name]);
      expect(own.body[0].email).toBe(owner.email);
      expect(own.headers['x-total-count']).toBe('1');
      const byAdmin = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(admin.token))
        .expect(200);
      expect(logins(byAdmin.body)).toEqual([owner.name]);
      const other = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(stranger.token))
        .expect(200);
      expect(other.body).toEqual([]);
      expect(other.headers['x-total-count']).toBe('0');
      await t.http.get(t.api(`/orgs/${org.name}/members`)).expect(401);
    });

    it('answers membership checks 204/404 to members and admins, and 404 to everyone else', async () => {
      const org = await makeOrg(t, owner.user);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${stranger.name}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/nobody-here`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http.get(t.api(`/orgs/${org.name}/members/${owner.name}`)).expect(401);
    });

    it('hides the member list of a private organisation from non-members (404)', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(stranger.token))
        .expect(404);
    });
  });

  describe('DELETE /orgs/{org}/members/{username}', () => {
    it('lets an owner remove a member, and refuses the last owner with 422', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      const member = await makeUser(t);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${member.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .delete(t.api(`/orgs/${org.name}/members/${member.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${member.name}`))
        .set(withToken(owner.token))
        .expect(404);
      const response = await t.http
        .delete(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(422);
      expect(response.body.message).toBe('the last owner of an organization cannot be removed');
      await t.http
        .get(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(204);
    });

    it('answers a non-owner 403, an unknown user 404 and anonymous callers 401', async () => {
      const org = await makeOrg(t, owner.user);
      const response = await t.http
        .delete(t.api(`/orgs/${org.name}/members/${owner.name}`))
        .set(withToken(stranger.token))
        .expect(403);
      expect(response.body).toEqual({ message: 'Must be an organization owner', url: SWAGGER });
      await t.http
        .delete(t.api(`/orgs/${org.name}/members/nobody-here`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http.delete(t.api(`/orgs/${org.name}/members/${owner.name}`)).expect(401);
      await t.http.delete(t.api(`/orgs/nothing-here/members/${owner.name}`)).expect(404);
    });

    it('keeps exactly one owner when the last two owners remove each other concurrently', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      const second = await makeUser(t);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${second.name}`))
        .set(withToken(owner.token))
        .expect(204);
      // A site admin removes both at once, so both pass the ownership check and only the guard decides.
      const results = await Promise.all([
        t.http.delete(t.api(`/orgs/${org.name}/members/${second.name}`)).set(withToken(admin.token)),
        t.http.delete(t.api(`/orgs/${org.name}/members/${owner.name}`)).set(withToken(admin.token)),
      ]);
      expect(results.map((result) => result.status).sort()).toEqual([204, 422]);
      const members = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(admin.token))
        .expect(200);
      expect(members.body).toHaveLength(1);
    });
  });

  describe('DELETE /orgs/{org}', () => {
    it('lets an owner delete the organisation, which frees the name', async () => {
      const org = await makeOrg(t, owner.user);
      const fan = await makeUser(t);
      await t.http
        .put(t.api(`/user/following/${org.name}`))
        .set(withToken(fan.token))
        .expect(204);
      await t.http
        .delete(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .get(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .expect(404);
      expect((await t.http.get(t.api('/user')).set(withToken(fan.token)).expect(200)).body.following_count).toBe(0);
      await createOrg(owner, { username: org.name }).expect(201);
    });

    it('lets a site admin delete any organisation', async () => {
      const org = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .delete(t.api(`/orgs/${org.name}`))
        .set(withToken(admin.token))
        .expect(204);
    });

    it('refuses while the organisation owns repositories (422)', async () => {
      const org = await makeOrg(t, owner.user);
      await t.app.get(Transactions).run((tx) => t.app.get(UserStore).addToCounter(tx, org.id, 'numRepos', 1));
      const response = await t.http
        .delete(t.api(`/orgs/${org.name}`))
        .set(withToken(owner.token))
        .expect(422);
      expect(response.body).toEqual({ message: `user still has ownership of repositories [uid: ${org.id}]`, url: SWAGGER });
      await t.http.get(t.api(`/orgs/${org.name}`)).expect(200);
    });

    it('answers a non-owner 403, an invisible organisation 404 and anonymous callers 401', async () => {
      const org = await makeOrg(t, owner.user);
      const response = await t.http
        .delete(t.api(`/orgs/${org.name}`))
        .set(withToken(stranger.token))
        .expect(403);
      expect(response.body).toEqual({ message: 'Must be an organization owner', url: SWAGGER });
      const hidden = await makeOrg(t, owner.user, { visibility: 'private' });
      await t.http
        .delete(t.api(`/orgs/${hidden.name}`))
        .set(withToken(stranger.token))
        .expect(404);
      await t.http.delete(t.api(`/orgs/${org.name}`)).expect(401);
      await t.http.delete(t.api('/orgs/nothing-here')).set(withToken(owner.token)).expect(404);
    });

    it('answers a token without write:organization 403', async () => {
      const org = await makeOrg(t, owner.user);
      const token = await makeToken(t, owner.user, ['read:organization']);
      await t.http
        .delete(t.api(`/orgs/${org.name}`))
        .set(withToken(token))
        .expect(403);
    });
  });

  describe('deleting a member user', () => {
    it('is refused until they have left their organisations, then succeeds', async () => {
      const org = await makeOrg(t, owner.user);
      const team = await ownersTeam(org.name, owner);
      const leaving = await makeUser(t);
      await t.http
        .put(t.api(`/teams/${team.id}/members/${leaving.name}`))
        .set(withToken(owner.token))
        .expect(204);
      const refused = await t.http
        .delete(t.api(`/admin/users/${leaving.name}`))
        .set(withToken(admin.token))
        .expect(422);
      expect(refused.body.message).toBe(`user still has membership of organizations [uid: ${leaving.user.id}]`);
      await t.http
        .delete(t.api(`/orgs/${org.name}/members/${leaving.name}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .delete(t.api(`/admin/users/${leaving.name}`))
        .set(withToken(admin.token))
        .expect(204);
      const members = await t.http
        .get(t.api(`/orgs/${org.name}/members`))
        .set(withToken(owner.token))
        .expect(200);
      expect(logins(members.body)).toEqual([owner.name]);
      // The team's member count followed: the last owner is still protected.
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${owner.name}`))
        .set(withToken(owner.token))
        .expect(422);
    });
  });
});
