import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { inList, RowReader } from '../database/row-reader';
import { LabelEntity } from './label.entity';

/** Whose labels: a repository's or an organisation's. */
export type LabelOwner = { repoId: number; orgId: 0 } | { repoId: 0; orgId: number };

export type LabelSort = 'alphabetically' | 'reversealphabetically';

/** The only door to the label table. */
@Injectable()
export class LabelStore {
  /** The issue lists' reads (a page's labels, the `labels` filter): bound statements hydrated by hand. */
  private readonly rows: RowReader<LabelEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = new RowReader(dataSource, LabelEntity);
  }

  private labels(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(LabelEntity);
  }

  async list(owner: LabelOwner, sort: LabelSort, page: PageQuery): Promise<Page<LabelEntity>> {
    const direction = sort === 'reversealphabetically' ? 'DESC' : 'ASC';
    const [items, total] = await this.labels().findAndCount({
      where: { repoId: owner.repoId, orgId: owner.orgId },
      order: { name: direction, id: direction },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  count(owner: LabelOwner, tx?: EntityManager): Promise<number> {
    return this.labels(tx).countBy({ repoId: owner.repoId, orgId: owner.orgId });
  }

  findById(owner: LabelOwner, id: number, tx?: EntityManager): Promise<LabelEntity | null> {
    return this.labels(tx).findOneBy({ id, repoId: owner.repoId, orgId: owner.orgId });
  }

  findByName(owner: LabelOwner, name: string, tx?: EntityManager): Promise<LabelEntity | null> {
    return this.labels(tx).findOneBy({ name, repoId: owner.repoId, orgId: owner.orgId });
  }

  byIds(ids: number[], tx?: EntityManager): Promise<LabelEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const [list, parameters] = inList(ids);
    return this.rows.all(`${this.rows.select()}WHERE id ${list} ORDER BY name ASC, id ASC`, parameters, tx);
  }

  /** Labels of a repository or of its organisation with one of these names. */
  byNames(repoId: number, orgId: number, names: string[]): Promise<LabelEntity[]> {
    if (names.length === 0) return Promise.resolve([]);
    const [list, parameters] = inList(names);
    const own = `${this.rows.select()}WHERE repo_id = ? AND org_id = 0 AND name ${list}`;
    if (orgId === 0) return this.rows.all(own, [repoId, ...parameters]);
    return this.rows.all(`${own} UNION ALL ${this.rows.select()}WHERE repo_id = 0 AND org_id = ? AND name ${list}`, [
      repoId,
      ...parameters,
      orgId,
      ...parameters,
    ]);
  }

  /** Ids of every label (of any repository or organisation) with one of these names. */
  async idsByNames(names: string[]): Promise<number[]> {
    if (names.length === 0) return [];
    return (await this.labels().find({ select: { id: true }, where: { name: In(names) } })).map((label) => label.id);
  }

  insert(tx: EntityManager, label: Partial<LabelEntity>): Promise<LabelEntity> {
    return tx.getRepository(LabelEntity).save(tx.getRepository(LabelEntity).create(label));
  }

  async update(tx: EntityManager, id: number, changes: Partial<LabelEntity>): Promise<void> {
    await tx.getRepository(LabelEntity).update({ id }, changes);
  }

  /** True when a row was really deleted. */
  async delete(tx: EntityManager, owner: LabelOwner, id: number): Promise<boolean> {
    const result = await tx.getRepository(LabelEntity).delete({ id, repoId: owner.repoId, orgId: owner.orgId });
    return (result.affected ?? 0) > 0;
  }

  async deleteAllOf(tx: EntityManager, owner: LabelOwner): Promise<void> {
    await tx.getRepository(LabelEntity).delete({ repoId: owner.repoId, orgId: owner.orgId });
  }
}
