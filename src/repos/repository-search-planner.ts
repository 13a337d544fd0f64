import { DataSource, SelectQueryBuilder } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { likePattern } from '../database/like-pattern';
import { UserEntity, Visibility } from '../users/user.entity';
import type { VisibilityScope } from './repository-access';
import { RepositoryCountCache } from './repository-count-cache';
import { candidateLookup, searchTerms } from './repository-search';
import { RepositoryEntity } from './repository.entity';

// One cohesive thing, kept whole though long: the search planner (which index narrows a keyword search, when a
// page walks the name index instead, which totals are kept), kept apart from RepositoryStore's plain reads and writes.

/** A sort key of repository lists; `owner` sorts by the owner's name. */
export type RepositorySortKey = 'name' | 'owner' | 'created' | 'updated' | 'size' | 'gitSize' | 'lfsSize' | 'id' | 'stars';

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
  /** With `ownerIds`: also the repositories this user collaborates on or reaches through a team's link. */
  orGrantedTo?: number;
  /** Case-insensitive substrings; a repository matches any of them. */
  keyword?: {
    alternatives: string[];
    includeDescription: boolean;
    /** `owner/name` form: owner name contains the first, repository name the second. */
    ownerAndName?: [string, string];
  };
  starredBy?: number;
  /** Repositories carrying any of these topics (exact names, through the topic index). */
  topics?: string[];
  isPrivate?: boolean;
  isTemplate?: boolean;
  isMirror?: boolean;
  /** Forks only (true) or no forks (false). */
  isFork?: boolean;
  archived?: boolean;
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
  // A repository's size is its git directory and its LFS objects together.
  size: '(r.git_size + r.lfs_size)',
  gitSize: 'r.git_size',
  lfsSize: 'r.lfs_size',
  id: 'r.id',
  stars: 'r.num_stars',
};

/** How far rarestGram counts a trigram's repositories: beyond this, a trigram is simply common. */
const RAREST_PROBE = 5000;

/** A term with more trigrams than this probes an evenly spread subset of them for the rarest. */
const MAX_PROBED_GRAMS = 8;

/**
 * A keyword page walks the name index when total² ≥ WALK_FACTOR × (offset + limit) × table size: testing a
 * repository met on the walk costs about a tenth of fetching and sorting a candidate (measured on both
 * databases).
 */
const WALK_FACTOR = 0.1;

/** Keyword search totals kept per process. */
const COUNT_CACHE_KEYS = 1000;

/**
 * Plans and runs RepositoryStore's searches: the exact SQL conditions of the criteria, narrowed through the search
 * index (repository-search.ts) or answered by a walk of the name index, with keyword totals kept per search
 * generation. RepositoryStore extends it: the store stays the one door to the repository table.
 */
export abstract class RepositorySearchPlanner {
  /** Exact totals of keyword searches, per search generation (repository-count-cache.ts). */
  private readonly counts = new RepositoryCountCache(COUNT_CACHE_KEYS);

  protected constructor(protected readonly dataSource: DataSource) {}

