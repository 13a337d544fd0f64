import { Injectable } from '@nestjs/common';
import type { AccessGrants } from '../access/access-policy';
import { grantsAlongsideRepository, grantsInRows } from '../access/access.store';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { RowSet, valueOf } from '../database/bound-statements';
import { inList, RowReader } from '../database/row-reader';
import { UnsentReads } from '../database/unsent-reads';
import { changeRows, Transactions } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import type { VisibilityScope } from './repository-access';
import { RepositorySearchPlanner } from './repository-search-planner';
import { RepositoryEntity } from './repository.entity';
import { StarEntity } from './star.entity';
import { WatchEntity } from './watch.entity';
import { ForkEntity } from './fork.entity';

export type { RepositoryCriteria, RepositorySort, RepositorySortKey } from './repository-search-planner';

/** The counters of a repository row that move by SQL arithmetic. */
export type RepositoryCounter = 'numStars' | 'numWatches' | 'numIssues' | 'numClosedIssues' | 'lfsSize' | 'numPulls' | 'numClosedPulls';

const COUNTER_COLUMNS: Record<RepositoryCounter, string> = {
  numStars: 'num_stars',
  numWatches: 'num_watches',
  numIssues: 'num_issues',
  numClosedIssues: 'num_closed_issues',
  lfsSize: 'lfs_size',
  numPulls: 'num_pulls',
  numClosedPulls: 'num_closed_pulls',
};

/** The only door to the repository table and its search index (the searches: repository-search-planner.ts). */
@Injectable()
export class RepositoryStore extends RepositorySearchPlanner {
  private readonly rows: RowReader<RepositoryEntity>;
  private readonly byId: string;
  private readonly byOwnerAndName: string;
  private readonly ownerRows: RowReader<UserEntity>;
  private readonly withOwnerByNames: string;
  /** withOwnerByNames with a caller's grants on the repository (access.store.ts grantsAlongsideRepository). */
  private readonly withOwnerAndGrantsByNames: string;
  /** Lookups by names asked together (every request on `{owner}/{repo}` makes one), sent once. */
  private readonly lookups = new UnsentReads<RowSet>();
  /** One owner's repositories (all, or the public ones): the page with its total, and the count alone. */
  private readonly ofOwner: Record<'all' | 'public', { count: string; page: string }>;

  constructor(
    dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    super(dataSource);
    this.rows = new RowReader(dataSource, RepositoryEntity);
    this.ownerRows = new RowReader(dataSource, UserEntity);
    this.byId = `${this.rows.select()}WHERE id = ?`;
    this.byOwnerAndName = `${this.rows.select()}WHERE owner_id = ? AND lower_name = ?`;
    const owners = dataSource.driver.escape(dataSource.getMetadata(UserEntity).tableName);
    this.withOwnerByNames =
      `SELECT ${this.rows.columnList('r')}, ${this.ownerRows.columnList('o')} FROM ${owners} o ` +
      'JOIN repository r ON r.owner_id = o.id AND r.lower_name = ? WHERE o.lower_name = ?';
    const grants = grantsAlongsideRepository(dataSource);
    this.withOwnerAndGrantsByNames =
      `SELECT ${this.rows.columnList('r')}, ${this.ownerRows.columnList('o')}, ${grants.columns} FROM ${owners} o ` +
      `JOIN repository r ON r.owner_id = o.id ${grants.joins} WHERE o.lower_name = ? AND r.lower_name = ?`;
    // The page carries the owner's total (an uncorrelated subquery, evaluated once): one round trip instead of
    // two, unless the page is empty (past the end, or no repositories), when the total is counted alone.
    const ofOwner = (where: string) => ({
      count: `SELECT COUNT(*) AS total FROM repository ${where}`,
      page: `SELECT ${this.rows.columnList()}, (SELECT COUNT(*) FROM repository ${where}) AS page_total FROM repository ${where} ORDER BY id LIMIT ? OFFSET ?`,
    });
    this.ofOwner = { all: ofOwner('WHERE owner_id = ?'), public: ofOwner('WHERE owner_id = ? AND is_private = 0') };
  }

  private repositories(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(RepositoryEntity);
  }

