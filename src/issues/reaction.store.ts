import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { insertUnlessPresent, changeRows } from '../database/transactions';
import { ReactionEntity } from './reaction.entity';

/** The only door to the reaction table. `commentId` 0 means the issue itself. */
@Injectable()
export class ReactionStore {
  constructor(private readonly dataSource: DataSource) {}

  private reactions(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(ReactionEntity);
  }

  /** Oldest first. */
  async list(issueId: number, commentId: number, page: PageQuery | null): Promise<Page<ReactionEntity>> {
    const [items, total] = await this.reactions().findAndCount({
      where: { issueId, commentId },
      order: { id: 'ASC' },
      ...(page ? { skip: page.offset, take: page.limit } : {}),
    });
    return { items, total };
  }

  find(issueId: number, commentId: number, userId: number, type: string, tx?: EntityManager): Promise<ReactionEntity | null> {
    return this.reactions(tx).findOneBy({ issueId, commentId, userId, type });
  }

  /** Adds the reaction unless the user already gave it; true when a row was added. */
  async add(tx: EntityManager, reaction: Omit<ReactionEntity, 'id'>): Promise<boolean> {
    const sql = insertUnlessPresent(tx, 'reaction', ['type', 'issue_id', 'comment_id', 'user_id', 'created_unix']);
    return (await changeRows(tx, sql, [reaction.type, reaction.issueId, reaction.commentId, reaction.userId, reaction.createdUnix])) > 0;
  }

  async remove(tx: EntityManager, issueId: number, commentId: number, userId: number, type: string): Promise<void> {
    await tx.getRepository(ReactionEntity).delete({ issueId, commentId, userId, type });
  }

  async deleteOfComment(tx: EntityManager, commentId: number): Promise<void> {
    if (commentId > 0) await tx.getRepository(ReactionEntity).delete({ commentId });
  }
}
