import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { MilestoneEntity } from './milestone.entity';

/** What a repository's list of milestones is narrowed to. */
export interface MilestoneCriteria {
  isClosed?: boolean;
  /** Part of the name, any case. */
  name?: string;
}

/** `%part%` for LIKE, with the LIKE metacharacters escaped by `!`. */
function containsPattern(part: string): string {
  return `%${part.toLowerCase().replace(/[!%_]/g, (character) => `!${character}`)}%`;
}

/** The only door to the milestone table. */
@Injectable()
export class MilestoneStore {
  constructor(private readonly dataSource: DataSource) {}

  private milestones(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(MilestoneEntity);
  }

  /** Soonest due first, those without a due date last, then by name (as Forgejo). */
  async list(repoId: number, criteria: MilestoneCriteria, page: PageQuery): Promise<Page<MilestoneEntity>> {
    const query = this.milestones().createQueryBuilder('m').where('m.repo_id = :repoId', { repoId });
    if (criteria.isClosed !== undefined) query.andWhere('m.is_closed = :isClosed', { isClosed: criteria.isClosed ? 1 : 0 });
    if (criteria.name) query.andWhere("LOWER(m.name) LIKE :name ESCAPE '!'", { name: containsPattern(criteria.name) });
    const total = await query.getCount();
    if (total === 0 || page.offset >= total) return { items: [], total };
    const items = await query
      .orderBy('m.deadline_unix', 'ASC')
      .addOrderBy('m.name', 'ASC')
      .addOrderBy('m.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getMany();
    return { items, total };
  }

  count(repoId: number, tx?: EntityManager): Promise<number> {
    return this.milestones(tx).countBy({ repoId });
  }

  findById(repoId: number, id: number, tx?: EntityManager): Promise<MilestoneEntity | null> {
    return this.milestones(tx).findOneBy({ id, repoId });
  }

  /** The first (lowest id) of the repository's milestones with exactly this name: names may repeat. */
  findByName(repoId: number, name: string, tx?: EntityManager): Promise<MilestoneEntity | null> {
    return this.milestones(tx).findOne({ where: { repoId, name }, order: { id: 'ASC' } });
  }

  byIds(ids: number[], tx?: EntityManager): Promise<MilestoneEntity[]> {
    return ids.length === 0 ? Promise.resolve([]) : this.milestones(tx).findBy({ id: In(ids) });
  }

  async idsByNames(names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    return (await this.milestones().find({ select: { id: true }, where: { name: In(names) } })).map((milestone) => milestone.id);
  }

  insert(tx: EntityManager, milestone: Partial<MilestoneEntity>): Promise<MilestoneEntity> {
    return tx.getRepository(MilestoneEntity).save(tx.getRepository(MilestoneEntity).create(milestone));
  }

  async update(tx: EntityManager, id: number, changes: Partial<MilestoneEntity>): Promise<void> {
    await tx.getRepository(MilestoneEntity).update({ id }, changes);
  }

  /**
   * Moves the counts of issues on a milestone by a delta, in the caller's transaction: the UPDATE locks the
   * row, so concurrent changes add up instead of overwriting each other.
   */
  async moveCounts(tx: EntityManager, id: number, issues: number, closed: number): Promise<void> {
    if (issues === 0 && closed === 0) return;
    await tx
      .createQueryBuilder()
      .update(MilestoneEntity)
      .set({ numIssues: () => `num_issues + ${Math.trunc(issues)}`, numClosedIssues: () => `num_closed_issues + ${Math.trunc(closed)}` })
      .where('id = :id', { id })
      .execute();
  }

  /** True when a row was really deleted. */
  async delete(tx: EntityManager, repoId: number, id: number): Promise<boolean> {
    const result = await tx.getRepository(MilestoneEntity).delete({ id, repoId });
    return (result.affected ?? 0) > 0;
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(MilestoneEntity).delete({ repoId });
  }
}