  findById(id: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.rows.one(this.byId, [id], tx);
  }

  /** Case-insensitive lookup by owner and name (the unique index on both). */
  findByOwnerAndName(ownerId: number, name: string, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.rows.one(this.byOwnerAndName, [ownerId, name.toLowerCase()], tx);
  }

  /**
   * A repository and its owner by their names (case-insensitive), in one read of two unique indexes; with
   * `grantsOf`, that user's grants on it in the same read (null: none read).
   */
  async findWithOwnerByNames(
    ownerName: string,
    repoName: string,
    grantsOf: number | null = null,
  ): Promise<{ repo: RepositoryEntity; owner: UserEntity; grants: AccessGrants | null } | null> {
    const owner = ownerName.toLowerCase();
    const repo = repoName.toLowerCase();
    const set = await this.lookups.read(`${grantsOf ?? ''}/${owner}/${repo}`, () =>
      grantsOf === null
        ? this.rows.rows(this.withOwnerByNames, [repo, owner])
        : this.rows.rows(this.withOwnerAndGrantsByNames, [grantsOf, grantsOf, grantsOf, owner, repo]),
    );
    if (set.rows.length === 0) return null;
    return { repo: this.rows.hydrate(set, 0, 'r'), owner: this.ownerRows.hydrate(set, 0, 'o'), grants: grantsOf === null ? null : grantsInRows(set) };
  }

  insert(tx: EntityManager, repository: Partial<RepositoryEntity>): Promise<RepositoryEntity> {
    return tx.getRepository(RepositoryEntity).save(tx.getRepository(RepositoryEntity).create(repository));
  }

  async update(tx: EntityManager, id: number, changes: Partial<RepositoryEntity>): Promise<void> {
    if (Object.keys(changes).length > 0) await tx.getRepository(RepositoryEntity).update({ id }, changes);
  }

  /**
   * A repository's git size in bytes (docs/quota.md), which quota usage sums, is recorded by every path that
   * changes the repository on disk (push, migration, mirror sync) in two steps: the number of a size
   * measurement about to begin (undefined when the repository is gone), taken before the directory is walked,
   * so that a higher number saw at least what a lower one saw; then the size, unless one begun later is stored.
   */
  async beginSizeMeasurement(tx: EntityManager, repoId: number): Promise<number | undefined> {
    // Incremented under the row's lock and read back in the caller's transaction: two measurements that begin
    // at once, on any instances, get different numbers.
    if ((await changeRows(tx, 'UPDATE repository SET git_size_ticket = git_size_ticket + 1 WHERE id = ?', [repoId])) === 0) return undefined;
    const rows = (await tx.query('SELECT git_size_ticket AS ticket FROM repository WHERE id = ?', [repoId])) as { ticket: number | string }[];
    return rows.length > 0 ? Number(rows[0].ticket) : undefined;
  }

