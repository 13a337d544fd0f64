import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { Page, PageQuery } from '../common/paging';
import { UserEntity, UserType } from './user.entity';
import { UserSearchGramEntity, UserSearchTextEntity } from './user-search.entities';
import { containsPattern, gramLookup, LIKE_ESCAPE, lowerForSearch, searchGrams } from './user-search.grams';
import { visibleUsersCondition } from './user-visibility.condition';

/** How far rarestGram counts a trigram's users: beyond this, a trigram is simply common. */
const RAREST_PROBE = 5000;

/** Rows per INSERT statement: well under SQLite's bound-parameter limit. */
const INSERT_BATCH = 400;

/** The searchable fields of a user, as stored in the index. */
export function searchFields(user: Pick<UserEntity, 'lowerName' | 'fullName' | 'email'>): string[] {
  return [user.lowerName ?? '', user.fullName ?? '', user.email ?? ''];
}

/**
 * (Re)writes the search index rows of an individual user inside the caller's transaction. UserStore calls
 * it on every insert and on every update that touches a searched field, so the index can never lag behind
 * the user table. Organisations are never searched and get no rows.
 */
export async function indexUserForSearch(tx: EntityManager, user: UserEntity): Promise<void> {
  await removeUserFromSearch(tx, user.id);
  if ((user.type ?? UserType.Individual) !== UserType.Individual) return;
  const [, fullName, email] = searchFields(user);
  await tx.getRepository(UserSearchTextEntity).insert({
    userId: user.id,
    fullName: lowerForSearch(fullName),
    email: lowerForSearch(email),
  });
  const rows = searchGrams(searchFields(user)).map((gram) => ({ gram, userId: user.id }));
  for (let start = 0; start < rows.length; start += INSERT_BATCH) {
    await tx
      .createQueryBuilder()
      .insert()
      .into(UserSearchGramEntity)
      .values(rows.slice(start, start + INSERT_BATCH))
      .updateEntity(false)
      .execute();
  }
}

export async function removeUserFromSearch(tx: EntityManager, userId: number): Promise<void> {
  await tx.getRepository(UserSearchGramEntity).delete({ userId });
  await tx.getRepository(UserSearchTextEntity).delete({ userId });
}

export type UserSearchSort = 'oldest' | 'newest' | 'alphabetically' | 'reversealphabetically' | 'recentupdate' | 'leastupdate';

export interface UserSearchQuery {
  /** Trimmed; empty means no keyword. */
  keyword: string;
  /** Restricts the result to this id when positive. */
  uid: number;
  sort: UserSearchSort;
  /** Only the user with exactly this login (case-insensitive), when not empty. */
  loginName?: string;
}

const ORDER: Record<UserSearchSort, [string, 'ASC' | 'DESC'][]> = {
  oldest: [
    ['u.createdUnix', 'ASC'],
    ['u.id', 'ASC'],
  ],
  newest: [
    ['u.createdUnix', 'DESC'],
    ['u.id', 'DESC'],
  ],
  alphabetically: [['u.lowerName', 'ASC']],
  reversealphabetically: [['u.lowerName', 'DESC']],
  recentupdate: [
    ['u.updatedUnix', 'DESC'],
    ['u.id', 'DESC'],
  ],
  leastupdate: [
    ['u.updatedUnix', 'ASC'],
    ['u.id', 'ASC'],
  ],
};

/** The only door to the user search index tables, and the search query over users. */
@Injectable()
export class UserSearchStore {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Individual users matching the query that `viewer` may see, one page of them and the total, both in SQL.
   * The keyword narrows the candidates through the gram index, then the exact case-insensitive substring test
   * runs on those candidates only: login and full name always, e-mail where the viewer may see the address
   * (docs/visibility.md: signed in, and the address is not hidden or the viewer is that user or a site admin).
   */
  async search(viewer: AuthContext, query: UserSearchQuery, page: PageQuery): Promise<Page<UserEntity>> {
    const visible = visibleUsersCondition(viewer, 'u');
    const builder = this.dataSource.getRepository(UserEntity).createQueryBuilder('u').where(visible.sql, visible.parameters);
    if (query.uid > 0) builder.andWhere('u.id = :uid', { uid: query.uid });
    if (query.loginName) builder.andWhere('u.lower_name = :loginName', { loginName: query.loginName.toLowerCase() });
    // With a keyword the candidates come from the index, which holds individuals only, so no type condition:
    // an equality on the indexed `type` column makes SQLite's planner (which has no statistics) walk every
    // individual and probe the candidates, instead of looking the few candidates up by id.
    if (query.keyword !== '') {
      if (!(await this.matchKeyword(builder, viewer, query.keyword))) return { items: [], total: 0 };
    } else {
      builder.andWhere('u.type = :individual', { individual: UserType.Individual });
    }
    for (const [index, [column, direction]] of ORDER[query.sort].entries()) {
      if (index === 0) builder.orderBy(column, direction);
      else builder.addOrderBy(column, direction);
    }
    const [items, total] = await builder.offset(page.offset).limit(page.limit).getManyAndCount();
    return { items, total };
  }

  /** Adds the keyword conditions; false when the index already shows that nothing can match. */
  private async matchKeyword(builder: SelectQueryBuilder<UserEntity>, viewer: AuthContext, keyword: string): Promise<boolean> {
    const lookup = gramLookup(keyword);
    if (lookup.kind === 'prefix') {
      builder.andWhere('u.id IN (SELECT sg.user_id FROM user_search_gram sg WHERE sg.gram >= :gramLow AND sg.gram < :gramHigh)', {
        gramLow: lookup.low,
        gramHigh: lookup.high,
      });
    } else {
      const gram = await this.rarestGram(lookup.grams);
      if (gram === undefined) return false;
      builder.andWhere('u.id IN (SELECT sg.user_id FROM user_search_gram sg WHERE sg.gram = :gram)', { gram });
    }
    builder.innerJoin(UserSearchTextEntity, 'st', 'st.user_id = u.id');
    const like = `LIKE :pattern ESCAPE '${LIKE_ESCAPE}'`;
    const emailSearchable = !viewer.user ? '1 = 0' : viewer.isAdmin ? '1 = 1' : '(u.keep_email_private = 0 OR u.id = :searcher)';
    builder.andWhere(`(u.lower_name ${like} OR st.full_name ${like} OR (${emailSearchable} AND st.email ${like}))`, {
      pattern: containsPattern(keyword),
      searcher: viewer.user?.id ?? 0,
    });
    return true;
  }

  /**
   * The query trigram with the fewest users, counted up to RAREST_PROBE each (bounded index range scans), or
   * undefined when one of them has no user at all (then nothing matches). Every match has all the query's
   * trigrams, so the users of the rarest one are a complete candidate set, and the smallest: the work of a
   * search is then bounded by its least common trigram, not by the sum of all of them. A multi-gram
   * intersection would narrow a little more but costs a GROUP BY over every posting list, which dominates
   * for common trigrams; the exact LIKE on the candidates does the rest.
   */
  private async rarestGram(grams: string[]): Promise<string | undefined> {
    let rarest: string | undefined;
    let fewest = Infinity;
    for (const gram of grams) {
      const [row] = await this.dataSource.query('SELECT COUNT(*) AS users FROM (SELECT 1 FROM user_search_gram WHERE gram = ? LIMIT ?) probe', [
        gram,
        RAREST_PROBE,
      ]);
      const users = Number(row?.users ?? 0);
      if (users === 0) return undefined;
      if (users < fewest) [rarest, fewest] = [gram, users];
    }
    return rarest;
  }
}
