import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, SelectQueryBuilder } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { changeRows } from '../database/transactions';
import { UserEntity, Visibility } from '../users/user.entity';
import type { VisibilityScope } from './repository-access';
import { RepositoryEntity } from './repository.entity';
import { StarEntity } from './star.entity';
import { WatchEntity } from './watch.entity';

/** A sort key of repository lists; `owner` sorts by the owner's name. */
export type RepositorySortKey = 'name' | 'owner' | 'created' | 'updated' | 'size' | 'id' | 'stars';

export interface RepositorySort {
  key: RepositorySortKey;
  descending?: boolean;
}

export interface RepositoryCriteria {
  scope: VisibilityScope;
  /** Further narrows to public repositories of public owners (search with `private=false`). */
  publicOwnersOnly?: boolean;
  /** Any of these owners. */
  ownerIds?: number[];
  /** Case-insensitive substrings; a repository matches any of them. */
  keyword?: {
    alternatives: string[];
    includeDescription: boolean;
    /** `owner/name` form: owner name contains the first, repository name the second. */
    ownerAndName?: [string, string];
  };
  starredBy?: number;
  isPrivate?: boolean;
  isTemplate?: boolean;
  isMirror?: boolean;
  /** Listed first: repositories of this owner (search `priority_owner_id`). */
  priorityOwnerId?: number;
  /** Listed first: repositories whose owner is exactly this name (the owner part of `owner/name`). */
  priorityOwnerName?: string;
  sort: RepositorySort[];
}

const SORT_COLUMNS: Record<RepositorySortKey, string> = {
  name: 'r.lower_name',
  owner: 'o.lower_name',
  created: 'r.created_unix',
  updated: 'r.updated_unix',
  size: 'r.git_size',
  id: 'r.id',
  stars: 'r.num_stars',
};

/** The only door to the repository table. */
@Injectable()
export class RepositoryStore {
  constructor(private readonly dataSource: DataSource) {}

  private repositories(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(RepositoryEntity);
  }

  findById(id: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.repositories(tx).findOneBy({ id });
  }

  /** Case-insensitive lookup by owner and name. */
  findByOwnerAndName(ownerId: number, name: string, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.repositories(tx).findOneBy({ ownerId, lowerName: name.toLowerCase() });
  }

  insert(tx: EntityManager, repository: Partial<RepositoryEntity>): Promise<RepositoryEntity> {
    return tx.getRepository(RepositoryEntity).save(tx.getRepository(RepositoryEntity).create(repository));
  }

  async update(tx: EntityManager, id: number, changes: Partial<RepositoryEntity>): Promise<void> {
    if (Object.keys(changes).length > 0) await tx.getRepository(RepositoryEntity).update({ id }, changes);
  }

  /**
   * Records a repository's git size in bytes (behaviour 11.1), which quota usage sums: called after creation,
   * and by every path that changes the repository on disk (push, migration, mirror sync). False when the
   * repository is gone.
   */
  async recordGitSize(repoId: number, bytes: number): Promise<boolean> {
    const result = await this.repositories().update({ id: repoId }, { gitSize: Math.max(0, Math.floor(bytes)) });
    return (result.affected ?? 0) > 0;
  }

