import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { UserEntity, UserType, Visibility } from './user.entity';

/** A fragment for `queryBuilder.andWhere(condition.sql, condition.parameters)`. */
export interface SqlCondition {
  sql: string;
  parameters: Record<string, unknown>;
}

/**
 * Which users and organisations `viewer` sees in LISTS and SEARCH (docs/visibility.md), as one SQL condition on
 * the `user` table alias `alias`, so that filtering, `X-Total-Count` and paging all happen in the database.
 *
 * - anonymous callers and public-only tokens: public rows only;
 * - site admins: everything;
 * - the viewer themselves, and the organisations the viewer is a member of, always;
 * - other signed-in callers: public and limited rows (a restricted caller: public only), plus individual
 *   users who follow the viewer or share an organisation with them, whatever their visibility.
 *
 * Direct lookups (`GET /users/{u}`, users group B, `GET /orgs/{org}`) use UserVisibility.canSee instead:
 * there a private user is visible to themselves and site admins only.
 *
 * Reuse: join or select the `user` table under some alias and add this condition, e.g.
 * `qb.innerJoin(UserEntity, 'owner', 'owner.id = repo.owner_id').andWhere(c.sql, c.parameters)` with
 * `c = visibleUsersCondition(viewer, 'owner')`. Parameter and sub-query names derive from the alias, so
 * several conditions can share one query. It reads the `follow` and `org_user` tables.
 */
export function visibleUsersCondition(viewer: AuthContext, alias: string): SqlCondition {
  const user = viewer.user;
  if (!user || viewer.publicOnly) return { sql: `${alias}.visibility = ${Visibility.Public}`, parameters: {} };
  if (viewer.isAdmin) return { sql: '1 = 1', parameters: {} };
  const key = `${alias.replace(/\W/g, '_')}_visibility`;
  const viewerId = `${key}_viewer`;
  const seenByVisibility = user.isRestricted
    ? `${alias}.visibility = ${Visibility.Public}`
    : `${alias}.visibility IN (${Visibility.Public}, ${Visibility.Limited})`;
  const sql = [
    `(${seenByVisibility}`,
    `OR ${alias}.id = :${viewerId}`,
    `OR ${alias}.id IN (SELECT ${key}_mo.org_id FROM org_user ${key}_mo WHERE ${key}_mo.uid = :${viewerId})`,
    `OR (${alias}.type = ${UserType.Individual} AND (`,
    `${alias}.id IN (SELECT ${key}_f.user_id FROM follow ${key}_f WHERE ${key}_f.follow_id = :${viewerId})`,
    `OR ${alias}.id IN (SELECT ${key}_co.uid FROM org_user ${key}_co`,
    `INNER JOIN org_user ${key}_vo ON ${key}_vo.org_id = ${key}_co.org_id WHERE ${key}_vo.uid = :${viewerId}))))`,
  ].join(' ');
  return { sql, parameters: { [viewerId]: user.id } };
}

/** The list visibility rule as a store: the condition for queries, and a single-user check. */
@Injectable()
export class UserListVisibility {
  constructor(private readonly dataSource: DataSource) {}

  condition(viewer: AuthContext, alias: string): SqlCondition {
    return visibleUsersCondition(viewer, alias);
  }

  /**
   * `isVisible` for a row already read: answered from its visibility where the rule decides on that alone
   * (anonymous and public-only callers, admins, public rows, limited rows for unrestricted callers, oneself),
   * and with the query otherwise (follows and shared organisations).
   */
  async isVisibleUser(viewer: AuthContext, target: UserEntity): Promise<boolean> {
    const user = viewer.user;
    if (!user || viewer.publicOnly) return target.visibility === Visibility.Public;
    if (viewer.isAdmin || target.id === user.id || target.visibility === Visibility.Public) return true;
    if (target.visibility === Visibility.Limited && !user.isRestricted) return true;
    return this.isVisible(viewer, target.id);
  }

  /** Would `viewer` see user (or organisation) `id` in a list? Used before acting on a user by name. */
  async isVisible(viewer: AuthContext, id: number): Promise<boolean> {
    const visible = visibleUsersCondition(viewer, 'u');
    const count = await this.dataSource
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .where('u.id = :id', { id })
      .andWhere(visible.sql, visible.parameters)
      .getCount();
    return count > 0;
  }
}
