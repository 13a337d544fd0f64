import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import { AccessMode, parseAccessMode } from '../access/access-mode';
import { OrganizationPolicy, TeamStanding } from '../access/organization-policy';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { assertAdministersRepository, assertMayChangeTeamAccess } from '../access/repository-rules';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { InvalidInputError, MethodNotAllowedError, NotFoundError } from '../common/errors';
import { CAPS, tooMany } from '../common/caps';
import { Claims } from '../claims/claims';
import { Page, PageQuery } from '../common/paging';
import { Transactions } from '../database/transactions';
import { LifecycleEvents } from '../events/lifecycle-events';
import type { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryDirectory } from '../repos/repository-directory';
import { OWNER_ACCESS_MODE, TeamEntity } from '../users/organization.entities';
import { LAST_OWNER, OrganizationsService } from '../users/organizations.service';
import { OrganizationMemberships } from '../users/organization-memberships';
import type { UserEntity } from '../users/user.entity';
import { UserListVisibility } from '../users/user-visibility.condition';
import { UserVisibility } from '../users/user-visibility';
import { UserAccounts } from '../users/user-accounts';
import type { CreateTeamOption, EditTeamOption } from './create-team.option';
import { TeamStore } from './team.store';
import { assertUsableTeamName, hasUnitsMap, teamExists, teamUnits } from './team-rules';

const NOT_REPO_ADMIN = 'Must have admin-level access to the repository';
const NOT_AN_ORGANIZATION = 'repo is not owned by an organization';

/** A team with the organisation it belongs to. */
export interface TeamOfOrganization {
  team: TeamEntity;
  org: UserEntity;
}

/**
 * Teams of organisations: their fields, members and repositories. Who may see or change them is the
 * organisation policy's answer; this service applies Forgejo's rules on what a change does.
 */
