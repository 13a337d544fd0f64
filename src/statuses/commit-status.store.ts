import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { Page, PageQuery } from '../common/paging';
import { CommitStatusEntity } from './commit-status.entity';

export type StatusSort = 'oldest' | 'recentupdate' | 'leastupdate' | 'leastindex' | 'highestindex' | '';

/** The only door to the commit_status table. */
@Injectable()
export class CommitStatusStore {
  constructor(private readonly dataSource: DataSource) {}

  /** How many statuses one commit has, every context together, read in `tx`. */
  countOfCommit(tx: EntityManager, repoId: number, sha: string): Promise<number> {
    return tx.getRepository(CommitStatusEntity).countBy({ repoId, sha });
  }

  insert(tx: EntityManager, status: Omit<CommitStatusEntity, 'id'>): Promise<CommitStatusEntity> {
    const repository = tx.getRepository(CommitStatusEntity);
    return repository.save(repository.create(status));
  }

  async list(repoId: number, sha: string, filter: { state: string; sort: StatusSort }, page: PageQuery): Promise<Page<CommitStatusEntity>> {
    const query = this.dataSource.getRepository(CommitStatusEntity).createQueryBuilder('s').where('s.repo_id = :repoId AND s.sha = :sha', { repoId, sha });
    if (filter.state !== '') query.andWhere('s.state = :state', { state: filter.state });
    const [column, direction] = SORTS[filter.sort] ?? SORTS[''];
    query.orderBy(column, direction).addOrderBy('s.id', direction).skip(page.offset).take(page.limit);
    const [items, total] = await query.getManyAndCount();
    return { items, total };
  }

  /** The latest status of each context of one commit, by context name; paged over the contexts. */
  async latestPerContext(repoId: number, sha: string, page: PageQuery): Promise<Page<CommitStatusEntity>> {
    const latestIds = this.dataSource
      .getRepository(CommitStatusEntity)
      .createQueryBuilder('l')
      .select('MAX(l.id)')
      .where('l.repo_id = :repoId AND l.sha = :sha')
      .groupBy('l.context');
    const [items, total] = await this.dataSource
      .getRepository(CommitStatusEntity)
      .createQueryBuilder('s')
      .where(`s.id IN (${latestIds.getQuery()})`, { repoId, sha })
      .orderBy('s.context', 'ASC')
      .addOrderBy('s.id', 'ASC')
      .skip(page.offset)
      .take(page.limit)
      .getManyAndCount();
    return { items, total };
  }

  async deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(CommitStatusEntity).delete({ repoId });
  }
}

const SORTS: Record<string, [string, 'ASC' | 'DESC']> = {
  '': ['s.created_unix', 'DESC'],
  oldest: ['s.created_unix', 'ASC'],
  recentupdate: ['s.updated_unix', 'DESC'],
  leastupdate: ['s.updated_unix', 'ASC'],
  leastindex: ['s.id', 'ASC'],
  highestindex: ['s.id', 'DESC'],
};
