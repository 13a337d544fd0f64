import { TeamRepoEntity } from '../../src/users/organization.entities';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('teams: units and repositories, through the access policy', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;
  let issuesOnly: TestUser;
  let member: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer, issuesOnly, member] = await Promise.all([makeUser(t), makeUser(t), makeUser(t), makeUser(t)]);
  });

  afterAll(() => t.close());

  const as = (user: TestUser) => withToken(user.token);
  const file = (name: string) => ({ content: Buffer.from(name).toString('base64'), message: `add ${name}` });

  it('a write team pushes, a team without repo.code sees the repository but not its code, a member without a team sees nothing', async () => {
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name, private: true, autoInit: true });
    const path = `/repos/${org.name}/${repo.name}`;

    const writers = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'writers', units_map: { 'repo.code': 'write', 'repo.releases': 'read' } })
      .expect(201);
    expect(writers.body).toMatchObject({ name: 'writers', permission: 'read', units_map: { 'repo.code': 'write', 'repo.releases': 'read' } });
    const issues = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'triage', permission: 'write', units: ['repo.issues'] })
      .expect(201);
    const bystanders = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'others', permission: 'read', units: ['repo.code'] })
      .expect(201);
    await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'Writers', units: ['repo.code'], permission: 'read' })
      .expect(422);
    await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'bad', units_map: { 'repo.nothing': 'read' } })
      .expect(422);
    await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(writer))
      .send({ name: 'mine', units: ['repo.code'], permission: 'read' })
      .expect(403);

    for (const [team, user] of [
      [writers, writer],
      [issues, issuesOnly],
      [bystanders, member],
    ] as const) {
      await t.http
        .put(t.api(`/teams/${team.body.id}/members/${user.name}`))
        .set(as(owner))
        .expect(204);
    }
    await t.http
      .put(t.api(`/teams/${writers.body.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .put(t.api(`/teams/${issues.body.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    const listed = await t.http
      .get(t.api(`/teams/${writers.body.id}/repos`))
      .set(as(owner))
      .expect(200);
    expect(listed.body.map((item: { name: string }) => item.name)).toEqual([repo.name]);

    const seenByWriter = await t.http.get(t.api(path)).set(as(writer)).expect(200);
    expect(seenByWriter.body.permissions).toEqual({ admin: false, push: true, pull: true });
    await t.http
      .post(t.api(`${path}/contents/w.txt`))
      .set(as(writer))
      .send(file('w'))
      .expect(201);
    await t.http
      .post(t.api(`${path}/releases`))
      .set(as(writer))
      .send({ tag_name: 'v1' })
      .expect(403);
    await t.http.delete(t.api(path)).set(as(writer)).expect(403);
    const mine = await t.http.get(t.api('/user/repos')).set(as(writer)).expect(200);
    expect(mine.body.map((item: { name: string }) => item.name)).toContain(repo.name);

    const seenByTriage = await t.http.get(t.api(path)).set(as(issuesOnly)).expect(200);
    expect(seenByTriage.body.permissions).toEqual({ admin: false, push: false, pull: false });
    await t.http
      .get(t.api(`${path}/contents/README.md`))
      .set(as(issuesOnly))
      .expect(403);

    await t.http.get(t.api(path)).set(as(member)).expect(404);

    await t.http
      .delete(t.api(`/teams/${writers.body.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    await t.http.get(t.api(path)).set(as(writer)).expect(404);

    await t.http.delete(t.api(path)).set(as(owner)).expect(204);
    expect(await t.dataSource.getRepository(TeamRepoEntity).countBy({ repoId: repo.id })).toBe(0);
  });
});
