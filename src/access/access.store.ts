import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { DataSource, In } from 'typeorm';
import { CollaborationEntity } from '../collaborators/collaboration.entity';
import { DeployKeyEntity } from '../deploy-keys/deploy-key.entity';
import { BoundStatements, RowSet, valueOf } from '../database/bound-statements';
import { IssueEntity } from '../issues/issue.entity';
import { PullRequestEntity } from '../pulls/pull-request.entity';
import { RepositoryEntity } from '../repos/repository.entity';
import { OrgUserEntity, TeamEntity, TeamRepoEntity, TeamUserEntity } from '../users/organization.entities';
import { UserEntity } from '../users/user.entity';
import { AccessMode, isRepositoryUnit, REPOSITORY_UNITS, UnitModes } from './access-mode';
import { AccessGrants, TeamGrant } from './access-policy';

/** The caller's standing across all repositories, for lists: read once per list request. */
export interface ViewerStanding {
  /** Organisations where a team of the caller includes every repository: the caller sees all of them. */
  allRepositoryOrgIds: number[];
  /** Organisations the caller belongs to. */
  memberOrgIds: number[];
  /** Whether the caller has any collaboration or team-repository link (else lists need no grant reads). */
  hasRepositoryGrants: boolean;
  /** Whether the caller collaborates on any repository. */
  hasCollaborations: boolean;
}

/** The caller's place in one organisation: membership and the teams they are in there. */
export interface OrganizationStanding {
  isMember: boolean;
  teams: { id: number; mode: AccessMode; canCreateOrgRepo: boolean; includesAllRepositories: boolean; units: Readonly<UnitModes> }[];
}

/**
 * The caller's grants on a repository read along with it, in the statement that looks the repository up
 * (alias `r`, its owner by `r.owner_id`): a request on `{owner}/{repo}` then needs no statement of its own for
 * them. `columns` go into the select list, `joins` after the repository's; each `?` in them is the caller's id,
 * `columns`' before `joins`'. The same conditions and indexes as AccessStore.grants: the collaboration
 * (`IDX_collaboration_repo_id_user_id`) and the membership (`IDX_org_user_uid_org_id`) as one value each, the
 * caller's teams in the owning organisation (`IDX_team_user_uid_org_id`, the team by primary key, its link by
 * `IDX_team_repo_team_id_repo_id`) one row each: the repository's row repeated, with the team's mode and units
 * where the team reaches the repository, null where it does not. Read the result with `grantsInRows`.
 */
export function grantsAlongsideRepository(dataSource: DataSource): { columns: string; joins: string } {
  const table = (entity: Function) => dataSource.driver.escape(dataSource.getMetadata(entity).tableName);
  return {
    columns:
      `(SELECT c.mode FROM ${table(CollaborationEntity)} c WHERE c.repo_id = r.id AND c.user_id = ?) AS grant_collaboration, ` +
      `EXISTS (SELECT 1 FROM ${table(OrgUserEntity)} ou WHERE ou.uid = ? AND ou.org_id = r.owner_id) AS grant_member, ` +
      't.authorize AS grant_team_mode, t.units AS grant_team_units',
    joins:
      `LEFT JOIN ${table(TeamUserEntity)} tu ON tu.uid = ? AND tu.org_id = r.owner_id ` +
      `LEFT JOIN ${table(TeamEntity)} t ON t.id = tu.team_id AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM ${table(TeamRepoEntity)} tr WHERE tr.team_id = t.id AND tr.repo_id = r.id))`,
  };
}

