import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { RepositoryPolicy } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { UserEntity } from '../users/user.entity';
import { OrganizationsService } from '../users/organizations.service';
import { UsersService } from '../users/users.service';
import { TeamsModule } from './teams.module';
import { TeamsService } from './teams.service';

// Teams and who they let reach what, on the real stores and migrations (SQLite :memory:): the team rules of
// Forgejo, and the permission the access policy reads from the rows they write. Routes and statuses are e2e's.

const PAGE = { page: 1, limit: 50, offset: 0 };

describe('TeamsService and the access they grant (SQLite :memory:)', () => {
  let harness: ServiceHarness;
  let teams: TeamsService;
  let policy: RepositoryPolicy;
  let owner: AuthContext;
  let org: UserEntity;
  let users: UsersService;
  const repos: Record<string, RepositoryEntity> = {};

  const signedIn = (user: UserEntity) => new AuthContext(user, 'password', null);
  const user = (name: string) => users.create({ username: name, email: `${name}@example.com`, password: 'a-long-password', mustChangePassword: false });
  const repository = async (name: string) => {
    await harness.get(RepositoryCreation).createInOrganization(owner, org, { name, private: true });
    return (await harness.get(RepositoryDirectory).byOwnerAndName(org.id, name))!;
  };
  const permission = (viewer: UserEntity, repo: RepositoryEntity) => policy.permission(signedIn(viewer), repo, org);

  beforeAll(async () => {
    harness = await serviceHarness({ imports: [TeamsModule] });
    teams = harness.get(TeamsService);
    policy = harness.get(RepositoryPolicy);
    users = harness.get(UsersService);
    const olga = await user('olga');
    owner = signedIn(olga);
    org = await harness.get(OrganizationsService).createForUser('olga', { username: 'acme' });
    repos.app = await repository('app');
    repos.lib = await repository('lib');
  });
  afterAll(() => harness?.close());

  it('gives a team with a units map each unit its mode, and the lowest of them as its permission', async () => {
    const rita = await user('rita');
    const { team } = await teams.create(owner, 'acme', { name: 'triage', permission: 'write', units_map: { 'repo.code': 'read', 'repo.issues': 'write' } });
    expect(team.authorize).toBe(1); // read: below admin, a units map's lowest mode is the team's permission
    await teams.addMember(owner, String(team.id), 'rita');
    await teams.addRepository(owner, String(team.id), 'acme', 'app');

    const onApp = await permission(rita, repos.app);
    expect([onApp.canRead('repo.code'), onApp.canWrite('repo.code'), onApp.canWrite('repo.issues'), onApp.canRead('repo.wiki')]).toEqual([
      true,
      false,
      true,
      false,
    ]);
    expect(onApp.toWire()).toEqual({ admin: false, push: false, pull: true });
    // A private repository the team is not linked to stays out of reach.
    expect((await permission(rita, repos.lib)).hasAccess).toBe(false);
  });

  it('reaches every repository, present and future, with includes_all_repositories', async () => {
    const wes = await user('wes');
    const { team } = await teams.create(owner, 'acme', {
      name: 'writers',
      permission: 'write',
      units: ['repo.code', 'repo.pulls'],
      includes_all_repositories: true,
    });
    await teams.addMember(owner, String(team.id), 'wes');
    const later = await repository('later');
    for (const repo of [repos.app, repos.lib, later]) {
      const granted = await permission(wes, repo);
      expect([repo.name, granted.canWrite('repo.code'), granted.canWrite('repo.pulls'), granted.canRead('repo.issues')]).toEqual([
        repo.name,
        true,
        true,
        false,
      ]);
    }
    expect((await teams.repositories(owner, String(team.id), PAGE)).items.map((repo) => repo.name).sort()).toEqual(['app', 'later', 'lib']);
  });

  it('takes the access away with the membership', async () => {
    const max = await user('max');
    const { team } = await teams.create(owner, 'acme', { name: 'temps', permission: 'read', units: ['repo.code'] });
    await teams.addMember(owner, String(team.id), 'max');
    await teams.addRepository(owner, String(team.id), 'acme', 'lib');
    expect((await permission(max, repos.lib)).canRead('repo.code')).toBe(true);
    await teams.removeMember(owner, String(team.id), 'max');
    expect((await permission(max, repos.lib)).hasAccess).toBe(false);
    await teams.addMember(owner, String(team.id), 'max');
    await teams.removeRepository(owner, String(team.id), 'acme', 'lib');
    expect((await permission(max, repos.lib)).hasAccess).toBe(false);
  });

  it('keeps the Owners team: not deleted, never without a member, owner of every repository', async () => {
    const [owners] = (await teams.listOfOrganization(owner, 'acme', PAGE)).items.filter((team) => team.name === 'Owners');
    expect(owners).toBeDefined();
    await expect(teams.delete(owner, String(owners.id))).rejects.toEqual(expect.objectContaining({ status: 422 }));
    await expect(teams.removeMember(owner, String(owners.id), 'olga')).rejects.toEqual(expect.objectContaining({ status: 422 }));
    const olga = await permission(owner.user!, repos.lib);
    expect([olga.isOwner, olga.toWire()]).toEqual([true, { admin: true, push: true, pull: true }]);
  });

  it('refuses a reserved or taken name and units that grant nothing or do not exist (422), creating nothing', async () => {
    await teams.create(owner, 'acme', { name: 'Docs', permission: 'read', units: ['repo.wiki'] });
    const refused = [
      { name: 'new', permission: 'read', units: ['repo.code'] },
      { name: 'DOCS', permission: 'read', units: ['repo.code'] },
      { name: 'empty', permission: 'read', units_map: { 'repo.code': 'none' } },
      { name: 'unknown', permission: 'read', units: ['repo.nothing'] },
      { name: 'badmode', permission: 'read', units_map: { 'repo.code': 'owner' } },
    ];
    for (const option of refused) await expect(teams.create(owner, 'acme', option)).rejects.toEqual(expect.objectContaining({ status: 422 }));
    const names = (await teams.listOfOrganization(owner, 'acme', PAGE)).items.map((team) => team.name);
    expect(names.filter((name) => ['new', 'DOCS', 'empty', 'unknown', 'badmode'].includes(name))).toEqual([]);
  });

  it('lets only owners manage teams: a member may not create one, nor change its own, nor open another', async () => {
    const nia = await user('nia');
    const { team } = await teams.create(owner, 'acme', { name: 'helpers', permission: 'write', units: ['repo.code'] });
    const { team: other } = await teams.create(owner, 'acme', { name: 'others', permission: 'read', units: ['repo.code'] });
    await teams.addMember(owner, String(team.id), 'nia');
    const asNia = signedIn(nia);
    await expect(teams.create(asNia, 'acme', { name: 'mine', permission: 'admin' })).rejects.toEqual(expect.objectContaining({ status: 403 }));
    // Linking a repository also needs admin access to that repository.
    await expect(teams.addRepository(asNia, String(team.id), 'acme', 'lib')).rejects.toEqual(
      expect.objectContaining({ status: 403, message: 'Must have admin-level access to the repository' }),
    );
    await expect(teams.edit(asNia, String(team.id), { permission: 'admin' })).rejects.toEqual(expect.objectContaining({ status: 404 }));
    await expect(teams.members(asNia, String(other.id), PAGE)).rejects.toEqual(expect.objectContaining({ status: 403 }));
    expect((await teams.members(asNia, String(team.id), PAGE)).items.map((member) => member.name)).toEqual(['nia']);
    expect((await permission(nia, repos.lib)).hasAccess).toBe(false);
    // Anyone outside the organisation does not learn that the team exists.
    await expect(teams.members(signedIn(await user('stranger')), String(team.id), PAGE)).rejects.toEqual(expect.objectContaining({ status: 404 }));
  });
});