  /**
   * One page of the repositories matching `criteria`, filtered and counted in SQL: one count (none when a
   * keyword search's total is stored for the current search generation) and one page query. A keyword narrows
   * through the search index (repository-search.ts); the exact conditions stay and decide, so totals and pages
   * are those of a plain scan.
   */
  async list(criteria: RepositoryCriteria, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const exact = this.filtered(criteria);
    // The query narrowed by the search index, built once and only when needed (a stored total and a walk of
    // the name index need no candidates).
    let narrowed: Promise<SelectQueryBuilder<RepositoryEntity> | 'nothing'> | undefined;
    const indexed = () => (narrowed ??= this.narrowed(exact, criteria));
    const count = async () => {
      const query = await indexed();
      if (query === 'nothing') return 0;
      // COUNT(*), not TypeORM's COUNT(DISTINCT id): every join here is one row per repository.
      const counted = await query.clone().select('COUNT(*)', 'total').getRawOne<{ total: number | string }>();
      return Number(counted?.total ?? 0);
    };
    const key = countCacheKey(criteria);
    const total = key === undefined ? await count() : await this.counts.get(key, await this.searchGeneration(), count);
    if (total === 0 || page.offset >= total) return { items: [], total };
    let query = exact;
    if (criteria.keyword) {
      if (await this.walkByName(criteria, page, total)) query = walkingNames(exact);
      else query = (await indexed()) as SelectQueryBuilder<RepositoryEntity>;
    }
    if (criteria.priorityOwnerId !== undefined) {
      query.addOrderBy(`CASE WHEN r.owner_id = ${Number(criteria.priorityOwnerId)} THEN 0 ELSE 1 END`, 'ASC');
    } else if (criteria.priorityOwnerName !== undefined) {
      query
        .setParameter('priorityOwner', criteria.priorityOwnerName.toLowerCase())
        .addOrderBy('CASE WHEN o.lower_name = :priorityOwner THEN 0 ELSE 1 END', 'ASC');
    }
    for (const sort of criteria.sort) query.addOrderBy(SORT_COLUMNS[sort.key], sort.descending ? 'DESC' : 'ASC');
    // Ties break by id, so that pages never overlap (TypeORM keys ORDER BY terms by column: add it only once).
    if (!criteria.sort.some((sort) => sort.key === 'id')) query.addOrderBy('r.id', 'ASC');
    // offset/limit, not skip/take: the owner join is one-to-one, so plain LIMIT pages correctly.
    const items = await query.offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  /** `exact` narrowed by the search index ('nothing' when the index shows that nothing matches). */
  private async narrowed(exact: SelectQueryBuilder<RepositoryEntity>, criteria: RepositoryCriteria): Promise<SelectQueryBuilder<RepositoryEntity> | 'nothing'> {
    if (!criteria.keyword) return exact;
    const query = exact.clone();
    const narrowed = await this.narrowByIndex(query, criteria.keyword);
    if (narrowed === 'nothing') return 'nothing';
    // MariaDB otherwise drives the join from the owners; the candidates are looked up by primary key.
    if (narrowed === 'narrowed') query.useIndex('PRIMARY');
    return query;
  }

  /** The search generation (migration 1764500100000): raised by every write a search total depends on. */
  private async searchGeneration(): Promise<number> {
    const [row] = await this.dataSource.query('SELECT generation FROM repository_search_generation WHERE id = 1');
    return Number(row?.generation ?? 0);
  }

  /**
   * Whether a keyword page is cheaper found by walking the name index in order and testing each repository
   * (about (offset + limit) * table size / total rows) than by sorting all `total` candidates: so for
   * common keywords, in the default order (name ascending, id breaking ties, as the index holds them).
   */
  private async walkByName(criteria: RepositoryCriteria, page: PageQuery, total: number): Promise<boolean> {
    const byName = criteria.sort.length === 1 && criteria.sort[0].key === 'name' && !criteria.sort[0].descending;
    if (!byName || criteria.priorityOwnerId !== undefined || criteria.priorityOwnerName !== undefined) return false;
    const [row] = await this.dataSource.query('SELECT MAX(id) AS last FROM repository');
    const tableSize = Number(row?.last ?? 0);
    return total * total >= WALK_FACTOR * (page.offset + page.limit) * tableSize;
  }

  /**
   * Adds the search index's candidate condition for a keyword: 'scan' when a term is too short for the index
   * (nothing added), 'nothing' when the index already shows that no repository can match.
   */
  private async narrowByIndex(
    query: SelectQueryBuilder<RepositoryEntity>,
    keyword: NonNullable<RepositoryCriteria['keyword']>,
  ): Promise<'narrowed' | 'scan' | 'nothing'> {
    const terms = searchTerms(keyword.alternatives, keyword.includeDescription, keyword.ownerAndName);
    const lookup = candidateLookup(terms, this.dataSource.options.type === 'better-sqlite3' ? 'sqlite' : 'mysql');
    if (lookup.kind === 'fts') {
      let candidates = 'SELECT rowid FROM repository_name_search WHERE repository_name_search MATCH :searchNames';
      if (lookup.descriptions !== undefined) {
        candidates += ' UNION SELECT rowid FROM repository_description_search WHERE repository_description_search MATCH :searchDescriptions';
      }
      query.andWhere(`r.id IN (${candidates})`, { searchNames: lookup.names, searchDescriptions: lookup.descriptions });
      return 'narrowed';
    } else if (lookup.kind === 'grams') {
      const conditions: string[] = [];
      for (const [index, term] of lookup.terms.entries()) {
        const gram = await this.rarestGram(term.grams, term.sources);
        // A term with a trigram no repository has matches nothing: it needs no candidates.
        if (gram === undefined) continue;
        conditions.push(`(rg.source IN (:...searchSources${index}) AND rg.gram = :searchGram${index})`);
        query.setParameters({ [`searchSources${index}`]: term.sources, [`searchGram${index}`]: gram });
      }
      if (conditions.length === 0) return 'nothing';
      query.andWhere(`r.id IN (SELECT rg.repo_id FROM repository_search_gram rg WHERE ${conditions.join(' OR ')})`);
      return 'narrowed';
    }
    return 'scan';
  }

  /**
   * The trigram (of a term) held by the fewest repositories in `sources`, counted up to RAREST_PROBE each
   * (bounded index range scans), or undefined when one of them is held by none (then the term matches
   * nothing). Every match of the term holds all its trigrams, so the holders of the rarest are a complete
   * candidate set, and the smallest this index gives.
   */
  private async rarestGram(grams: string[], sources: number[]): Promise<string | undefined> {
    let rarest: string | undefined;
    let fewest = Infinity;
    for (const gram of spread(grams, MAX_PROBED_GRAMS)) {
      const [row] = await this.dataSource.query(
        `SELECT COUNT(*) AS holders FROM (SELECT 1 FROM repository_search_gram WHERE source IN (${sources.map(() => '?').join(', ')}) AND gram = ? LIMIT ?) probe`,
        [...sources, gram, RAREST_PROBE],
      );
      const holders = Number(row?.holders ?? 0);
      if (holders === 0) return undefined;
      if (holders < fewest) [rarest, fewest] = [gram, holders];
    }
    return rarest;
  }

  /** Repositories joined with their owners (`r`, `o`), narrowed to what `scope` may see. */
  protected scoped(scope: VisibilityScope): SelectQueryBuilder<RepositoryEntity> {
    const query = this.dataSource.manager.getRepository(RepositoryEntity).createQueryBuilder('r').innerJoin(UserEntity, 'o', 'o.id = r.owner_id');
    applyScope(query, scope);
    return query;
  }

  private filtered(criteria: RepositoryCriteria): SelectQueryBuilder<RepositoryEntity> {
    const query = this.scoped(criteria.scope);
    if (criteria.publicOwnersOnly) applyScope(query, { kind: 'public' });
    // One owner is an equality, so that the owner_id index serves ORDER BY id without a sort.
    if (criteria.ownerIds !== undefined && criteria.orGrantedTo !== undefined) {
      query.andWhere(
        '(r.owner_id IN (:...ownerIds) OR r.id IN (SELECT c.repo_id FROM collaboration c WHERE c.user_id = :grantedTo) ' +
          'OR r.id IN (SELECT tr.repo_id FROM team_user tu JOIN team_repo tr ON tr.team_id = tu.team_id WHERE tu.uid = :grantedTo))',
        { ownerIds: nonEmpty(criteria.ownerIds), grantedTo: criteria.orGrantedTo },
      );
    } else if (criteria.ownerIds?.length === 1) query.andWhere('r.owner_id = :ownerId', { ownerId: criteria.ownerIds[0] });
    else if (criteria.ownerIds !== undefined) query.andWhere('r.owner_id IN (:...ownerIds)', { ownerIds: nonEmpty(criteria.ownerIds) });
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
    if (criteria.topics !== undefined) {
      query.andWhere('r.id IN (SELECT rt.repo_id FROM repo_topic rt INNER JOIN topic t ON t.id = rt.topic_id WHERE t.name IN (:...topicNames))', {
        topicNames: criteria.topics.length > 0 ? criteria.topics : [''],
      });
    }
    if (criteria.archived !== undefined) query.andWhere('r.is_archived = :isArchived', { isArchived: flag(criteria.archived) });
    if (criteria.isPrivate !== undefined) query.andWhere('r.is_private = :isPrivate', { isPrivate: flag(criteria.isPrivate) });
    if (criteria.isTemplate !== undefined) query.andWhere('r.is_template = :isTemplate', { isTemplate: flag(criteria.isTemplate) });
    if (criteria.isMirror !== undefined) query.andWhere('r.is_mirror = :isMirror', { isMirror: flag(criteria.isMirror) });
    if (criteria.isFork !== undefined) query.andWhere('r.is_fork = :isFork', { isFork: flag(criteria.isFork) });
    return query;
  }
}

/**
 * `query` answered by walking the name index in order (RepositoryStore.walkByName). The always-true lower bound
 * makes the walk a range scan instead of a full index scan: MariaDB tests conditions on an index's columns
 * against its entries (index condition pushdown, here the keyword's `LIKE` on `lower_name`) only in range scans,
 * so a repository whose name does not match is passed over without reading its row. MariaDB, 100 000
 * repositories, a word in 1% of the names: 7 620 rows read for a page of 10 before, 16 after (6.1 → 0.9 ms);
 * SQLite's plan is the same walk either way.
 */
function walkingNames(query: SelectQueryBuilder<RepositoryEntity>): SelectQueryBuilder<RepositoryEntity> {
  return query.useIndex('IDX_repository_lower_name').andWhere("r.lower_name >= ''");
}

/**
 * The SQL form of repository visibility (repository-access.ts `visibilityScope`), so that totals and pages count
 * only what the viewer may see.
 */
export function applyScope(query: SelectQueryBuilder<any>, scope: VisibilityScope): void {
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
      if (scope.viaGrants) {
        // Collaborations and team links, each on an index led by the caller's id.
        terms.push('r.id IN (SELECT c.repo_id FROM collaboration c WHERE c.user_id = :scopeUid)');
        terms.push('r.id IN (SELECT tr.repo_id FROM team_user tu JOIN team_repo tr ON tr.team_id = tu.team_id WHERE tu.uid = :scopeUid)');
        query.setParameter('scopeUid', scope.uid);
      }
      query.andWhere(`(${terms.join(' OR ')})`);
      return;
    }
  }
}

