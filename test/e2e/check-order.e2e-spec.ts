import { as, ApiClient, makeOrg, makeRepo, makeUser, TestOrg, TestRepo, TestUser, uniqueName } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

// docs/check-order.md, "Where the body or the item comes first": for each route, a caller the route refuses and
// a bad body or an unknown item together get the status Forgejo gives first; the door's own order (401/403 before
// the body) is proved alongside.

describe('check order: where the body or the item comes first', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;
  let admin: TestUser;
  let org: TestOrg;
  let repo: TestRepo;
  let path: string;
  let asOwner: ApiClient;
  let asStranger: ApiClient;
  let asAdmin: ApiClient;
  let anonymous: ApiClient;

  const tooLong = 'x'.repeat(300);

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    stranger = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    org = await makeOrg(t, owner.user);
    repo = await makeRepo(t, owner, { autoInit: true });
    path = `/repos/${owner.name}/${repo.name}`;
    asOwner = as(t, owner);
    asStranger = as(t, stranger);
    asAdmin = as(t, admin);
    anonymous = as(t, null);
  });

  afterAll(() => t.close());

  it('POST …/forks: the body (422) and the organisation (422) come before its membership (403), as Forgejo', async () => {
    expect((await asStranger.post(`${path}/forks`, { organization: org.name, name: 'not a name' })).status).toBe(422);
    expect((await asStranger.post(`${path}/forks`, { organization: uniqueName('nobody') })).status).toBe(422);
    const refused = await asStranger.post<{ message: string }>(`${path}/forks`, { organization: org.name });
    expect(refused.status).toBe(403);
    expect(refused.body.message).toBe(`User is no Member of Organisation '${org.name}'`);
    expect((await anonymous.post(`${path}/forks`, { organization: org.name, name: 'not a name' })).status).toBe(401);
  });

  it('GET …/collaborators/{c}/permission: who may ask (403) comes before the user (404), as Forgejo', async () => {
    expect((await anonymous.get(`${path}/collaborators/${uniqueName('nobody')}/permission`)).status).toBe(401);
    expect((await asStranger.get(`${path}/collaborators/${uniqueName('nobody')}/permission`)).status).toBe(403);
    expect((await asStranger.get(`${path}/collaborators/${owner.name}/permission`)).status).toBe(403);
    const own = await asStranger.get<{ permission: string }>(`${path}/collaborators/${stranger.name.toUpperCase()}/permission`);
    expect(own.status).toBe(200);
    expect(own.body.permission).toBe('read');
    expect((await asOwner.get(`${path}/collaborators/${uniqueName('nobody')}/permission`)).status).toBe(404);
    expect((await asAdmin.get(`${path}/collaborators/${uniqueName('nobody')}/permission`)).status).toBe(404);
  });

  it('release writes: the write (403) before the body; the body (422) before the release and the attachment (404)', async () => {
    const release = await asOwner.post<{ id: number }>(`${path}/releases`, { tag_name: uniqueName('v') });
    expect(release.status).toBe(201);
    expect((await asStranger.patch(`${path}/releases/999999`, { name: tooLong })).status).toBe(403);
    expect((await anonymous.patch(`${path}/releases/999999`, { name: tooLong })).status).toBe(401);
    expect((await asOwner.patch(`${path}/releases/999999`, { name: tooLong })).status).toBe(422);
    expect((await asOwner.patch(`${path}/releases/999999`, { name: 'fine' })).status).toBe(404);
    const asset = `${path}/releases/${release.body.id}/assets/999999`;
    expect((await asStranger.patch(asset, { name: tooLong })).status).toBe(403);
    expect((await asOwner.patch(asset, { name: tooLong })).status).toBe(422);
    expect((await asOwner.patch(asset, { name: 'fine' })).status).toBe(404);
    expect((await asOwner.patch(`${path}/releases/999999/assets/999999`, { name: tooLong })).status).toBe(422);
    expect((await asStranger.post(`${path}/releases`, {})).status).toBe(403);
  });

  it('POST …/releases over quota: the body (422) before the quota (413), as Forgejo binds before EnforceQuotaAPI', async () => {
    const full = await makeUser(t);
    const own = await makeRepo(t, full, { autoInit: true });
    const group = uniqueName('group');
    expect(
      (await asAdmin.post('/admin/quota/groups', { name: group, rules: [{ name: uniqueName('rule'), limit: 0, subjects: ['size:repos:all'] }] })).status,
    ).toBe(201);
    expect((await asAdmin.put(`/admin/quota/groups/${group}/users/${full.name}`)).status).toBe(204);
    const releases = `/repos/${full.name}/${own.name}/releases`;
    expect((await as(t, full).post(releases, {})).status).toBe(422);
    expect((await as(t, full).post(releases, { tag_name: 'v1' })).status).toBe(413);
    expect((await asStranger.post(releases, {})).status).toBe(403);
  });

  it('repository hooks: the admin door (401/403) before the body; the body (422) before the hook (404)', async () => {
    expect((await anonymous.post(`${path}/hooks`, {})).status).toBe(401);
    expect((await asStranger.post(`${path}/hooks`, {})).status).toBe(403);
    expect((await asOwner.post(`${path}/hooks`, {})).status).toBe(422);
    expect((await asStranger.patch(`${path}/hooks/999999`, { branch_filter: tooLong })).status).toBe(403);
    expect((await asOwner.patch(`${path}/hooks/999999`, { branch_filter: tooLong })).status).toBe(422);
    expect((await asOwner.patch(`${path}/hooks/999999`, { active: true })).status).toBe(404);
  });

  it('organisation hooks: the organisation (404), sign-in (401) and ownership (403) before the body (422), then the hook (404)', async () => {
    const hooks = `/orgs/${org.name}/hooks`;
    expect((await anonymous.post(`/orgs/${uniqueName('nobody')}/hooks`, {})).status).toBe(404);
    expect((await anonymous.post(hooks, {})).status).toBe(401);
    expect((await asStranger.post(hooks, {})).status).toBe(403);
    expect((await asOwner.post(hooks, {})).status).toBe(422);
    expect((await asStranger.patch(`${hooks}/999999`, { branch_filter: tooLong })).status).toBe(403);
    expect((await asOwner.patch(`${hooks}/999999`, { branch_filter: tooLong })).status).toBe(422);
    expect((await asOwner.patch(`${hooks}/999999`, { active: true })).status).toBe(404);
  });

  it('user and system hooks: sign-in (401) and the site admin (403) before the body (422), then the hook (404)', async () => {
    expect((await anonymous.post('/user/hooks', {})).status).toBe(401);
    expect((await asStranger.post('/user/hooks', {})).status).toBe(422);
    expect((await asStranger.patch('/user/hooks/999999', { branch_filter: tooLong })).status).toBe(422);
    expect((await asStranger.patch('/user/hooks/999999', { active: true })).status).toBe(404);
    expect((await asStranger.post('/admin/hooks', {})).status).toBe(403);
    expect((await asStranger.patch('/admin/hooks/999999', { branch_filter: tooLong })).status).toBe(403);
    expect((await asAdmin.patch('/admin/hooks/999999', { branch_filter: tooLong })).status).toBe(422);
    expect((await asAdmin.patch('/admin/hooks/999999', { active: true })).status).toBe(404);
  });

  it('quota administration: the rule or the user (404) before the body (422), as Forgejo', async () => {
    expect((await asAdmin.patch(`/admin/quota/rules/${uniqueName('nothing')}`, { limit: 'lots' })).status).toBe(404);
    expect((await asAdmin.post(`/admin/users/${uniqueName('nobody')}/quota/groups`, { groups: 'one' })).status).toBe(404);
    const rule = uniqueName('rule');
    expect((await asAdmin.post('/admin/quota/rules', { name: rule, limit: 10, subjects: ['size:all'] })).status).toBe(201);
    expect((await asAdmin.patch(`/admin/quota/rules/${rule}`, { limit: 'lots' })).status).toBe(422);
    expect((await asAdmin.post(`/admin/users/${stranger.name}/quota/groups`, { groups: 'one' })).status).toBe(422);
    expect((await asStranger.patch(`/admin/quota/rules/${rule}`, { limit: 'lots' })).status).toBe(403);
  });
});
