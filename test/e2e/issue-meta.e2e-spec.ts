import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('issue assignees', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer, reader, stranger] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(() => t.close());

  const issues = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/issues`);
  const logins = (users: { login: string }[] | null) => (users ?? []).map((user) => user.login);

  it('lists who may be assigned: the owner and writing collaborators of a user’s repository', async () => {
    const repo = await makeRepo(t, owner);
    await t.http.put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`)).set(withToken(owner.token)).send({ permission: 'write' }).expect(204);
    await t.http.put(t.api(`/repos/${repo.full_name}/collaborators/${reader.name}`)).set(withToken(owner.token)).send({ permission: 'read' }).expect(204);
    await t.http.get(t.api(`/repos/${repo.full_name}/assignees`)).expect(401);
    const listed = await t.http.get(t.api(`/repos/${repo.full_name}/assignees`)).set(withToken(stranger.token)).expect(200);
    expect(logins(listed.body).sort()).toEqual([owner.name, writer.name].sort());
    const hidden = await makeRepo(t, owner, { private: true });
    await t.http.get(t.api(`/repos/${hidden.full_name}/assignees`)).set(withToken(stranger.token)).expect(404);

    // Only those may be assigned; a read collaborator is refused with Forgejo's 422.
    const refused = await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'x', assignees: [reader.name] }).expect(422);
    expect(refused.body.message).toContain("user doesn't have access to repo");
    const issue = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'x', assignee: writer.name }).expect(201)).body;
    expect(logins(issue.assignees)).toEqual([writer.name]);
    const patched = await t.http.patch(`${issues(repo)}/${issue.number}`).set(withToken(writer.token)).send({ assignees: [owner.name, writer.name] }).expect(201);
    expect(logins(patched.body.assignees).sort()).toEqual([owner.name, writer.name].sort());
    const byAssignee = await t.http.get(`${issues(repo)}?assigned_by=${owner.name}`).expect(200);
    expect(byAssignee.body.map((i: { number: number }) => i.number)).toEqual([issue.number]);
    expect((await t.http.get(`${issues(repo)}?assigned_by=${reader.name}`).expect(200)).body).toEqual([]);
  });

  it('in an organisation: its Owners and members of teams writing a unit may be assigned, readers may not', async () => {
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name });
    const as = (user: TestUser) => withToken(user.token);
    const triage = await t.http.post(t.api(`/orgs/${org.name}/teams`)).set(as(owner)).send({ name: 'triage', permission: 'write', units: ['repo.issues'], includes_all_repositories: true }).expect(201);
    const lookers = await t.http.post(t.api(`/orgs/${org.name}/teams`)).set(as(owner)).send({ name: 'lookers', permission: 'read', units: ['repo.issues'], includes_all_repositories: true }).expect(201);
    await t.http.put(t.api(`/teams/${triage.body.id}/members/${writer.name}`)).set(as(owner)).expect(204);
    await t.http.put(t.api(`/teams/${lookers.body.id}/members/${reader.name}`)).set(as(owner)).expect(204);
    const listed = await t.http.get(t.api(`/repos/${repo.full_name}/assignees`)).set(as(reader)).expect(200);
    expect(logins(listed.body).sort()).toEqual([owner.name, writer.name].sort());
    await t.http.post(issues(repo)).set(as(owner)).send({ title: 'x', assignees: [writer.name, owner.name] }).expect(201);
    await t.http.post(issues(repo)).set(as(owner)).send({ title: 'x', assignees: [reader.name] }).expect(422);
    await t.http.post(issues(repo)).set(as(owner)).send({ title: 'x', assignees: [org.name] }).expect(422);
  });
});