/** The grants a statement with `grantsAlongsideRepository` read (its rows are one repository's). */
export function grantsInRows(set: RowSet): AccessGrants {
  const collaboration = valueOf(set, 0, 'grant_collaboration');
  const grants: AccessGrants = {
    orgMember: Number(valueOf(set, 0, 'grant_member')) === 1,
    teams: [],
    collaboration: collaboration === null || collaboration === undefined ? null : (Number(collaboration) as AccessMode),
  };
  set.rows.forEach((_, index) => {
    const mode = valueOf(set, index, 'grant_team_mode');
    if (mode !== null && mode !== undefined) grants.teams.push(teamGrant(Number(mode) as AccessMode, String(valueOf(set, index, 'grant_team_units') ?? '')));
  });
  // As AccessStore.grants: a team of the caller reaching the repository makes them a member.
  if (grants.teams.length > 0) grants.orgMember = true;
  return grants;
}

/**
 * The reads of the access policy: memberships, teams and collaborations in one bound statement per question,
 * on indexes led by the caller's id. It reads other modules' tables on purpose, so that resolving access stays
 * one indexed query whatever the number of teams; their writes stay with their modules.
 */
@Injectable()
export class AccessStore {
  private readonly statements: BoundStatements;
  private sql?: { grants: string; standing: string; deployKey: string; grantsOfMany: Map<number, string> };

  constructor(private readonly dataSource: DataSource) {
    this.statements = new BoundStatements(dataSource);
  }

  private texts() {
    if (this.sql) return this.sql;
    const table = (entity: Function) => this.dataSource.driver.escape(this.dataSource.getMetadata(entity).tableName);
    const [team, teamUser, teamRepo, orgUser, collaboration] = [TeamEntity, TeamUserEntity, TeamRepoEntity, OrgUserEntity, CollaborationEntity].map(table);
    this.sql = {
      grants:
        `SELECT 0 AS kind, t.authorize AS mode, t.units AS units FROM ${teamUser} tu JOIN ${team} t ON t.id = tu.team_id ` +
        `WHERE tu.uid = ? AND tu.org_id = ? AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM ${teamRepo} tr WHERE tr.team_id = t.id AND tr.repo_id = ?))` +
        ` UNION ALL SELECT 1 AS kind, 0 AS mode, '' AS units FROM ${orgUser} ou WHERE ou.uid = ? AND ou.org_id = ?` +
        ` UNION ALL SELECT 2 AS kind, c.mode AS mode, '' AS units FROM ${collaboration} c WHERE c.repo_id = ? AND c.user_id = ?`,
      standing:
        `SELECT DISTINCT 0 AS kind, tu.org_id AS id FROM ${teamUser} tu JOIN ${team} t ON t.id = tu.team_id WHERE tu.uid = ? AND t.includes_all_repositories = 1` +
        ` UNION ALL SELECT 1 AS kind, ou.org_id AS id FROM ${orgUser} ou WHERE ou.uid = ?` +
        ` UNION ALL SELECT 2 AS kind, EXISTS (SELECT 1 FROM ${collaboration} c WHERE c.user_id = ?) AS id` +
        ` UNION ALL SELECT 3 AS kind, EXISTS (SELECT 1 FROM ${teamUser} tu2 JOIN ${teamRepo} tr2 ON tr2.team_id = tu2.team_id WHERE tu2.uid = ?) AS id`,
      deployKey: `SELECT mode FROM ${table(DeployKeyEntity)} WHERE repo_id = ? AND fingerprint = ?`,
      grantsOfMany: new Map(),
    };
    return this.sql;
  }

  /** The caller's grants on one repository (owned by `ownerId`), in one statement. */
  async grants(uid: number, repo: { id: number; ownerId: number }): Promise<AccessGrants> {
    const set = await this.statements.rows(this.texts().grants, [uid, repo.ownerId, repo.id, uid, repo.ownerId, repo.id, uid]);
    return this.grantsOf(set);
  }

  /** The mode of the deploy key with this material on one repository, or null when it was not added there. */
  async deployKeyMode(fingerprint: string, repoId: number): Promise<AccessMode | null> {
    const set = await this.statements.rows(this.texts().deployKey, [repoId, fingerprint]);
    return set.rows.length === 0 ? null : (Number(valueOf(set, 0, 'mode')) as AccessMode);
  }

