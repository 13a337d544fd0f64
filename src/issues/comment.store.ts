import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { changeRows } from '../database/transactions';
import { CommentType } from './comment-types';
import { CommentEntity } from './issue.entity';

export interface CommentCriteria {
  /** Every entry of the timeline, not only plain comments. */
  allTypes?: boolean;
  issueId?: number;
  repoId?: number;
  updatedAfter?: number;
  updatedBefore?: number;
}

/** The only door to the comment table (and to the issue's comment counter, moved with it). */
@Injectable()
export class CommentStore {
  constructor(private readonly dataSource: DataSource) {}

  findById(id: number, tx?: EntityManager): Promise<CommentEntity | null> {
    return (tx ?? this.dataSource.manager).getRepository(CommentEntity).findOneBy({ id });
  }

  /** Plain comments (or every entry, `allTypes`), oldest first. */
  async list(criteria: CommentCriteria, page: PageQuery): Promise<Page<CommentEntity>> {
    const query = this.dataSource.getRepository(CommentEntity).createQueryBuilder('c');
    if (!criteria.allTypes) query.where('c.type = :type', { type: CommentType.Comment });
    if (criteria.issueId !== undefined) query.andWhere('c.issue_id = :issueId', { issueId: criteria.issueId });
    if (criteria.repoId !== undefined) query.andWhere('c.repo_id = :repoId', { repoId: criteria.repoId });
    if (criteria.updatedAfter !== undefined) query.andWhere('c.updated_unix >= :after', { after: criteria.updatedAfter });
    if (criteria.updatedBefore !== undefined) query.andWhere('c.updated_unix <= :before', { before: criteria.updatedBefore });
    const total = Number((await query.clone().select('COUNT(*)', 'total').getRawOne<{ total: number | string }>())?.total ?? 0);
    if (total === 0 || page.offset >= total) return { items: [], total };
    const items = await query.orderBy('c.created_unix', 'ASC').addOrderBy('c.id', 'ASC').offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  /** Whether the issue already has a `commit_ref` entry for this commit. */
  async hasCommitReference(tx: EntityManager, issueId: number, commitSha: string): Promise<boolean> {
    return (await tx.getRepository(CommentEntity).countBy({ issueId, type: CommentType.CommitRef, commitSha })) > 0;
  }

  /** A plain comment and the issue's count, in the caller's transaction. */
  async insert(tx: EntityManager, comment: Partial<CommentEntity>): Promise<CommentEntity> {
    const saved = await tx.getRepository(CommentEntity).save(tx.getRepository(CommentEntity).create(comment));
    if (saved.type === CommentType.Comment) {
      await changeRows(tx, 'UPDATE issue SET num_comments = num_comments + 1, updated_unix = ? WHERE id = ?', [saved.createdUnix, saved.issueId]);
    }
    return saved;
  }

  async update(tx: EntityManager, id: number, changes: Partial<CommentEntity>): Promise<void> {
    await tx.getRepository(CommentEntity).update({ id }, changes);
  }

  /** The `review` entry of each review that has one (the review given), by review id. */
  async reviewEntryIds(reviewIds: number[]): Promise<Map<number, number>> {
    const found = new Map<number, number>();
    if (reviewIds.length === 0) return found;
    const rows = await this.dataSource.manager
      .getRepository(CommentEntity)
      .find({ where: { reviewId: In(reviewIds), type: CommentType.Review }, select: { id: true, reviewId: true }, order: { id: 'ASC' } });
    for (const row of rows) if (!found.has(row.reviewId)) found.set(row.reviewId, row.id);
    return found;
  }

  /** The entries of a review (given, dismissed), which go with it. */
  async deleteOfReview(tx: EntityManager, issueId: number, reviewId: number): Promise<void> {
    if (reviewId > 0) await tx.getRepository(CommentEntity).delete({ issueId, reviewId, type: In([CommentType.Review, CommentType.DismissReview]) });
  }

  /** True when the row was really deleted (the count moves only then). */
  async delete(tx: EntityManager, comment: CommentEntity): Promise<boolean> {
    const result = await tx.getRepository(CommentEntity).delete({ id: comment.id });
    const deleted = (result.affected ?? 0) > 0;
    if (deleted && comment.type === CommentType.Comment) {
      await changeRows(tx, 'UPDATE issue SET num_comments = num_comments - 1 WHERE id = ? AND num_comments > 0', [comment.issueId]);
    }
    return deleted;
  }
}
