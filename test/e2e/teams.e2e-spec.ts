import type { RepositoryWire } from '../../src/repos/repository.wire';
import type { TeamWire } from '../../src/teams/team.wire';
import { TeamRepoEntity } from '../../src/users/organization.entities';
import { ApiClient, as, makeOrg, makeRepo, makeUser, TestUser } from '../support/factories';
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

  const file = (name: string) => ({ content: Buffer.from(name).toString('base64'), message: `add ${name}` });
  /** A team created by `client` in `org`: its answer's status and body. */
  const createTeam = (client: ApiClient, org: string, body: object) => client.post<TeamWire>(`/orgs/${org}/teams`, body);

  it('a write team pushes, a team without repo.code sees the repository but not its code, a member without a team sees nothing', async () => {
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name, private: true, autoInit: true });
    const path = `/repos/${org.name}/${repo.name}`;
    const asOwner = as(t, owner);

    const writers = await createTeam(asOwner, org.name, { name: 'writers', units_map: { 'repo.code': 'write', 'repo.releases': 'read' } });
    expect(writers.status).toBe(201);
    expect(writers.body).toMatchObject({ name: 'writers', permission: 'read', units_map: { 'repo.code': 'write', 'repo.releases': 'read' } });
    const issues = await createTeam(asOwner, org.name, { name: 'triage', permission: 'write', units: ['repo.issues'] });
    const bystanders = await createTeam(asOwner, org.name, { name: 'others', permission: 'read', units: ['repo.code'] });
    expect([issues.status, bystanders.status]).toEqual([201, 201]);
    expect((await createTeam(asOwner, org.name, { name: 'Writers', units: ['repo.code'], permission: 'read' })).status).toBe(422);
    expect((await createTeam(asOwner, org.name, { name: 'bad', units_map: { 'repo.nothing': 'read' } })).status).toBe(422);
    expect((await createTeam(as(t, writer), org.name, { name: 'mine', units: ['repo.code'], permission: 'read' })).status).toBe(403);

    for (const [team, user] of [
      [writers, writer],
      [issues, issuesOnly],
      [bystanders, member],
    ] as const) {
      expect((await asOwner.put(`/teams/${team.body.id}/members/${user.name}`)).status).toBe(204);
    }
    expect((await asOwner.put(`/teams/${writers.body.id}/repos/${org.name}/${repo.name}`)).status).toBe(204);
    expect((await asOwner.put(`/teams/${issues.body.id}/repos/${org.name}/${repo.name}`)).status).toBe(204);
    const listed = await asOwner.get<RepositoryWire[]>(`/teams/${writers.body.id}/repos`);
    expect(listed.status).toBe(200);
    expect(listed.body.map((item) => item.name)).toEqual([repo.name]);

    const asWriter = as(t, writer);
    const seenByWriter = await asWriter.get<RepositoryWire>(path);
    expect(seenByWriter.status).toBe(200);
    expect(seenByWriter.body.permissions).toEqual({ admin: false, push: true, pull: true });
    expect((await asWriter.post(`${path}/contents/w.txt`, file('w'))).status).toBe(201);
    expect((await asWriter.post(`${path}/releases`, { tag_name: 'v1' })).status).toBe(403);
    expect((await asWriter.delete(path)).status).toBe(403);
    const mine = await asWriter.get<RepositoryWire[]>('/user/repos');
    expect(mine.status).toBe(200);
    expect(mine.body.map((item) => item.name)).toContain(repo.name);

    const seenByTriage = await as(t, issuesOnly).get<RepositoryWire>(path);
    expect(seenByTriage.status).toBe(200);
    expect(seenByTriage.body.permissions).toEqual({ admin: false, push: false, pull: false });
    expect((await as(t, issuesOnly).get(`${path}/contents/README.md`)).status).toBe(403);

    expect((await as(t, member).get(path)).status).toBe(404);

    expect((await asOwner.delete(`/teams/${writers.body.id}/repos/${org.name}/${repo.name}`)).status).toBe(204);
    expect((await asWriter.get(path)).status).toBe(404);

    expect((await asOwner.delete(path)).status).toBe(204);
    expect(await t.dataSource.getRepository(TeamRepoEntity).countBy({ repoId: repo.id })).toBe(0);
  });
});