@Injectable()
export class TeamsService {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly memberships: OrganizationMemberships,
    private readonly teams: TeamStore,
    private readonly repositoryDirectory: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly visibility: UserVisibility,
    private readonly listVisibility: UserListVisibility,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly repositoryPolicy: RepositoryPolicy,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
    private readonly claims: Claims,
    private readonly lifecycle: LifecycleEvents,
  ) {}

  /** GET /orgs/{org}/teams: members and site admins (else 403). */
  async listOfOrganization(viewer: AuthContext, orgName: string, page: PageQuery): Promise<Page<TeamEntity>> {
    const org = await this.organizations.visibleByName(viewer, orgName);
    await this.organizationPolicy.assertMember(viewer, org.id);
    return this.teams.listOfOrganization(org.id, page);
  }

  /** GET /orgs/{org}/teams/search: members search their own teams, site admins every team. */
  async search(viewer: AuthContext, orgName: string, keyword: string, includeDescription: boolean, page: PageQuery): Promise<Page<TeamEntity>> {
    const org = await this.organizations.visibleByName(viewer, orgName);
    await this.organizationPolicy.assertMember(viewer, org.id);
    return this.teams.search({ orgId: org.id, keyword, includeDescription, memberId: viewer.isAdmin ? null : viewer.user!.id }, page);
  }

  /** GET /user/teams: every team of the caller, with its organisation. */
  async listOfCaller(viewer: AuthContext, page: PageQuery): Promise<Page<TeamOfOrganization>> {
    requireSignedIn(viewer);
    const found = await this.teams.listOfMember(viewer.user.id, page);
    const orgs = new Map((await this.users.byIds([...new Set(found.items.map((team) => team.orgId))])).map((org) => [org.id, org]));
    return { items: found.items.map((team) => ({ team, org: orgs.get(team.orgId)! })), total: found.total };
  }

  /** POST /orgs/{org}/teams: owners and site admins; a name taken in the organisation → 422. */
  async create(viewer: AuthContext, orgName: string, option: CreateTeamOption): Promise<TeamOfOrganization> {
    const org = await this.organizations.visibleByName(viewer, orgName);
    await this.organizationPolicy.assertManagesTeams(viewer, org.id);
    assertUsableTeamName(option.name);
    const requested = option.permission === undefined || option.permission === '' ? AccessMode.None : parseAccessMode(option.permission)!;
    const { authorize, units } = teamUnits(requested, option, null);
    const team = await this.transactions.run(async (tx) => {
      await this.claims.serializeWriters(tx, `teams:${org.id}`);
      if ((await this.teams.countOfOrganization(tx, org.id)) >= CAPS.teamsPerOrganization) {
        throw new InvalidInputError(tooMany('teams', 'an organization', CAPS.teamsPerOrganization));
      }
      const created = await this.teams.insert(tx, {
        orgId: org.id,
        name: option.name,
        lowerName: option.name.toLowerCase(),
        description: option.description ?? '',
        authorize,
        includesAllRepositories: option.includes_all_repositories ?? false,
        canCreateOrgRepo: option.can_create_org_repo ?? false,
        numMembers: 0,
        units,
      });
      if (created)
        await this.audit.record(tx, {
          action: 'team.create',
          target: teamTarget(created),
          detail: { organization: org.name, permission: option.permission || 'none' },
        });
      return created;
    });
    if (!team) throw teamExists(org.id, option.name);
    return { team, org };
  }

  /** GET /teams/{id}. */
  async get(viewer: AuthContext, teamId: string): Promise<TeamOfOrganization> {
    const { team, org } = await this.open(viewer, teamId);
    return { team, org };
  }

  /**
   * PATCH /teams/{id}: owners and site admins. As Forgejo, absent fields keep their values, the repository
   * scope changes only together with a permission, and the Owners team keeps its name, owner permission,
   * every repository and the right to create them: only its description changes.
   */
  async edit(viewer: AuthContext, teamId: string, option: EditTeamOption): Promise<TeamOfOrganization> {
    const { team, org, standing } = await this.open(viewer, teamId);
    this.organizationPolicy.assertManages(standing);
    const owners = team.authorize === OWNER_ACCESS_MODE;
    const changed: TeamEntity = { ...team };
    if (option.description !== undefined && option.description !== null) changed.description = option.description;
    if (!owners) {
      if (option.can_create_org_repo !== undefined && option.can_create_org_repo !== null) changed.canCreateOrgRepo = option.can_create_org_repo;
      if (option.name) {
        assertUsableTeamName(option.name);
        changed.name = option.name;
      }
      let requested = team.authorize as AccessMode;
      if (option.permission) {
        requested = parseAccessMode(option.permission)!;
        if (option.includes_all_repositories !== undefined && option.includes_all_repositories !== null)
          changed.includesAllRepositories = option.includes_all_repositories;
      }
      const given = option.permission !== undefined && option.permission !== '';
      const unitsGiven = hasUnitsMap(option.units_map) || (Array.isArray(option.units) && option.units.length > 0);
      if (given || unitsGiven) Object.assign(changed, teamUnits(requested, option, team));
    }
    const saved = await this.transactions.run(async (tx) => {
      if (!(await this.teams.update(tx, changed))) return false;
      if (team.includesAllRepositories && !changed.includesAllRepositories) await this.teams.linkAllRepositories(tx, changed);
      const fields = (Object.keys(changed) as (keyof TeamEntity)[]).filter((key) => changed[key] !== team[key]);
      await this.audit.record(tx, { action: 'team.edit', target: teamTarget(changed), detail: { organization: org.name, fields } });
      return true;
    });
    if (!saved) throw teamExists(org.id, changed.name);
    return { team: changed, org };
  }

  /** DELETE /teams/{id}: owners and site admins; the Owners team stays (422). */
  async delete(viewer: AuthContext, teamId: string): Promise<void> {
    const { team, standing } = await this.open(viewer, teamId);
    this.organizationPolicy.assertManages(standing);
    if (team.authorize === OWNER_ACCESS_MODE) throw new InvalidInputError('the Owners team of an organization cannot be deleted');
    await this.transactions.run(async (tx) => {
      await this.lifecycle.emit('team.deleted', { tx, team });
      await this.memberships.removeAllTeamMembers(tx, team);
      await this.teams.delete(tx, team);
      await this.audit.record(tx, { action: 'team.delete', target: teamTarget(team), detail: { organization_id: team.orgId } });
    });
  }

  /** GET /teams/{id}/members. */
  async members(viewer: AuthContext, teamId: string, page: PageQuery): Promise<Page<UserEntity>> {
    const { team, standing } = await this.open(viewer, teamId);
    if (!standing.orgMember) throw new NotFoundError();
    return this.teams.listMembers(team.id, page);
  }

  /** GET /teams/{id}/members/{username}: the user when in the team, else 404. */
  async member(viewer: AuthContext, teamId: string, username: string): Promise<UserEntity> {
    const { team } = await this.open(viewer, teamId);
    const user = await this.users.byName(username);
    if (!user || !(await this.teams.isMember(team.id, user.id))) throw new NotFoundError();
    return user;
  }

  /** PUT /teams/{id}/members/{username}: owners and site admins; idempotent; the user joins the organisation. */
  async addMember(viewer: AuthContext, teamId: string, username: string): Promise<void> {
    const { team, standing } = await this.open(viewer, teamId);
    this.organizationPolicy.assertManages(standing);
    const user = await this.individual(viewer, username);
    await this.transactions.run(async (tx) => {
      // Adding a member already there changes nothing, and records nothing.
      if (await this.memberships.addTeamMember(tx, team, user.id))
        await this.audit.record(tx, { action: 'team.member_add', target: teamTarget(team), detail: { member: user.name } });
    });
  }

  /** DELETE /teams/{id}/members/{username}: not being a member is a no-op; the Owners team keeps one member. */
  async removeMember(viewer: AuthContext, teamId: string, username: string): Promise<void> {
    const { team, standing } = await this.open(viewer, teamId);
    this.organizationPolicy.assertManages(standing);
    const user = await this.individual(viewer, username);
    await this.transactions.run(async (tx) => {
      const result = await this.memberships.removeTeamMember(tx, team, user.id);
      if (result === 'last-owner') throw new InvalidInputError(LAST_OWNER);
      if (result !== 'not-a-member') await this.audit.record(tx, { action: 'team.member_remove', target: teamTarget(team), detail: { member: user.name } });
    });
  }

  /** GET /teams/{id}/repos. */
  async repositories(viewer: AuthContext, teamId: string, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const { team } = await this.open(viewer, teamId);
    return this.teams.listRepositories(team, page);
  }

  /** GET /teams/{id}/repos/{org}/{repo}: the repository when the team reaches it, else 404. */
  async repository(viewer: AuthContext, teamId: string, orgName: string, repoName: string): Promise<RepositoryEntity> {
    const { team, repo } = await this.teamAndRepository(viewer, teamId, orgName, repoName);
    if (!(await this.teams.reaches(team, repo))) throw new NotFoundError();
    return repo;
  }

  /** PUT /teams/{id}/repos/{org}/{repo}: a member of the team who administers the repository; idempotent. */
  async addRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string): Promise<void> {
    const { team, org, repo } = await this.teamAndRepository(viewer, teamId, orgName, repoName);
    await assertAdministersRepository(this.repositoryPolicy, viewer, { repo, owner: org }, NOT_REPO_ADMIN);
    if (!team.includesAllRepositories) await this.linkRecorded(team, repo, true);
  }

  /** DELETE /teams/{id}/repos/{org}/{repo}: as PUT; a team that includes every repository keeps it. */
  async removeRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string): Promise<void> {
    const { team, org, repo } = await this.teamAndRepository(viewer, teamId, orgName, repoName);
    await assertAdministersRepository(this.repositoryPolicy, viewer, { repo, owner: org }, NOT_REPO_ADMIN);
    await this.linkRecorded(team, repo, false);
  }

  /** GET /repos/{o}/{r}/teams: the teams that reach the repository (405 for a user's repository). */
  async teamsOfRepository(target: RepositoryTarget): Promise<TeamEntity[]> {
    requireSignedIn(target.viewer);
    if (!target.owner.isOrganization) throw new MethodNotAllowedError(NOT_AN_ORGANIZATION);
    return this.teams.teamsOfRepository(target.repo);
  }

  /** GET /repos/{o}/{r}/teams/{team}: the team when it reaches the repository, else 404. */
  async teamOfRepository(target: RepositoryTarget, teamName: string): Promise<TeamEntity> {
    requireSignedIn(target.viewer);
    if (!target.owner.isOrganization) throw new MethodNotAllowedError(NOT_AN_ORGANIZATION);
    const team = await this.teamByName(target, teamName);
    if (!(await this.teams.reaches(team, target.repo))) throw new NotFoundError();
    return team;
  }

  /**
   * PUT and DELETE /repos/{o}/{r}/teams/{team}: repository admins (403, the route's rule), and only owners unless the
   * organisation lets repository admins change team access (403); adding a team already there, or removing
   * one that is not, is 422 as Forgejo.
   */
  async changeRepositoryTeam(target: RepositoryTarget, teamName: string, add: boolean): Promise<void> {
    if (!target.owner.isOrganization) throw new MethodNotAllowedError(NOT_AN_ORGANIZATION);
    await assertMayChangeTeamAccess(target);
    const team = await this.teamByName(target, teamName);
    const reaches = await this.teams.reaches(team, target.repo);
    if (add) {
      if (reaches) throw new InvalidInputError(`team '${team.name}' is already added to repo`);
      await this.linkRecorded(team, target.repo, true);
    } else {
      if (!reaches) throw new InvalidInputError(`team '${team.name}' was not added to repo`);
      if (!team.includesAllRepositories) await this.linkRecorded(team, target.repo, false);
    }
  }

  /** Links or unlinks a repository, with its audit event when something changed. */
  private async linkRecorded(team: TeamEntity, repo: RepositoryEntity, add: boolean): Promise<void> {
    await this.transactions.run(async (tx) => {
      const changed = add ? await this.teams.link(tx, team, repo.id) : await this.teams.unlink(tx, team.id, repo.id);
      if (changed) {
        await this.audit.record(tx, {
          action: add ? 'team.repository_add' : 'team.repository_remove',
          target: teamTarget(team),
          detail: { repository_id: repo.id, repository: repo.name },
        });
      }
    });
  }

  private async teamByName(target: RepositoryTarget, name: string): Promise<TeamEntity> {
    const team = await this.teams.findByName(target.owner.id, name);
    if (!team) throw new NotFoundError(`team does not exist [org_id: ${target.owner.id}, team_id: 0, name: ${name}]`);
    return team;
  }

  /**
   * The team of a /teams/{id} route: unknown → 404, a public-only token on a non-public organisation → 403,
   * then the organisation policy (sign-in 401, team membership 403/404).
   */
  private async open(viewer: AuthContext, teamId: string): Promise<TeamOfOrganization & { standing: TeamStanding }> {
    const team = /^\d+$/.test(teamId) && Number.isSafeInteger(Number(teamId)) ? await this.teams.findById(Number(teamId)) : null;
    const org = team ? await this.users.byId(team.orgId) : null;
    if (!team || !org) throw new NotFoundError();
    this.visibility.assertTokenMaySee(viewer, org);
    const standing = await this.organizationPolicy.openTeam(viewer, team);
    return { team, org, standing };
  }

  /** A repository of the team's organisation named in the path (404 otherwise). */
  private async teamAndRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string) {
    const { team, org } = await this.open(viewer, teamId);
    const repo = org.lowerName === orgName.toLowerCase() ? await this.repositoryDirectory.byOwnerAndName(org.id, repoName) : null;
    if (!repo) throw new NotFoundError();
    return { team, org, repo };
  }

  /** An individual user the caller may see (404 otherwise). */
  private async individual(viewer: AuthContext, username: string): Promise<UserEntity> {
    const user = await this.users.byName(username);
    if (!user || user.isOrganization || !(await this.listVisibility.isVisible(viewer, user.id))) throw new NotFoundError();
    return user;
  }
}

function teamTarget(team: TeamEntity) {
  return { type: 'team' as const, id: team.id, name: team.name };
}
