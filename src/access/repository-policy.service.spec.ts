import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { AuthContext } from '../auth/auth-context';
import { ScopeSet } from '../auth/scopes';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { TeamsModule } from '../teams/teams.module';
import { TeamsService } from '../teams/teams.service';
import { OrganizationsService } from '../users/organizations.service';
import type { UserEntity } from '../users/user.entity';
import { UsersService } from '../users/users.service';
import { RepositoryPolicy, UNIT_NOT_READABLE } from './repository-policy';

// The access policy's decisions read from real rows (SQLite :memory:): owner visibility, restricted accounts,
// organisation membership through a team, site admins and public-only tokens. The pure decision table is
// access-policy.spec.ts; the README's table over HTTP is test/e2e/access-matrix.e2e-spec.ts.

describe('RepositoryPolicy on stored users, organisations and teams (SQLite :memory:)', () => {
  let harness: ServiceHarness;
  let policy: RepositoryPolicy;
  const people: Record<string, UserEntity> = {};
  const orgs: Record<string, UserEntity> = {};
  const repos: Record<string, RepositoryEntity> = {};

  const as = (user: UserEntity | null, scopes: string[] | null = null) =>
    user ? new AuthContext(user, scopes ? 'token' : 'password', scopes ? ScopeSet.parse(scopes) : null) : AuthContext.anonymous();
  const wire = async (viewer: AuthContext, repo: string) => (await policy.permission(viewer, repos[repo], orgs[repo.split('/')[0]])).toWire();
  const none = { admin: false, push: false, pull: false };
  const read = { admin: false, push: false, pull: true };
  const all = { admin: true, push: true, pull: true };

  beforeAll(async () => {
    harness = await serviceHarness({ imports: [TeamsModule] });
    policy = harness.get(RepositoryPolicy);
    const users = harness.get(UsersService);
    const user = (name: string, extra: { restricted?: boolean; isAdmin?: boolean } = {}) =>
      users.create({ username: name, email: `${name}@example.com`, password: 'a-long-password', ...extra });
    for (const name of ['owner', 'member', 'stranger']) people[name] = await user(name);
    people.restricted = await user('restricted', { restricted: true });
    people.admin = await user('sitestaff', { isAdmin: true });
    const organizations = harness.get(OrganizationsService);
    const owner = as(people.owner);
    for (const [name, visibility] of [
      ['open', 'public'],
      ['limited', 'limited'],
      ['closed', 'private'],
    ] as const) {
      orgs[name] = await organizations.createForUser('owner', { username: name, visibility });
      for (const [repoName, isPrivate] of [
        ['public', false],
        ['private', true],
      ] as const) {
        const created = await harness.get(RepositoryCreation).createInOrganization(owner, orgs[name], { name: repoName, private: isPrivate });
        repos[`${name}/${repoName}`] = (await harness.get(RepositoryDirectory).byId(created.id))!;
      }
    }
    // `member` is in a team of each organisation that reaches no repository, with the issues unit only.
    const teams = harness.get(TeamsService);
    for (const name of Object.keys(orgs)) {
      const { team } = await teams.create(owner, name, { name: 'lurkers', permission: 'read', units: ['repo.issues'] });
      await teams.addMember(owner, String(team.id), 'member');
    }
  });
  afterAll(() => harness?.close());

  it('lets anonymous callers read only public repositories of public owners', async () => {
    expect(await Promise.all(['open/public', 'open/private', 'limited/public', 'closed/public'].map((repo) => wire(as(null), repo)))).toEqual([
      read,
      none,
      none,
      none,
    ]);
  });

  it('shows a limited owner to any signed-in account but a restricted one, and a private owner to members only', async () => {
    expect(await wire(as(people.stranger), 'limited/public')).toEqual(read);
    expect(await wire(as(people.restricted), 'limited/public')).toEqual(none);
    expect(await wire(as(people.stranger), 'closed/public')).toEqual(none);
    // A member whose team reaches no repository still reads the public ones, and only those.
    expect(await wire(as(people.member), 'closed/public')).toEqual(read);
    expect(await wire(as(people.member), 'closed/private')).toEqual(none);
  });

  it('gives the Owners team and site admins everything, a restricted account nothing it was not given', async () => {
    for (const repo of Object.keys(repos)) {
      expect([repo, await wire(as(people.owner), repo), await wire(as(people.admin), repo)]).toEqual([repo, all, all]);
      expect([repo, await wire(as(people.restricted), repo)]).toEqual([repo, none]);
    }
  });

  it('opens a repository for a route: 404 to who may not see it, 403 for a public-only token or an unreadable unit', async () => {
    await expect(policy.open(as(people.stranger), repos['closed/private'], orgs.closed)).rejects.toEqual(expect.objectContaining({ status: 404 }));
    await expect(policy.open(as(people.owner, ['public-only', 'read:repository']), repos['open/private'], orgs.open)).rejects.toEqual(
      expect.objectContaining({ status: 403, message: 'token scope is limited to public repos' }),
    );
    // The same token may open a public repository of a public owner.
    await expect(policy.open(as(people.owner, ['public-only', 'read:repository']), repos['open/public'], orgs.open)).resolves.toBeDefined();
    // A site admin's public-only token loses the admin's reach: a private owner it is not a member of is unseen.
    await expect(policy.open(as(people.admin, ['public-only', 'read:repository']), repos['closed/public'], orgs.closed)).rejects.toEqual(
      expect.objectContaining({ status: 404 }),
    );
    await expect(policy.open(as(people.admin), repos['closed/public'], orgs.closed)).resolves.toBeDefined();
    await expect(policy.open(as(people.member), repos['closed/public'], orgs.closed, 'repo.code')).resolves.toBeDefined();
    const teamWithoutCode = await harness.get(TeamsService).create(as(people.owner), 'closed', { name: 'triage', permission: 'write', units: ['repo.issues'] });
    await harness.get(TeamsService).addMember(as(people.owner), String(teamWithoutCode.team.id), 'stranger');
    await harness.get(TeamsService).addRepository(as(people.owner), String(teamWithoutCode.team.id), 'closed', 'private');
    await expect(policy.open(as(people.stranger), repos['closed/private'], orgs.closed, 'repo.code')).rejects.toEqual(
      expect.objectContaining({ status: 403, message: UNIT_NOT_READABLE }),
    );
    const target = await policy.open(as(people.stranger), repos['closed/private'], orgs.closed, 'repo.issues');
    expect(await target.canWrite('repo.issues')).toBe(true);
    expect(await target.canWrite('repo.code')).toBe(false);
  });
});