  /**
   * The caller's team and collaboration grants on several repositories (a page of a list), in one statement;
   * organisation membership comes from the standing.
   */
  async grantsOfMany(uid: number, repos: { id: number; ownerId: number }[], memberOrgIds: ReadonlySet<number>): Promise<Map<number, AccessGrants>> {
    const result = new Map<number, AccessGrants>();
    if (repos.length === 0) return result;
    const texts = this.texts();
    let sql = texts.grantsOfMany.get(repos.length);
    if (!sql) {
      const table = (entity: Function) => this.dataSource.driver.escape(this.dataSource.getMetadata(entity).tableName);
      const marks = repos.map(() => '?').join(', ');
      sql =
        `SELECT 0 AS kind, tr.repo_id AS repo_id, t.authorize AS mode, t.units AS units FROM ${table(TeamUserEntity)} tu JOIN ${table(TeamEntity)} t ON t.id = tu.team_id ` +
        `JOIN ${table(TeamRepoEntity)} tr ON tr.team_id = t.id WHERE tu.uid = ? AND tr.repo_id IN (${marks})` +
        ` UNION ALL SELECT 3 AS kind, tu.org_id AS repo_id, t.authorize AS mode, t.units AS units FROM ${table(TeamUserEntity)} tu JOIN ${table(TeamEntity)} t ON t.id = tu.team_id ` +
        `WHERE tu.uid = ? AND t.includes_all_repositories = 1` +
        ` UNION ALL SELECT 2 AS kind, c.repo_id AS repo_id, c.mode AS mode, '' AS units FROM ${table(CollaborationEntity)} c WHERE c.user_id = ? AND c.repo_id IN (${marks})`;
      if (texts.grantsOfMany.size < 32) texts.grantsOfMany.set(repos.length, sql);
    }
    const ids = repos.map((repo) => repo.id);
    const set = await this.statements.rows(sql, [uid, ...ids, uid, uid, ...ids]);
    const allTeamsByOrg = new Map<number, TeamGrant[]>();
    for (const repo of repos) result.set(repo.id, { orgMember: memberOrgIds.has(repo.ownerId), teams: [], collaboration: null });
    set.rows.forEach((_, index) => {
      const kind = Number(valueOf(set, index, 'kind'));
      const id = Number(valueOf(set, index, 'repo_id'));
      const mode = Number(valueOf(set, index, 'mode')) as AccessMode;
      if (kind === 3) {
        const list = allTeamsByOrg.get(id) ?? [];
        list.push(teamGrant(mode, String(valueOf(set, index, 'units') ?? '')));
        allTeamsByOrg.set(id, list);
        return;
      }
      const grants = result.get(id);
      if (!grants) return;
      if (kind === 0) grants.teams.push(teamGrant(mode, String(valueOf(set, index, 'units') ?? '')));
      else grants.collaboration = Math.max(grants.collaboration ?? AccessMode.None, mode);
    });
    for (const repo of repos) {
      const teams = allTeamsByOrg.get(repo.ownerId);
      if (teams) result.get(repo.id)!.teams.push(...teams);
    }
    return result;
  }

  /** What lists need to know of the caller, in one statement. */
  async standing(uid: number): Promise<ViewerStanding> {
    const set = await this.statements.rows(this.texts().standing, [uid, uid, uid, uid]);
    const standing: ViewerStanding = { allRepositoryOrgIds: [], memberOrgIds: [], hasRepositoryGrants: false, hasCollaborations: false };
    set.rows.forEach((_, index) => {
      const kind = Number(valueOf(set, index, 'kind'));
      const id = Number(valueOf(set, index, 'id'));
      if (kind === 0) standing.allRepositoryOrgIds.push(id);
      else if (kind === 1) standing.memberOrgIds.push(id);
      else if (id > 0) {
        standing.hasRepositoryGrants = true;
        if (kind === 2) standing.hasCollaborations = true;
      }
    });
    return standing;
  }

