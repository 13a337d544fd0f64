import { AuditEventEntity } from '../../src/audit/audit-event.entity';
import { CollaborationEntity } from '../../src/collaborators/collaboration.entity';
import { OrgUserEntity, TeamEntity, TeamRepoEntity, TeamUserEntity } from '../../src/users/organization.entities';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('teams: every route, the Owners rules, organisation members and the cleanup on deletes', () => {
  let t: TestApp;
  let owner: TestUser;
  let admin: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, admin, stranger] = await Promise.all([makeUser(t), makeUser(t, { admin: true }), makeUser(t)]);
  });

  afterAll(() => t.close());

  const as = (user: TestUser) => withToken(user.token);
  const names = (body: { name: string }[]) => body.map((item) => item.name);
  const logins = (body: { login: string }[]) => body.map((item) => item.login);
  const createTeam = async (org: string, body: Record<string, unknown>) =>
    (
      await t.http
        .post(t.api(`/orgs/${org}/teams`))
        .set(as(owner))
        .send(body)
        .expect(201)
    ).body;
  const join = (teamId: number, user: TestUser) =>
    t.http
      .put(t.api(`/teams/${teamId}/members/${user.name}`))
      .set(as(owner))
      .expect(204);
  const rows = {
    teamUsers: (teamId: number) => t.dataSource.getRepository(TeamUserEntity).countBy({ teamId }),
    orgUser: (orgId: number, uid: number) => t.dataSource.getRepository(OrgUserEntity).countBy({ orgId, uid }),
    teamRepos: (where: Partial<TeamRepoEntity>) => t.dataSource.getRepository(TeamRepoEntity).countBy(where),
    team: (id: number) => t.dataSource.getRepository(TeamEntity).findOneBy({ id }),
  };

  it('creates, reads, edits and deletes teams with Forgejo statuses, messages and JSON', async () => {
    const org = await makeOrg(t, owner.user);
    const [member, outsider] = await Promise.all([makeUser(t), makeUser(t)]);
    const created = await createTeam(org.name, {
      name: 'Devs',
      description: 'the developers',
      units_map: { 'repo.code': 'write', 'repo.issues': 'read', 'repo.wiki': 'none' },
      can_create_org_repo: true,
    });
    expect(created).toMatchObject({
      name: 'Devs',
      description: 'the developers',
      permission: 'read',
      includes_all_repositories: false,
      can_create_org_repo: true,
      units_map: { 'repo.code': 'write', 'repo.issues': 'read', 'repo.wiki': 'none' },
      organization: { name: org.name },
    });
    expect(created.units.sort()).toEqual(['repo.code', 'repo.issues', 'repo.wiki']);
    const admins = await createTeam(org.name, { name: 'admins', permission: 'admin' });
    expect(admins.permission).toBe('admin');
    expect(Object.keys(admins.units_map)).toHaveLength(10);
    expect(new Set(Object.values(admins.units_map))).toEqual(new Set(['admin']));

    const refused = async (body: Record<string, unknown>, message?: string) => {
      const answer = await t.http
        .post(t.api(`/orgs/${org.name}/teams`))
        .set(as(owner))
        .send(body)
        .expect(422);
      if (message) expect(answer.body.message).toBe(message);
    };
    await refused({ name: 'devs', units: ['repo.code'], permission: 'read' }, `team already exists [org_id: ${org.id}, name: devs]`);
    await refused({ name: 'p', units: ['repo.code'], permission: 'superuser' }, '[Permission]: In');
    await refused({ name: 'u', units: ['repo.nothing'], permission: 'read' });
    await refused({ name: 'm', units_map: { 'repo.code': 'sometimes' } });
    await refused({ name: 'e', permission: 'read' }, 'units permission should not be empty');
    await refused({ name: 'bad name!', units: ['repo.code'], permission: 'read' }, '[Name]: AlphaDashDot');
    await refused({ name: 'new', units: ['repo.code'], permission: 'read' });

    await join(created.id, member);
    const owners = (
      await t.http
        .get(t.api(`/orgs/${org.name}/teams`))
        .set(as(owner))
        .expect(200)
    ).body;
    expect(names(owners)).toEqual(['admins', 'Devs', 'Owners']);
    expect(owners.every((team: { organization: unknown }) => team.organization === null)).toBe(true);
    const ownersTeam = owners.find((team: { name: string }) => team.name === 'Owners');
    expect(ownersTeam).toMatchObject({ permission: 'owner', includes_all_repositories: true, can_create_org_repo: true, units_map: { 'repo.code': 'owner' } });

    // Reading one team: owners, site admins and its members; other members 403; everyone else 404; anonymous 401.
    expect(
      (
        await t.http
          .get(t.api(`/teams/${created.id}`))
          .set(as(member))
          .expect(200)
      ).body.organization.name,
    ).toBe(org.name);
    await t.http
      .get(t.api(`/teams/${created.id}`))
      .set(as(admin))
      .expect(200);
    const notInTeam = await t.http
      .get(t.api(`/teams/${admins.id}`))
      .set(as(member))
      .expect(403);
    expect(notInTeam.body.message).toBe('Must be a team member');
    await t.http
      .get(t.api(`/teams/${created.id}`))
      .set(as(outsider))
      .expect(404);
    await t.http.get(t.api(`/teams/${created.id}`)).expect(401);
    await t.http.get(t.api('/teams/999999')).set(as(owner)).expect(404);
    await t.http.get(t.api('/teams/abc')).set(as(owner)).expect(404);

    // Editing: owners and site admins (a mere member gets 404); units_map sets the permission to its lowest mode.
    await t.http
      .patch(t.api(`/teams/${created.id}`))
      .set(as(member))
      .send({ description: 'mine' })
      .expect(404);
    const edited = await t.http
      .patch(t.api(`/teams/${created.id}`))
      .set(as(owner))
      .send({ name: 'Developers', permission: 'write', units_map: { 'repo.code': 'write', 'repo.releases': 'write' } })
      .expect(200);
    expect(edited.body).toMatchObject({
      name: 'Developers',
      description: 'the developers',
      permission: 'write',
      units_map: { 'repo.code': 'write', 'repo.releases': 'write' },
      can_create_org_repo: true,
    });
    const described = await t.http
      .patch(t.api(`/teams/${created.id}`))
      .set(as(admin))
      .send({ description: 'new words' })
      .expect(200);
    expect(described.body).toMatchObject({ name: 'Developers', description: 'new words', permission: 'write' });
    const clash = await t.http
      .patch(t.api(`/teams/${created.id}`))
      .set(as(owner))
      .send({ name: 'ADMINS' })
      .expect(422);
    expect(clash.body.message).toBe(`team already exists [org_id: ${org.id}, name: admins]`);
    await t.http
      .patch(t.api(`/teams/${created.id}`))
      .set(as(owner))
      .send({ units_map: { 'repo.bogus': 'read' } })
      .expect(422);

    // The Owners team stays what it is: only its description changes, and it cannot be deleted.
    const ownersEdited = await t.http
      .patch(t.api(`/teams/${ownersTeam.id}`))
      .set(as(owner))
      .send({
        name: 'Bosses',
        description: 'in charge',
        permission: 'read',
        units: ['repo.code'],
        can_create_org_repo: false,
        includes_all_repositories: false,
      })
      .expect(200);
    expect(ownersEdited.body).toMatchObject({
      name: 'Owners',
      description: 'in charge',
      permission: 'owner',
      includes_all_repositories: true,
      can_create_org_repo: true,
    });
    const kept = await t.http
      .delete(t.api(`/teams/${ownersTeam.id}`))
      .set(as(owner))
      .expect(422);
    expect(kept.body.message).toBe('the Owners team of an organization cannot be deleted');
    const lastOwner = await t.http
      .delete(t.api(`/teams/${ownersTeam.id}/members/${owner.name}`))
      .set(as(owner))
      .expect(422);
    expect(lastOwner.body.message).toBe('the last owner of an organization cannot be removed');

    // Deleting a team: its links and memberships go, and a member in no other team leaves the organisation.
    const repo = await makeRepo(t, owner, { org: org.name });
    await t.http
      .put(t.api(`/teams/${created.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .delete(t.api(`/teams/${created.id}`))
      .set(as(member))
      .expect(404);
    await t.http
      .delete(t.api(`/teams/${created.id}`))
      .set(as(owner))
      .expect(204);
    expect(await rows.team(created.id)).toBeNull();
    expect(await rows.teamUsers(created.id)).toBe(0);
    expect(await rows.teamRepos({ teamId: created.id })).toBe(0);
    expect(await rows.orgUser(org.id, member.user.id)).toBe(0);
    await t.http
      .get(t.api(`/teams/${created.id}`))
      .set(as(owner))
      .expect(404);
  });

  it('lists and searches teams for members only, as Forgejo', async () => {
    const org = await makeOrg(t, owner.user);
    const hidden = await makeOrg(t, owner.user, { visibility: 'private' });
    const member = await makeUser(t);
    const alpha = await createTeam(org.name, { name: 'alpha', description: 'frontend people', units: ['repo.code'], permission: 'read' });
    await createTeam(org.name, { name: 'beta', description: 'backend', units: ['repo.code'], permission: 'read' });
    await createTeam(org.name, { name: 'gamma-front', units: ['repo.code'], permission: 'read' });
    await join(alpha.id, member);

    const search = (user: TestUser | null, query: string, orgName = org.name) => {
      const request = t.http.get(t.api(`/orgs/${orgName}/teams/search${query}`));
      return user ? request.set(as(user)) : request;
    };
    const found = await search(admin, '?q=front').expect(200);
    expect(found.body.ok).toBe(true);
    expect(names(found.body.data)).toEqual(['alpha', 'gamma-front']);
    expect(found.headers['x-total-count']).toBe('2');
    expect(names((await search(admin, '?q=front&include_desc=false').expect(200)).body.data)).toEqual(['gamma-front']);
    const paged = await search(admin, '?limit=2&page=1').expect(200);
    expect(names(paged.body.data)).toEqual(['alpha', 'beta']);
    expect(paged.headers['x-total-count']).toBe('4');
    expect(paged.headers.link).toContain('rel="next"');
    // Members search among their own teams.
    expect(names((await search(member, '').expect(200)).body.data)).toEqual(['alpha']);
    expect(names((await search(owner, '?q=own').expect(200)).body.data)).toEqual(['Owners']);
    expect((await search(stranger, '').expect(403)).body.message).toBe('Must be an organization member');
    await search(null, '').expect(401);
    await search(stranger, '', hidden.name).expect(404);

    expect(
      names(
        (
          await t.http
            .get(t.api(`/orgs/${org.name}/teams`))
            .set(as(member))
            .expect(200)
        ).body,
      ),
    ).toEqual(['alpha', 'beta', 'gamma-front', 'Owners']);
    expect(
      (
        await t.http
          .get(t.api(`/orgs/${org.name}/teams`))
          .set(as(stranger))
          .expect(403)
      ).body.message,
    ).toBe('Must be an organization member');
    await t.http
      .get(t.api(`/orgs/${hidden.name}/teams`))
      .set(as(stranger))
      .expect(404);
    const mine = { name: 'mine', units: ['repo.code'], permission: 'read' };
    expect(
      (
        await t.http
          .post(t.api(`/orgs/${org.name}/teams`))
          .set(as(member))
          .send(mine)
          .expect(403)
      ).body.message,
    ).toBe('Must be an organization owner');
    expect(
      (
        await t.http
          .post(t.api(`/orgs/${org.name}/teams`))
          .set(as(stranger))
          .send(mine)
          .expect(403)
      ).body.message,
    ).toBe('Must be an organization member');
    await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .send(mine)
      .expect(401);
    await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(admin))
      .send({ ...mine, name: 'by-admin' })
      .expect(201);

    const own = await t.http.get(t.api('/user/teams')).set(as(member)).expect(200);
    expect(own.body).toHaveLength(1);
    expect(own.body[0]).toMatchObject({ name: 'alpha', organization: { name: org.name } });
    await t.http.get(t.api('/user/teams')).expect(401);
  });

  it('team members and repositories: list, check, add, remove, and includes_all_repositories', async () => {
    const org = await makeOrg(t, owner.user);
    const [reader, other] = await Promise.all([makeUser(t, { fullName: 'Zed' }), makeUser(t, { fullName: 'Amy' })]);
    const team = await createTeam(org.name, { name: 'readers', units: ['repo.code'], permission: 'read' });
    const everything = await createTeam(org.name, { name: 'all', units: ['repo.code'], permission: 'read', includes_all_repositories: true });
    await join(team.id, reader);
    await join(team.id, reader);
    await join(team.id, other);
    expect((await rows.team(team.id))!.numMembers).toBe(2);
    // The audit log tells of each real change once: the repeated addition added nothing.
    expect(await t.dataSource.getRepository(AuditEventEntity).countBy({ action: 'team.member_add', targetType: 'team', targetId: team.id })).toBe(2);

    const members = await t.http
      .get(t.api(`/teams/${team.id}/members`))
      .set(as(reader))
      .expect(200);
    expect(logins(members.body)).toEqual([other.name, reader.name]);
    expect(members.headers['x-total-count']).toBe('2');
    expect(
      (
        await t.http
          .get(t.api(`/teams/${team.id}/members/${reader.name}`))
          .set(as(owner))
          .expect(200)
      ).body.login,
    ).toBe(reader.name);
    await t.http
      .get(t.api(`/teams/${team.id}/members/${owner.name}`))
      .set(as(owner))
      .expect(404);
    await t.http
      .get(t.api(`/teams/${team.id}/members/nobody-at-all`))
      .set(as(owner))
      .expect(404);
    await t.http
      .put(t.api(`/teams/${team.id}/members/nobody-at-all`))
      .set(as(owner))
      .expect(404);
    await t.http
      .put(t.api(`/teams/${team.id}/members/${stranger.name}`))
      .set(as(reader))
      .expect(404);
    await t.http
      .put(t.api(`/teams/${team.id}/members/${org.name}`))
      .set(as(owner))
      .expect(404);

    const first = await makeRepo(t, owner, { org: org.name, private: true });
    await t.http
      .put(t.api(`/teams/${team.id}/repos/${org.name}/${first.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .put(t.api(`/teams/${team.id}/repos/${org.name}/${first.name}`))
      .set(as(owner))
      .expect(204);
    expect(
      (
        await t.http
          .get(t.api(`/teams/${team.id}/repos/${org.name}/${first.name}`))
          .set(as(reader))
          .expect(200)
      ).body,
    ).toMatchObject({
      name: first.name,
      permissions: { admin: false, push: false, pull: true },
    });
    await t.http
      .get(t.api(`/teams/${team.id}/repos/${org.name}/nothing`))
      .set(as(reader))
      .expect(404);
    // A member of the team who does not administer the repository may not link it.
    const refused = await t.http
      .delete(t.api(`/teams/${team.id}/repos/${org.name}/${first.name}`))
      .set(as(reader))
      .expect(403);
    expect(refused.body.message).toBe('Must have admin-level access to the repository');

    // A team that includes all repositories reaches those created later too.
    const later = await makeRepo(t, owner, { org: org.name, private: true });
    expect(
      names(
        (
          await t.http
            .get(t.api(`/teams/${everything.id}/repos`))
            .set(as(owner))
            .expect(200)
        ).body,
      ).sort(),
    ).toEqual([first.name, later.name].sort());
    await t.http
      .get(t.api(`/teams/${everything.id}/repos/${org.name}/${later.name}`))
      .set(as(owner))
      .expect(200);
    await t.http
      .get(t.api(`/teams/${team.id}/repos/${org.name}/${later.name}`))
      .set(as(owner))
      .expect(404);
    // It keeps them as links when it stops including everything.
    await t.http
      .patch(t.api(`/teams/${everything.id}`))
      .set(as(owner))
      .send({ permission: 'read', includes_all_repositories: false })
      .expect(200);
    expect(await rows.teamRepos({ teamId: everything.id })).toBe(2);

    await t.http
      .delete(t.api(`/teams/${team.id}/members/${other.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .delete(t.api(`/teams/${team.id}/members/${other.name}`))
      .set(as(owner))
      .expect(204);
    expect(await rows.orgUser(org.id, other.user.id)).toBe(0);
    expect((await rows.team(team.id))!.numMembers).toBe(1);
  });

  it('teams of a repository by name: list, check, add, remove (422 when nothing changes, 405 for a user repository)', async () => {
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name });
    const base = `/repos/${org.name}/${repo.name}/teams`;
    const team = await createTeam(org.name, { name: 'Writers', units: ['repo.code'], permission: 'write' });
    const repoAdmin = await makeUser(t);
    await t.http
      .put(t.api(`/repos/${org.name}/${repo.name}/collaborators/${repoAdmin.name}`))
      .set(as(owner))
      .send({ permission: 'admin' })
      .expect(204);

    expect(names((await t.http.get(t.api(base)).set(as(stranger)).expect(200)).body)).toEqual(['Owners']);
    await t.http.get(t.api(base)).expect(401);
    await t.http
      .get(t.api(`${base}/writers`))
      .set(as(owner))
      .expect(404);
    await t.http
      .put(t.api(`${base}/writers`))
      .set(as(stranger))
      .expect(403);
    // Repository admins change team access only where the organisation allows it.
    expect(
      (
        await t.http
          .put(t.api(`${base}/writers`))
          .set(as(repoAdmin))
          .expect(403)
      ).body.message,
    ).toBe('user is nor repo admin nor owner');
    await t.http
      .put(t.api(`${base}/writers`))
      .set(as(owner))
      .expect(204);
    expect(
      (
        await t.http
          .put(t.api(`${base}/writers`))
          .set(as(owner))
          .expect(422)
      ).body.message,
    ).toBe("team 'Writers' is already added to repo");
    expect(
      (
        await t.http
          .get(t.api(`${base}/WRITERS`))
          .set(as(owner))
          .expect(200)
      ).body,
    ).toMatchObject({ id: team.id, name: 'Writers', permission: 'write' });
    expect(names((await t.http.get(t.api(base)).set(as(owner)).expect(200)).body)).toEqual(['Owners', 'Writers']);
    await t.http
      .put(t.api(`${base}/nobody`))
      .set(as(owner))
      .expect(404);
    await t.http
      .delete(t.api(`${base}/writers`))
      .set(as(owner))
      .expect(204);
    expect(
      (
        await t.http
          .delete(t.api(`${base}/writers`))
          .set(as(owner))
          .expect(422)
      ).body.message,
    ).toBe("team 'Writers' was not added to repo");

    await t.http
      .patch(t.api(`/orgs/${org.name}`))
      .set(as(owner))
      .send({ repo_admin_change_team_access: true })
      .expect(200);
    await t.http
      .put(t.api(`${base}/writers`))
      .set(as(repoAdmin))
      .expect(204);

    const own = await makeRepo(t, owner);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${owner.name}/${own.name}/teams`))
          .set(as(owner))
          .expect(405)
      ).body.message,
    ).toBe('repo is not owned by an organization');
  });

  it('members and public members of an organisation, as Forgejo shows them', async () => {
    const org = await makeOrg(t, owner.user);
    const [member, shy] = await Promise.all([makeUser(t), makeUser(t)]);
    const team = await createTeam(org.name, { name: 'crew', units: ['repo.code'], permission: 'read' });
    await join(team.id, member);
    await join(team.id, shy);

    expect(
      logins(
        (
          await t.http
            .get(t.api(`/orgs/${org.name}/members`))
            .set(as(member))
            .expect(200)
        ).body,
      ),
    ).toEqual([owner.name, member.name, shy.name]);
    expect(
      (
        await t.http
          .get(t.api(`/orgs/${org.name}/members`))
          .set(as(stranger))
          .expect(200)
      ).body,
    ).toEqual([]);
    expect((await t.http.get(t.api(`/orgs/${org.name}/public_members`)).expect(200)).body).toEqual([]);

    await t.http
      .put(t.api(`/orgs/${org.name}/public_members/${member.name}`))
      .set(as(member))
      .expect(204);
    expect(
      (
        await t.http
          .put(t.api(`/orgs/${org.name}/public_members/${shy.name}`))
          .set(as(member))
          .expect(403)
      ).body.message,
    ).toBe('Cannot publicize another member');
    expect(
      (
        await t.http
          .put(t.api(`/orgs/${org.name}/public_members/${stranger.name}`))
          .set(as(stranger))
          .expect(403)
      ).body.message,
    ).toBe('Must be an organization member');
    await t.http.put(t.api(`/orgs/${org.name}/public_members/${member.name}`)).expect(401);

    expect(logins((await t.http.get(t.api(`/orgs/${org.name}/public_members`)).expect(200)).body)).toEqual([member.name]);
    expect(
      logins(
        (
          await t.http
            .get(t.api(`/orgs/${org.name}/members`))
            .set(as(stranger))
            .expect(200)
        ).body,
      ),
    ).toEqual([member.name]);
    await t.http.get(t.api(`/orgs/${org.name}/public_members/${member.name}`)).expect(204);
    await t.http.get(t.api(`/orgs/${org.name}/public_members/${shy.name}`)).expect(404);
    await t.http.get(t.api(`/orgs/${org.name}/public_members/nobody-at-all`)).expect(404);
    // Outside the organisation, a membership check answers as the public-membership check.
    await t.http
      .get(t.api(`/orgs/${org.name}/members/${member.name}`))
      .set(as(stranger))
      .expect(204);
    await t.http
      .get(t.api(`/orgs/${org.name}/members/${shy.name}`))
      .set(as(stranger))
      .expect(404);
    await t.http
      .get(t.api(`/orgs/${org.name}/members/${shy.name}`))
      .set(as(member))
      .expect(204);

    await t.http
      .delete(t.api(`/orgs/${org.name}/public_members/${member.name}`))
      .set(as(member))
      .expect(204);
    expect((await t.http.get(t.api(`/orgs/${org.name}/public_members`)).expect(200)).body).toEqual([]);

    // Removing a member from the organisation removes them from its teams.
    await t.http
      .delete(t.api(`/orgs/${org.name}/members/${member.name}`))
      .set(as(member))
      .expect(403);
    await t.http
      .delete(t.api(`/orgs/${org.name}/members/${member.name}`))
      .set(as(owner))
      .expect(204);
    expect(await t.dataSource.getRepository(TeamUserEntity).countBy({ orgId: org.id, uid: member.user.id })).toBe(0);
    expect(await rows.orgUser(org.id, member.user.id)).toBe(0);
    expect((await rows.team(team.id))!.numMembers).toBe(1);
  });

  it('teams that may create repositories do, and their creator administers what they create', async () => {
    const org = await makeOrg(t, owner.user);
    const [creator, reader, admins] = await Promise.all([makeUser(t), makeUser(t), makeUser(t)]);
    const creators = await createTeam(org.name, { name: 'creators', units: ['repo.code'], permission: 'read', can_create_org_repo: true });
    const readers = await createTeam(org.name, { name: 'readers', units: ['repo.code'], permission: 'read', includes_all_repositories: true });
    const adminTeam = await createTeam(org.name, { name: 'admins', permission: 'admin', includes_all_repositories: true, can_create_org_repo: true });
    await join(creators.id, creator);
    await join(readers.id, reader);
    await join(adminTeam.id, admins);

    const refused = await t.http
      .post(t.api(`/orgs/${org.name}/repos`))
      .set(as(reader))
      .send({ name: 'nope' })
      .expect(403);
    expect(refused.body.message).toBe('Given user is not allowed to create repository in organization.');
    const made = await t.http
      .post(t.api(`/orgs/${org.name}/repos`))
      .set(as(creator))
      .send({ name: uniqueName('made'), private: true })
      .expect(201);
    expect(made.body.permissions).toEqual({ admin: true, push: true, pull: true });
    const collaboration = await t.dataSource.getRepository(CollaborationEntity).findOneBy({ repoId: made.body.id, userId: creator.user.id });
    expect(collaboration?.mode).toBe(3);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${org.name}/${made.body.name}`))
          .set(as(creator))
          .expect(200)
      ).body.permissions.admin,
    ).toBe(true);
    expect(
      (
        await t.http
          .get(t.api(`/repos/${org.name}/${made.body.name}`))
          .set(as(reader))
          .expect(200)
      ).body.permissions,
    ).toEqual({ admin: false, push: false, pull: true });
    await t.http
      .patch(t.api(`/repos/${org.name}/${made.body.name}`))
      .set(as(creator))
      .send({ description: 'mine to change' })
      .expect(200);

    // An admin team that reaches every repository administers it already: no collaboration is added.
    const byAdmin = await t.http
      .post(t.api(`/orgs/${org.name}/repos`))
      .set(as(admins))
      .send({ name: uniqueName('adm') })
      .expect(201);
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ repoId: byAdmin.body.id })).toBe(0);
    expect(
      (
        await t.http
          .get(t.api(`/users/${creator.name}/orgs/${org.name}/permissions`))
          .set(as(creator))
          .expect(200)
      ).body.can_create_repository,
    ).toBe(true);
  });

  it('organisation packages are published by teams that write packages, as the access policy says', async () => {
    const org = await makeOrg(t, owner.user);
    const [publisher, reader, writerWithoutPackages] = await Promise.all([makeUser(t), makeUser(t), makeUser(t)]);
    const publishers = await createTeam(org.name, { name: 'publishers', units_map: { 'repo.code': 'read', 'repo.packages': 'write' } });
    const readers = await createTeam(org.name, { name: 'readers', units_map: { 'repo.code': 'read', 'repo.packages': 'read' } });
    const writers = await createTeam(org.name, { name: 'writers', units_map: { 'repo.code': 'write' } });
    await join(publishers.id, publisher);
    await join(readers.id, reader);
    await join(writers.id, writerWithoutPackages);
    const put = (user: TestUser, file: string) =>
      t.http.put(`/api/packages/${org.name}/generic/tool/1.0/${file}`).set(as(user)).set('Content-Type', 'application/octet-stream').send(Buffer.from(file));
    await put(publisher, 'a.bin').expect(201);
    await put(reader, 'b.bin').expect(403);
    // As Forgejo: a team's own permission (here write) also lets its members publish.
    await put(writerWithoutPackages, 'c.bin').expect(201);
    await put(stranger, 'd.bin').expect(403);
    await put(owner, 'e.bin').expect(201);
    await t.http.get(`/api/packages/${org.name}/generic/tool/1.0/a.bin`).set(as(reader)).expect(200);
  });

  it('deleting a repository, a user or an organisation leaves no membership, link or collaboration behind', async () => {
    const org = await makeOrg(t, owner.user);
    const leaving = await makeUser(t);
    const team = await createTeam(org.name, { name: 'crew', units: ['repo.code'], permission: 'write' });
    await join(team.id, leaving);
    const repo = await makeRepo(t, owner, { org: org.name });
    await t.http
      .put(t.api(`/teams/${team.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .put(t.api(`/repos/${org.name}/${repo.name}/collaborators/${leaving.name}`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(204);

    // As Forgejo, a member of an organisation is not deleted; leaving it takes them out of its teams.
    expect(
      (
        await t.http
          .delete(t.api(`/admin/users/${leaving.name}`))
          .set(as(admin))
          .expect(422)
      ).body.message,
    ).toBe(`user still has membership of organizations [uid: ${leaving.user.id}]`);
    await t.http
      .delete(t.api(`/orgs/${org.name}/members/${leaving.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .delete(t.api(`/admin/users/${leaving.name}`))
      .set(as(admin))
      .expect(204);
    expect(await t.dataSource.getRepository(TeamUserEntity).countBy({ uid: leaving.user.id })).toBe(0);
    expect(await t.dataSource.getRepository(OrgUserEntity).countBy({ uid: leaving.user.id })).toBe(0);
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ userId: leaving.user.id })).toBe(0);
    expect((await rows.team(team.id))!.numMembers).toBe(0);

    await t.http
      .delete(t.api(`/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    expect(await rows.teamRepos({ repoId: repo.id })).toBe(0);
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ repoId: repo.id })).toBe(0);

    await t.http
      .delete(t.api(`/orgs/${org.name}`))
      .set(as(owner))
      .expect(204);
    expect(await t.dataSource.getRepository(TeamEntity).countBy({ orgId: org.id })).toBe(0);
    expect(await t.dataSource.getRepository(TeamUserEntity).countBy({ orgId: org.id })).toBe(0);
    expect(await t.dataSource.getRepository(OrgUserEntity).countBy({ orgId: org.id })).toBe(0);
    expect(await rows.teamRepos({ orgId: org.id })).toBe(0);
  });

  it('concurrent additions and removals of the same team member or collaborator end consistent, never in a 500', async () => {
    const org = await makeOrg(t, owner.user);
    const [racer, collaborator] = await Promise.all([makeUser(t), makeUser(t)]);
    const [first, second] = [
      await createTeam(org.name, { name: 'one', units: ['repo.code'], permission: 'read' }),
      await createTeam(org.name, { name: 'two', units: ['repo.code'], permission: 'read' }),
    ];
    const repo = await makeRepo(t, owner, { org: org.name });
    const requests: Promise<{ status: number }>[] = [];
    for (let round = 0; round < 6; round++) {
      for (const team of [first, second]) {
        requests.push(
          t.http
            .put(t.api(`/teams/${team.id}/members/${racer.name}`))
            .set(as(owner))
            .then((answer) => answer),
        );
        requests.push(
          t.http
            .delete(t.api(`/teams/${team.id}/members/${racer.name}`))
            .set(as(owner))
            .then((answer) => answer),
        );
      }
      const collaborators = t.api(`/repos/${org.name}/${repo.name}/collaborators/${collaborator.name}`);
      requests.push(
        t.http
          .put(collaborators)
          .set(as(owner))
          .send({ permission: round % 2 ? 'write' : 'read' })
          .then((answer) => answer),
      );
      requests.push(
        t.http
          .delete(collaborators)
          .set(as(owner))
          .then((answer) => answer),
      );
    }
    const statuses = (await Promise.all(requests)).map((answer) => answer.status);
    expect(statuses.filter((status) => status !== 204)).toEqual([]);

    const memberships = await t.dataSource.getRepository(TeamUserEntity).findBy({ orgId: org.id, uid: racer.user.id });
    expect(await rows.orgUser(org.id, racer.user.id)).toBe(memberships.length > 0 ? 1 : 0);
    for (const team of [first, second]) expect((await rows.team(team.id))!.numMembers).toBe(await rows.teamUsers(team.id));
    expect(await t.dataSource.getRepository(CollaborationEntity).countBy({ repoId: repo.id, userId: collaborator.user.id })).toBeLessThanOrEqual(1);
    // Leaving one's last team while joining another: the organisation membership follows the teams.
    for (let round = 0; round < 5; round++) {
      await t.http
        .delete(t.api(`/teams/${second.id}/members/${racer.name}`))
        .set(as(owner))
        .expect(204);
      await join(first.id, racer);
      const [left, joined] = await Promise.all([
        t.http.delete(t.api(`/teams/${first.id}/members/${racer.name}`)).set(as(owner)),
        t.http.put(t.api(`/teams/${second.id}/members/${racer.name}`)).set(as(owner)),
      ]);
      expect([left.status, joined.status]).toEqual([204, 204]);
      expect(await t.dataSource.getRepository(TeamUserEntity).findBy({ orgId: org.id, uid: racer.user.id })).toEqual([
        expect.objectContaining({ teamId: second.id }),
      ]);
      expect(await rows.orgUser(org.id, racer.user.id)).toBe(1);
    }
  });
});