  /** True when the row was really there (a concurrent deletion may have won). */
  async delete(tx: EntityManager, id: number): Promise<boolean> {
    const result = await tx.getRepository(RepositoryEntity).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  /**
   * Adds `delta` to a stored counter in SQL, inside the caller's transaction; `updated_unix` is not touched.
   * False when the repository is gone (deleted concurrently).
   */
  async addToCounter(tx: EntityManager, id: number, counter: 'numStars' | 'numWatches', delta: number): Promise<boolean> {
    const column = counter === 'numStars' ? 'num_stars' : 'num_watches';
    return (await changeRows(tx, `UPDATE repository SET ${column} = ${column} + ? WHERE id = ?`, [delta, id])) > 0;
  }

  /** One page of the repositories matching `criteria`, filtered and counted in SQL. */
  async list(criteria: RepositoryCriteria, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const query = this.filtered(criteria);
    const total = await query.getCount();
    if (criteria.priorityOwnerId !== undefined) {
      query.addOrderBy(`CASE WHEN r.owner_id = ${Number(criteria.priorityOwnerId)} THEN 0 ELSE 1 END`, 'ASC');
    } else if (criteria.priorityOwnerName !== undefined) {
      query.setParameter('priorityOwner', criteria.priorityOwnerName.toLowerCase()).addOrderBy('CASE WHEN o.lower_name = :priorityOwner THEN 0 ELSE 1 END', 'ASC');
    }
    for (const sort of criteria.sort) query.addOrderBy(SORT_COLUMNS[sort.key], sort.descending ? 'DESC' : 'ASC');
    // Ties break by id, so that pages never overlap (TypeORM keys ORDER BY terms by column: add it only once).
    if (!criteria.sort.some((sort) => sort.key === 'id')) query.addOrderBy('r.id', 'ASC');
    // offset/limit, not skip/take: the owner join is one-to-one, so plain LIMIT pages correctly.
    const items = await query.offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  /** Repositories `uid` starred, oldest star first, as the viewer may see them. */
  listStarredBy(uid: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    return this.listJoined(StarEntity, uid, scope, page);
  }

  /** Repositories `uid` watches, oldest watch first, as the viewer may see them. */
  listWatchedBy(uid: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    return this.listJoined(WatchEntity, uid, scope, page);
  }

  private async listJoined(relation: typeof StarEntity | typeof WatchEntity, uid: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const query = this.base(scope).innerJoin(relation, 'rel', 'rel.repo_id = r.id AND rel.uid = :relationUid', { relationUid: uid });
    const total = await query.getCount();
    const items = await query.orderBy('rel.id', 'ASC').offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  private base(scope: VisibilityScope): SelectQueryBuilder<RepositoryEntity> {
    const query = this.repositories().createQueryBuilder('r').innerJoin(UserEntity, 'o', 'o.id = r.owner_id');
    applyScope(query, scope);
    return query;
  }

  private filtered(criteria: RepositoryCriteria): SelectQueryBuilder<RepositoryEntity> {
    const query = this.base(criteria.scope);
    if (criteria.publicOwnersOnly) applyScope(query, { kind: 'public' });
    if (criteria.ownerIds !== undefined) query.andWhere('r.owner_id IN (:...ownerIds)', { ownerIds: nonEmpty(criteria.ownerIds) });
    if (criteria.keyword) {
      const { alternatives, includeDescription, ownerAndName } = criteria.keyword;
      const terms: string[] = [];
      alternatives.forEach((alternative, index) => {
        query.setParameter(`keyword${index}`, likePattern(alternative));
        terms.push(`r.lower_name LIKE :keyword${index} ESCAPE '!'`);
        if (includeDescription) terms.push(`LOWER(r.description) LIKE :keyword${index} ESCAPE '!'`);
      });
      if (ownerAndName) {
        query.setParameters({ ownerPart: likePattern(ownerAndName[0]), namePart: likePattern(ownerAndName[1]) });
        terms.push(`(o.lower_name LIKE :ownerPart ESCAPE '!' AND r.lower_name LIKE :namePart ESCAPE '!')`);
      }
      query.andWhere(`(${terms.join(' OR ')})`);
    }
    if (criteria.starredBy !== undefined) {
      query.andWhere('r.id IN (SELECT s.repo_id FROM star s WHERE s.uid = :starredBy)', { starredBy: criteria.starredBy });
    }
    if (criteria.isPrivate !== undefined) query.andWhere('r.is_private = :isPrivate', { isPrivate: flag(criteria.isPrivate) });
    if (criteria.isTemplate !== undefined) query.andWhere('r.is_template = :isTemplate', { isTemplate: flag(criteria.isTemplate) });
    if (criteria.isMirror !== undefined) query.andWhere('r.is_mirror = :isMirror', { isMirror: flag(criteria.isMirror) });
    return query;
  }
}

/**
 * The SQL form of repository visibility (repository-access.ts `isReadable`), so that totals and pages count
 * only what the viewer may see.
 */
function applyScope(query: SelectQueryBuilder<RepositoryEntity>, scope: VisibilityScope): void {
  switch (scope.kind) {
    case 'everything':
      return;
    case 'public':
      query.andWhere('r.is_private = 0 AND o.visibility = :publicOwner', { publicOwner: Visibility.Public });
      return;
    case 'signed-in': {
      const terms = ['r.owner_id IN (:...scopeOwnIds)'];
      query.setParameter('scopeOwnIds', nonEmpty(scope.ownIds));
      if (scope.memberOrgIds.length > 0) {
        terms.push('(r.is_private = 0 AND r.owner_id IN (:...scopeMemberOrgIds))');
        query.setParameter('scopeMemberOrgIds', scope.memberOrgIds);
      }
      if (scope.seesOtherOwners) {
        terms.push('(r.is_private = 0 AND o.visibility IN (:...scopeSeenVisibilities))');
        query.setParameter('scopeSeenVisibilities', [Visibility.Public, Visibility.Limited]);
      }
      query.andWhere(`(${terms.join(' OR ')})`);
      return;
    }
  }
}

/** `IN ()` is not SQL: an id no row has stands in for the empty list. */
function nonEmpty(ids: number[]): number[] {
  return ids.length > 0 ? ids : [-1];
}

/** Booleans are bound as 0/1, which both databases store. */
function flag(value: boolean): number {
  return value ? 1 : 0;
}

/** A LIKE pattern for "contains", with `!` escaping the pattern characters of the input. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (character) => `!${character}`)}%`;
}