/**
 * The key of a keyword search's total: every filter of the criteria (not the order or the page), or undefined
 * when the total is not kept: no keyword (cheap by index already), or a filter on stars (not in the
 * generation).
 */
function countCacheKey(criteria: RepositoryCriteria): string | undefined {
  // Stars, topics and the archived flag do not raise the search generation: totals filtered on them are not kept.
  if (!criteria.keyword || criteria.starredBy !== undefined || criteria.topics !== undefined || criteria.archived !== undefined) return undefined;
  // Grants (collaborations, team memberships and links) raise the generation too (migration 1795716000000).
  const { scope, publicOwnersOnly, ownerIds, orGrantedTo, keyword, isPrivate, isTemplate, isMirror, isFork } = criteria;
  return JSON.stringify([
    scope,
    publicOwnersOnly ?? false,
    ownerIds ?? null,
    orGrantedTo ?? null,
    keyword,
    isPrivate ?? null,
    isTemplate ?? null,
    isMirror ?? null,
    isFork ?? null,
  ]);
}

/** At most `max` items, evenly spread and always keeping the first and the last. */
function spread<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  const picked: T[] = [];
  for (let i = 0; i < max; i++) picked.push(items[Math.round((i * (items.length - 1)) / (max - 1))]);
  return [...new Set(picked)];
}

/** `IN ()` is not SQL: an id no row has stands in for the empty list. */
function nonEmpty(ids: number[]): number[] {
  return ids.length > 0 ? ids : [-1];
}

/** Booleans are bound as 0/1, which both databases store. */
function flag(value: boolean): number {
  return value ? 1 : 0;
}