  /** Stores a measured size unless one begun later is stored already; true when stored. */
  async storeMeasuredSize(tx: EntityManager, repoId: number, bytes: number, ticket: number): Promise<boolean> {
    const size = Math.max(0, Math.floor(bytes));
    return (
      (await changeRows(tx, 'UPDATE repository SET git_size = ?, git_size_stored_ticket = ? WHERE id = ? AND git_size_stored_ticket < ?', [
        size,
        ticket,
        repoId,
        ticket,
      ])) > 0
    );
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
  async addToCounter(tx: EntityManager, id: number, counter: RepositoryCounter, delta: number): Promise<boolean> {
    const column = COUNTER_COLUMNS[counter];
    return (await changeRows(tx, `UPDATE repository SET ${column} = ${column} + ? WHERE id = ?`, [delta, id])) > 0;
  }

  /** Rows by id, in no particular order; missing ids are left out. */
  async findByIds(ids: number[], tx?: EntityManager): Promise<RepositoryEntity[]> {
    if (ids.length === 0) return [];
    const [list, parameters] = inList(ids);
    return this.rows.all(`${this.rows.select()}WHERE id ${list}`, parameters, tx);
  }

  /** The owner's fork of `sourceId`, if any (at most one: repository_fork's unique index). */
  findForkOf(ownerId: number, sourceId: number, tx?: EntityManager): Promise<RepositoryEntity | null> {
    return this.repositories(tx).findOneBy({ ownerId, forkId: sourceId, isFork: true });
  }

  /**
   * Records that `repoId` is the owner's fork of `sourceId`, inside the fork's creation: a unique violation when
   * the owner has one already (two forks at once: the second to insert fails).
   */
  async claimFork(tx: EntityManager, ownerId: number, sourceId: number, repoId: number): Promise<void> {
    await tx.getRepository(ForkEntity).insert({ ownerId, sourceId, repoId });
  }

  /** Moves `num_forks` of the source by `delta` in SQL, inside the caller's transaction; false when it is gone. */
  async addToForkCount(tx: EntityManager, sourceId: number, delta: number): Promise<boolean> {
    return (await changeRows(tx, 'UPDATE repository SET num_forks = num_forks + ? WHERE id = ?', [delta, sourceId])) > 0;
  }

  /** A deleted source's direct forks stop being forks (as Forgejo detaches them). */
  async detachForks(tx: EntityManager, sourceId: number): Promise<void> {
    await changeRows(tx, 'UPDATE repository SET is_fork = 0, fork_id = 0 WHERE fork_id = ? AND is_fork = 1', [sourceId]);
    await tx.getRepository(ForkEntity).delete({ sourceId });
  }

  /** A deleted fork's claim goes with it. */
  async forgetFork(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(ForkEntity).delete({ repoId });
  }

  /** Records the repository's pool unless it has one already; false when another fork recorded one first. */
  async claimObjectPool(repoId: number, poolName: string): Promise<boolean> {
    const result = await this.transactions.write((tx) => this.repositories(tx).update({ id: repoId, objectPool: '' }, { objectPool: poolName }));
    return (result.affected ?? 0) > 0;
  }

  /** How many repositories use the pool. */
  countPoolMembers(poolName: string): Promise<number> {
    return this.repositories().countBy({ objectPool: poolName });
  }

  /** The direct forks of `sourceId` the scope may see, oldest first. */
  async listForks(sourceId: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    const query = this.scoped(scope).andWhere('r.fork_id = :sourceId AND r.is_fork = :isFork', { sourceId, isFork: true });
    const total = await query.getCount();
    const items = await query.orderBy('r.id', 'ASC').offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  /**
   * One page of one owner's repositories, by id, with the owner's visibility already decided by the caller
   * (repository-access.ts `ownerRepositoryFilter`): the page and its total in one statement on the owner's index,
   * values bound.
   */
  async listOfOwner(ownerId: number, filter: 'all' | 'public', page: PageQuery): Promise<Page<RepositoryEntity>> {
    const statements = this.ofOwner[filter];
    const set = await this.rows.rows(statements.page, [ownerId, ownerId, page.limit, page.offset]);
    if (set.rows.length > 0) return { items: set.rows.map((_, index) => this.rows.hydrate(set, index)), total: Number(valueOf(set, 0, 'page_total')) };
    const counted = await this.rows.rows(statements.count, [ownerId]);
    return { items: [], total: Number(valueOf(counted, 0, 'total') ?? 0) };
  }

  /** Repositories `uid` starred, oldest star first, as the viewer may see them. */
  listStarredBy(uid: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    return this.listJoined(StarEntity, uid, scope, page);
  }

  /** Repositories `uid` watches, oldest watch first, as the viewer may see them. */
  listWatchedBy(uid: number, scope: VisibilityScope, page: PageQuery): Promise<Page<RepositoryEntity>> {
    return this.listJoined(WatchEntity, uid, scope, page);
  }

  private async listJoined(
    relation: typeof StarEntity | typeof WatchEntity,
    uid: number,
    scope: VisibilityScope,
    page: PageQuery,
  ): Promise<Page<RepositoryEntity>> {
    const query = this.scoped(scope).innerJoin(relation, 'rel', 'rel.repo_id = r.id AND rel.uid = :relationUid', { relationUid: uid });
    const total = await query.getCount();
    const items = await query.orderBy('rel.id', 'ASC').offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }
}
