import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { Page, PageQuery } from '../common/paging';
import { changeRows, insertUnlessPresent } from '../database/transactions';
import { FollowEntity } from './follow.entity';
import { UserEntity, UserType } from './user.entity';
import { visibleUsersCondition } from './user-visibility.condition';
import { UserStore } from './user.store';

/**
 * The only door to the follow table. The counters `num_followers` / `num_following` of the user table are
 * changed here too, in SQL and in the caller's transaction, exactly when a follow row is inserted or deleted.
 */
@Injectable()
export class FollowStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly userStore: UserStore,
  ) {}

  /**
   * Inserts "`userId` follows `followId`" and counts it. Returns false, changing nothing, when the row already
   * exists (including a concurrent insert that won: the unique index decides, and a duplicate costs no error).
   */
  async insert(tx: EntityManager, userId: number, followId: number, nowUnix: number): Promise<boolean> {
    const sql = insertUnlessPresent(tx, 'follow', ['user_id', 'follow_id', 'created_unix']);
    if ((await changeRows(tx, sql, [userId, followId, nowUnix])) === 0) return false;
    await this.addToCounters(tx, userId, followId, 1);
    return true;
  }

  /** Deletes the row if there is one; returns whether a row was deleted. */
  async delete(tx: EntityManager, userId: number, followId: number): Promise<boolean> {
    if ((await changeRows(tx, 'DELETE FROM follow WHERE user_id = ? AND follow_id = ?', [userId, followId])) === 0) return false;
    await this.addToCounters(tx, userId, followId, -1);
    return true;
  }

  /** Updates both users in id order, so that two opposite follows cannot deadlock on each other's rows. */
  private async addToCounters(tx: EntityManager, userId: number, followId: number, delta: number): Promise<void> {
    const updates: [number, 'numFollowing' | 'numFollowers'][] = [
      [userId, 'numFollowing'],
      [followId, 'numFollowers'],
    ];
    updates.sort(([a], [b]) => a - b);
    for (const [id, counter] of updates) await this.userStore.addToCounter(tx, id, counter, delta);
  }

  async exists(userId: number, followId: number): Promise<boolean> {
    return (await this.dataSource.getRepository(FollowEntity).countBy({ userId, followId })) > 0;
  }

  /** The individual users following `userId` that `viewer` may see in lists, oldest follow first. */
  followers(userId: number, viewer: AuthContext, page: PageQuery): Promise<Page<UserEntity>> {
    const visible = visibleUsersCondition(viewer, 'u');
    return this.page(
      this.users()
        .innerJoin(FollowEntity, 'f', 'f.user_id = u.id')
        .where('f.follow_id = :userId', { userId })
        .andWhere('u.type = :individual', { individual: UserType.Individual })
        .andWhere(visible.sql, visible.parameters),
      page,
    );
  }

  /** The users and organisations `userId` follows that `viewer` may see in lists, oldest follow first. */
  following(userId: number, viewer: AuthContext, page: PageQuery): Promise<Page<UserEntity>> {
    return this.page(this.followingQuery(userId, viewer), page);
  }

  /** Does `userId` follow `followId`, and may `viewer` see `followId` in lists (so in `following` above)? */
  async followsVisible(userId: number, followId: number, viewer: AuthContext): Promise<boolean> {
    return (await this.followingQuery(userId, viewer).andWhere('u.id = :followId', { followId }).getCount()) > 0;
  }

  /**
   * Removes every follow of and by a deleted user or organisation, in the deleting transaction, and takes
   * them off the other side's counters first.
   */
  async deleteAllOf(tx: EntityManager, id: number): Promise<void> {
    const user = tx.connection.driver.escape('user');
    await tx.query(`UPDATE ${user} SET num_followers = num_followers - 1 WHERE id IN (SELECT follow_id FROM follow WHERE user_id = ?)`, [id]);
    await tx.query(`UPDATE ${user} SET num_following = num_following - 1 WHERE id IN (SELECT user_id FROM follow WHERE follow_id = ?)`, [id]);
    await tx.getRepository(FollowEntity).delete({ userId: id });
    await tx.getRepository(FollowEntity).delete({ followId: id });
  }

  private users() {
    return this.dataSource.getRepository(UserEntity).createQueryBuilder('u');
  }

  private followingQuery(userId: number, viewer: AuthContext) {
    const visible = visibleUsersCondition(viewer, 'u');
    return this.users().innerJoin(FollowEntity, 'f', 'f.follow_id = u.id').where('f.user_id = :userId', { userId }).andWhere(visible.sql, visible.parameters);
  }

  private async page(query: ReturnType<FollowStore['users']>, page: PageQuery): Promise<Page<UserEntity>> {
    const [items, total] = await query.orderBy('f.id', 'ASC').offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }
}