  /**
   * Users whose own grants on the repository pass: collaborators of at least `collaboratorMode`, and members of
   * the owning organisation's teams reaching the repository whose grant `teamPasses` (admin and owner teams have
   * every unit at their mode). The owner is the caller's to add.
   */
  async usersGranted(repo: { id: number; ownerId: number }, collaboratorMode: AccessMode, teamPasses: (team: TeamGrant) => boolean): Promise<number[]> {
    const table = (entity: Function) => this.dataSource.driver.escape(this.dataSource.getMetadata(entity).tableName);
    const ids = new Set<number>();
    const collaborators = await this.dataSource.query(`SELECT user_id FROM ${table(CollaborationEntity)} WHERE repo_id = ? AND mode >= ?`, [
      repo.id,
      collaboratorMode,
    ]);
    for (const row of collaborators as { user_id: number | string }[]) ids.add(Number(row.user_id));
    const members = await this.dataSource.query(
      `SELECT tu.uid AS uid, t.authorize AS mode, t.units AS units FROM ${table(TeamUserEntity)} tu JOIN ${table(TeamEntity)} t ON t.id = tu.team_id ` +
        `WHERE tu.org_id = ? AND (t.includes_all_repositories = 1 OR EXISTS (SELECT 1 FROM ${table(TeamRepoEntity)} tr WHERE tr.team_id = t.id AND tr.repo_id = ?))`,
      [repo.ownerId, repo.id],
    );
    for (const row of members as { uid: number | string; mode: number | string; units: string | null }[]) {
      if (teamPasses(teamGrant(Number(row.mode) as AccessMode, String(row.units ?? '')))) ids.add(Number(row.uid));
    }
    return [...ids];
  }

  /** The caller's membership of one organisation and their teams there (for the organisation policy). */
  async organizationStanding(uid: number, orgId: number): Promise<OrganizationStanding> {
    const [member, teams] = await Promise.all([
      this.dataSource.getRepository(OrgUserEntity).exists({ where: { uid, orgId } }),
      this.dataSource
        .getRepository(TeamEntity)
        .createQueryBuilder('team')
        .innerJoin(TeamUserEntity, 'tu', 'tu.team_id = team.id')
        .where('tu.org_id = :orgId AND tu.uid = :uid', { orgId, uid })
        .getMany(),
    ]);
    return {
      isMember: member || teams.length > 0,
      teams: teams.map((team) => ({
        id: team.id,
        mode: team.authorize as AccessMode,
        canCreateOrgRepo: team.canCreateOrgRepo,
        includesAllRepositories: team.includesAllRepositories,
        units: teamGrant(team.authorize, team.units).units,
      })),
    };
  }

  /**
   * The open, unmerged pull requests whose head is in repository `headRepoId` (on `branch`, or on any branch when
   * null) and whose poster allows maintainers to edit: each one's base repository and poster (one statement on
   * the index of the head). The branch is compared here as well, byte for byte: a case-insensitive collation
   * must not make `Fix` match `fix`.
   */
  async maintainerEditPulls(headRepoId: number, branch: string | null): Promise<{ baseRepoId: number; posterId: number }[]> {
    const table = (entity: Function) => this.dataSource.driver.escape(this.dataSource.getMetadata(entity).tableName);
    const rows = (await this.dataSource.query(
      `SELECT pr.base_repo_id AS base_repo_id, pr.head_branch AS head_branch, i.poster_id AS poster_id FROM ${table(PullRequestEntity)} pr ` +
        `JOIN ${table(IssueEntity)} i ON i.id = pr.issue_id WHERE pr.head_repo_id = ?${branch === null ? '' : ' AND pr.head_branch = ?'} ` +
        'AND pr.allow_maintainer_edit = 1 AND pr.has_merged = 0 AND i.is_closed = 0',
      branch === null ? [headRepoId] : [headRepoId, branch],
    )) as { base_repo_id: number | string; head_branch: string; poster_id: number | string }[];
    return rows
      .filter((row) => branch === null || row.head_branch === branch)
      .map((row) => ({ baseRepoId: Number(row.base_repo_id), posterId: Number(row.poster_id) }));
  }

