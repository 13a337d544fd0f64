import { AuditService } from '../audit/audit.service';
import { Transactions } from '../database/transactions';
import { Injectable } from '@nestjs/common';
import { AccessMode, isRepositoryUnit, parseAccessMode, REPOSITORY_UNITS, UnitModes } from '../access/access-mode';
import type { AuthContext } from '../auth/auth-context';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import type { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryStore } from '../repos/repository.store';
import type { TeamEntity } from '../users/organization.entities';
import { OrganizationsService } from '../users/organizations.service';
import type { CreateTeamOption } from './create-team.option';
import { TeamStore } from './team.store';

/** Teams beyond Owners: creation with Forgejo's permission and units, and the repositories a team reaches. */
@Injectable()
export class TeamsService {
  constructor(
    private readonly organizations: OrganizationsService,
    private readonly teams: TeamStore,
    private readonly repositories: RepositoryStore,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /** POST /orgs/{org}/teams: organisation owners and site admins; a name taken in the organisation → 422. */
  async create(viewer: AuthContext, orgName: string, option: CreateTeamOption): Promise<TeamEntity> {
    const org = await this.organizations.ownedByName(viewer, orgName);
    const requested = option.permission === undefined ? AccessMode.None : parseAccessMode(option.permission);
    if (requested === undefined) throw new InvalidInputError('[Permission]: In');
    const units = unitsOf(option, requested);
    // As Forgejo: below admin the team's mode is the lowest mode of its units.
    const modes = Object.values(units).filter((mode) => mode > AccessMode.None);
    const authorize = requested >= AccessMode.Admin ? requested : modes.length > 0 ? Math.min(...modes) : AccessMode.None;
    if (authorize < AccessMode.Admin && modes.length === 0) throw new InvalidInputError('units permission should not be empty');
    const team = await this.transactions.run(async (tx) => {
      const created = await this.teams.insert(tx, {
      orgId: org.id,
      name: option.name,
      lowerName: option.name.toLowerCase(),
      description: option.description ?? '',
      authorize,
      includesAllRepositories: option.includes_all_repositories ?? false,
      canCreateOrgRepo: option.can_create_org_repo ?? false,
      numMembers: 0,
      units: authorize >= AccessMode.Admin ? '' : JSON.stringify(units),
      });
      if (created) {
        await this.audit.record(tx, {
          action: 'team.create',
          target: { type: 'team', id: created.id, name: created.name },
          detail: { organization: org.name, permission: option.permission ?? 'none', units: Object.keys(units) },
        });
      }
      return created;
    });
    if (!team) throw new InvalidInputError('team already exists');
    return team;
  }

  async repositoriesOf(viewer: AuthContext, teamId: string, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const team = await this.organizations.teamForOwner(viewer, teamId);
    return this.teams.listRepositories(team.id, page);
  }

  /** PUT /teams/{id}/repos/{org}/{repo}: a repository of the team's organisation (else 404). */
  async addRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string): Promise<void> {
    const { team, repo } = await this.teamAndRepository(viewer, teamId, orgName, repoName);
    await this.transactions.run(async (tx) => {
      if (await this.teams.link(tx, team, repo.id)) {
        await this.audit.record(tx, { action: 'team.repository_add', target: { type: 'team', id: team.id, name: team.name }, detail: { repository: `${orgName}/${repo.name}` } });
      }
    });
  }

  async removeRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string): Promise<void> {
    const { team, repo } = await this.teamAndRepository(viewer, teamId, orgName, repoName);
    await this.transactions.run(async (tx) => {
      if (await this.teams.unlink(tx, team.id, repo.id)) {
        await this.audit.record(tx, { action: 'team.repository_remove', target: { type: 'team', id: team.id, name: team.name }, detail: { repository: `${orgName}/${repo.name}` } });
      }
    });
  }

  private async teamAndRepository(viewer: AuthContext, teamId: string, orgName: string, repoName: string) {
    const team = await this.organizations.teamForOwner(viewer, teamId);
    const org = await this.organizations.visibleByName(viewer, orgName);
    const repo = org.id === team.orgId ? await this.repositories.findByOwnerAndName(org.id, repoName) : null;
    if (!repo) throw new NotFoundError();
    return { team, repo };
  }
}

/** The team's units from `units_map` (mode per unit) or `units` (each at `permission`); unknown names → 422. */
function unitsOf(option: CreateTeamOption, permission: AccessMode): UnitModes {
  const units: UnitModes = {};
  if (option.units_map !== undefined && option.units_map !== null && typeof option.units_map === 'object' && Object.keys(option.units_map).length > 0) {
    for (const [name, modeName] of Object.entries(option.units_map as Record<string, unknown>)) {
      const mode = typeof modeName === 'string' ? parseAccessMode(modeName) : undefined;
      if (!isRepositoryUnit(name) || mode === undefined || mode > AccessMode.Admin) throw new InvalidInputError(`invalid unit or permission: ${name}`);
      units[name] = mode;
    }
    return units;
  }
  if (Array.isArray(option.units)) {
    for (const name of option.units) {
      if (typeof name !== 'string' || !isRepositoryUnit(name)) throw new InvalidInputError(`invalid unit: ${String(name)}`);
      units[name] = permission;
    }
  }
  return permission >= AccessMode.Admin ? Object.fromEntries(REPOSITORY_UNITS.map((unit) => [unit, permission])) : units;
}
