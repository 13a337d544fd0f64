import { Injectable } from '@nestjs/common';
import { Brackets, DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { isUniqueViolation } from '../database/transactions';
import { RepositoryEntity } from '../repos/repository.entity';
import { OWNER_ACCESS_MODE, TeamEntity, TeamRepoEntity, TeamUserEntity } from '../users/organization.entities';
import { UserEntity } from '../users/user.entity';

export interface TeamSearch {
  orgId: number;
  keyword: string;
  includeDescription: boolean;
  /** Only the teams of this user (null: every team of the organisation). */
  memberId: number | null;
}

/**
 * Teams' own rows: the team, the repositories it reaches and the reading of its members. A team that
 * includes all repositories has no team_repo rows: it reaches every repository of its organisation, those
 * created later included. Membership writes stay with the organisation store (they move org_user too).
 */
@Injectable()
export class TeamStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  findById(id: number): Promise<TeamEntity | null> {
    return this.manager().getRepository(TeamEntity).findOneBy({ id });
  }

  /** Teams by id; ids of teams that are gone are left out. */
  byIds(ids: number[], tx?: EntityManager): Promise<TeamEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    return this.manager(tx)
      .getRepository(TeamEntity)
      .find({ where: { id: In(ids) } });
  }

  findByName(orgId: number, name: string): Promise<TeamEntity | null> {
    return this.manager().getRepository(TeamEntity).findOneBy({ orgId, lowerName: name.toLowerCase() });
  }

  /** How many teams the organisation has, read in `tx`. */
  countOfOrganization(tx: EntityManager, orgId: number): Promise<number> {
    return tx.getRepository(TeamEntity).countBy({ orgId });
  }

  /** Inserts a team; null when the organisation has one of that name already (the unique index decides). */
  async insert(tx: EntityManager, fields: Omit<TeamEntity, 'id'>): Promise<TeamEntity | null> {
    const repository = tx.getRepository(TeamEntity);
    try {
      // One INSERT on its own (no transaction of save's): a Galera conflict (1213) is then run again like any
      // single statement (statement-retry.ts).
      return await repository.save(repository.create(fields), { transaction: false });
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  /** Writes a team's fields; false when its new name is taken in the organisation (the unique index decides). */
  async update(tx: EntityManager, team: TeamEntity): Promise<boolean> {
    try {
      await tx.getRepository(TeamEntity).update(
        { id: team.id },
        {
          name: team.name,
          lowerName: team.name.toLowerCase(),
          description: team.description,
          authorize: team.authorize,
          includesAllRepositories: team.includesAllRepositories,
          canCreateOrgRepo: team.canCreateOrgRepo,
          units: team.units,
        },
      );
      return true;
    } catch (error) {
      if (isUniqueViolation(error)) return false;
      throw error;
    }
  }

  /**
   * A team that stops including all repositories keeps the ones it had: they become explicit links, in the
   * transaction that changes the flag.
   */
  async linkAllRepositories(tx: EntityManager, team: TeamEntity): Promise<void> {
    const repos = await tx.getRepository(RepositoryEntity).find({ where: { ownerId: team.orgId }, select: { id: true } });
    const linked = new Set((await tx.getRepository(TeamRepoEntity).find({ where: { teamId: team.id } })).map((link) => link.repoId));
    const missing = repos.filter((repo) => !linked.has(repo.id)).map((repo) => ({ orgId: team.orgId, teamId: team.id, repoId: repo.id }));
    for (let start = 0; start < missing.length; start += 100) await tx.getRepository(TeamRepoEntity).insert(missing.slice(start, start + 100));
  }

  /** Deletes the team and its repository links, inside the caller's transaction (its members go first). */
  async delete(tx: EntityManager, team: TeamEntity): Promise<void> {
    await tx.getRepository(TeamRepoEntity).delete({ teamId: team.id });
    await tx.getRepository(TeamEntity).delete({ id: team.id });
  }

  async listOfOrganization(orgId: number, page: PageQuery): Promise<Page<TeamEntity>> {
    return this.search({ orgId, keyword: '', includeDescription: false, memberId: null }, page);
  }

  /** Teams by name, as Forgejo orders them; the keyword matches the name (and the description when asked). */
  async search(search: TeamSearch, page: PageQuery): Promise<Page<TeamEntity>> {
    const query = this.manager().getRepository(TeamEntity).createQueryBuilder('team').where('team.org_id = :orgId', { orgId: search.orgId });
    if (search.memberId !== null) query.innerJoin(TeamUserEntity, 'tu', 'tu.team_id = team.id AND tu.uid = :uid', { uid: search.memberId });
    if (search.keyword) {
      const pattern = `%${escapeLike(search.keyword.toLowerCase())}%`;
      query.andWhere(
        new Brackets((where) => {
          where.where("team.lower_name LIKE :pattern ESCAPE '!'", { pattern });
          if (search.includeDescription) where.orWhere("LOWER(team.description) LIKE :pattern ESCAPE '!'", { pattern });
        }),
      );
    }
    const [items, total] = await query.orderBy('team.lower_name', 'ASC').addOrderBy('team.id', 'ASC').offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }

  /** Every team of `uid`, in every organisation. */
  async listOfMember(uid: number, page: PageQuery): Promise<Page<TeamEntity>> {
    const [items, total] = await this.manager()
      .getRepository(TeamEntity)
      .createQueryBuilder('team')
      .innerJoin(TeamUserEntity, 'tu', 'tu.team_id = team.id')
      .where('tu.uid = :uid', { uid })
      .orderBy('team.lower_name', 'ASC')
      .addOrderBy('team.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getManyAndCount();
    return { items, total };
  }

  /** A team's members, by full name then name, as Forgejo lists them. */
  async listMembers(teamId: number, page: PageQuery): Promise<Page<UserEntity>> {
    const [items, total] = await this.manager()
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin(TeamUserEntity, 'tu', 'tu.uid = u.id')
      .where('tu.team_id = :teamId', { teamId })
      .orderBy('u.full_name', 'ASC')
      .addOrderBy('u.name', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getManyAndCount();
    return { items, total };
  }

  /** The ids of a team's members, read in `tx` when given. */
  async memberIds(teamId: number, tx?: EntityManager): Promise<number[]> {
    const rows = await this.manager(tx)
      .getRepository(TeamUserEntity)
      .find({ where: { teamId }, select: { uid: true }, order: { uid: 'ASC' } });
    return rows.map((row) => row.uid);
  }

  async isMember(teamId: number, uid: number, tx?: EntityManager): Promise<boolean> {
    return this.manager(tx).getRepository(TeamUserEntity).exists({ where: { teamId, uid } });
  }

  /** The repositories the team reaches, by name. */
  async listRepositories(team: TeamEntity, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const query = this.manager().getRepository(RepositoryEntity).createQueryBuilder('r');
    if (team.includesAllRepositories) query.where('r.owner_id = :orgId', { orgId: team.orgId });
    else query.innerJoin(TeamRepoEntity, 'tr', 'tr.repo_id = r.id').where('tr.team_id = :teamId', { teamId: team.id });
    const [items, total] = await query.orderBy('r.lower_name', 'ASC').offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }

  /** Whether the team reaches the repository (of its organisation). */
  async reaches(team: TeamEntity, repo: { id: number; ownerId: number }): Promise<boolean> {
    if (repo.ownerId !== team.orgId) return false;
    if (team.includesAllRepositories) return true;
    return this.manager()
      .getRepository(TeamRepoEntity)
      .exists({ where: { teamId: team.id, repoId: repo.id } });
  }

  /** The teams that reach a repository of their organisation: Owners first, then by name. */
  async teamsOfRepository(repo: { id: number; ownerId: number }): Promise<TeamEntity[]> {
    const teams = await this.manager()
      .getRepository(TeamEntity)
      .createQueryBuilder('team')
      .where('team.org_id = :orgId', { orgId: repo.ownerId })
      .andWhere(
        new Brackets((where) => {
          where.where('team.includes_all_repositories = :all', { all: true });
          where.orWhere(
            `EXISTS (SELECT 1 FROM ${this.dataSource.getMetadata(TeamRepoEntity).tableName} tr WHERE tr.team_id = team.id AND tr.repo_id = :repoId)`,
            { repoId: repo.id },
          );
        }),
      )
      .orderBy('team.lower_name', 'ASC')
      .getMany();
    return [...teams.filter((team) => team.authorize === OWNER_ACCESS_MODE), ...teams.filter((team) => team.authorize !== OWNER_ACCESS_MODE)];
  }

  /** Idempotent: a link already there (or added concurrently) is kept as it is. */
  async link(tx: EntityManager, team: TeamEntity, repoId: number): Promise<boolean> {
    try {
      await tx.getRepository(TeamRepoEntity).insert({ orgId: team.orgId, teamId: team.id, repoId });
      return true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return false;
    }
  }

  /** Whether a link was there to remove. */
  async unlink(tx: EntityManager, teamId: number, repoId: number): Promise<boolean> {
    return ((await tx.getRepository(TeamRepoEntity).delete({ teamId, repoId })).affected ?? 0) > 0;
  }

  async deleteLinksOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(TeamRepoEntity).delete({ repoId });
  }
}

/** A LIKE pattern matching `text` literally ('!' escapes). */
function escapeLike(text: string): string {
  return text.replace(/[!%_]/g, (char) => `!${char}`);
}