  /** Repositories by id, each with its owner (those whose owner is gone are left out). */
  async repositoriesWithOwners(ids: number[]): Promise<Map<number, { repo: RepositoryEntity; owner: UserEntity }>> {
    const result = new Map<number, { repo: RepositoryEntity; owner: UserEntity }>();
    if (ids.length === 0) return result;
    const repos = await this.dataSource.getRepository(RepositoryEntity).findBy({ id: In(ids) });
    const owners = await this.usersByIds(repos.map((repo) => repo.ownerId));
    for (const repo of repos) {
      const owner = owners.get(repo.ownerId);
      if (owner) result.set(repo.id, { repo, owner });
    }
    return result;
  }

  /** Users by id. */
  async usersByIds(ids: number[]): Promise<Map<number, UserEntity>> {
    const unique = [...new Set(ids)];
    if (unique.length === 0) return new Map();
    const users = await this.dataSource.getRepository(UserEntity).findBy({ id: In(unique) });
    return new Map(users.map((user) => [user.id, user]));
  }

  private grantsOf(set: RowSet): AccessGrants {
    const grants: AccessGrants = { orgMember: false, teams: [], collaboration: null };
    set.rows.forEach((_, index) => {
      const kind = Number(valueOf(set, index, 'kind'));
      const mode = Number(valueOf(set, index, 'mode')) as AccessMode;
      if (kind === 0) grants.teams.push(teamGrant(mode, String(valueOf(set, index, 'units') ?? '')));
      else if (kind === 1) grants.orgMember = true;
      else grants.collaboration = mode;
    });
    // A team of the caller reaching the repository makes them a member, whatever org_user says.
    if (grants.teams.length > 0) grants.orgMember = true;
    return grants;
  }
}

/** Whether a team's grant writes at least one unit. */
export function writesSomeUnit(team: TeamGrant): boolean {
  return team.mode >= AccessMode.Admin || Object.values(team.units).some((mode) => (mode ?? AccessMode.None) >= AccessMode.Write);
}

/** A team row as the policy reads it: admin and owner teams have every unit at their mode. */
export function teamGrant(mode: AccessMode, units: string): TeamGrant {
  return { mode, units: mode >= AccessMode.Admin ? allUnits(mode) : parseUnits(units) };
}

const ALL_UNITS = new Map<AccessMode, Readonly<UnitModes>>();

function allUnits(mode: AccessMode): Readonly<UnitModes> {
  let units = ALL_UNITS.get(mode);
  if (!units) ALL_UNITS.set(mode, (units = Object.freeze(Object.fromEntries(REPOSITORY_UNITS.map((unit) => [unit, mode])) as UnitModes)));
  return units;
}

/**
 * Team units parsed, by their stored JSON: the grants of every request name teams, and a few distinct texts
 * serve them all (parsing each team's anew cost some 2 µs per team and request). Keyed by the text itself, so
 * never stale; shared between requests, so frozen.
 */
const PARSED_UNITS = new LRUCache<string, Readonly<UnitModes>>({ max: 1000 });

/** The stored JSON of a team's units; anything unreadable counts as no unit. */
export function parseUnits(text: string): Readonly<UnitModes> {
  let units = PARSED_UNITS.get(text);
  if (!units) PARSED_UNITS.set(text, (units = Object.freeze(parseUnitsText(text))));
  return units;
}

function parseUnitsText(text: string): UnitModes {
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    const units: UnitModes = {};
    for (const [name, mode] of Object.entries(parsed)) if (isRepositoryUnit(name) && typeof mode === 'number') units[name] = mode;
    return units;
  } catch {
    return {};
  }
}
