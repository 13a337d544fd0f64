import type { EntityManager } from 'typeorm';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { isUniqueViolation } from '../database/transactions';
import { RepositoryEntity } from '../repos/repository.entity';
import { TeamEntity, TeamRepoEntity } from '../users/organization.entities';

/** Teams' own rows beyond membership: the team itself and the repositories it reaches. */
@Injectable()
export class TeamStore {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts a team; null when the organisation has one of that name already (the unique index decides). */
  async insert(tx: EntityManager, fields: Omit<TeamEntity, 'id'>): Promise<TeamEntity | null> {
    const repository = tx.getRepository(TeamEntity);
    try {
      return await repository.save(repository.create(fields));
    } catch (error) {
      if (isUniqueViolation(error)) return null;
      throw error;
    }
  }

  async listRepositories(teamId: number, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const [items, total] = await this.dataSource
      .getRepository(RepositoryEntity)
      .createQueryBuilder('r')
      .innerJoin(TeamRepoEntity, 'tr', 'tr.repo_id = r.id')
      .where('tr.team_id = :teamId', { teamId })
      .orderBy('r.lower_name', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getManyAndCount();
    return { items, total };
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

  async deleteLinksOfRepository(tx: import('typeorm').EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(TeamRepoEntity).delete({ repoId });
  }
}
