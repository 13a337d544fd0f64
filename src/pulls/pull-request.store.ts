import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { RowReader } from '../database/row-reader';
import { changeRows } from '../database/transactions';
import { IssueEntity } from '../issues/issue.entity';
import { PullRequestEntity, PullStatus } from './pull-request.entity';

/** A pull request with its issue row. */
export interface PullRow {
  pull: PullRequestEntity;
  issue: IssueEntity;
}

/** What a repository's list of pull requests is narrowed to. */
export interface PullCriteria {
  baseRepoId: number;
  /** Undefined: open and closed alike. */
  isClosed?: boolean;
  /** Every one of these labels. */
  labelIds?: number[];
  milestoneId?: number;
  posterId?: number;
  baseBranch?: string;
  headBranch?: string;
  sort?: string;
}

const ORDERS: Record<string, [string, 'ASC' | 'DESC'][]> = {
  oldest: [
    ['i.created_unix', 'ASC'],
    ['i.id', 'ASC'],
  ],
  recentupdate: [
    ['i.updated_unix', 'DESC'],
    ['i.created_unix', 'DESC'],
    ['i.id', 'DESC'],
  ],
  leastupdate: [
    ['i.updated_unix', 'ASC'],
    ['i.created_unix', 'ASC'],
    ['i.id', 'ASC'],
  ],
  mostcomment: [
    ['i.num_comments', 'DESC'],
    ['i.created_unix', 'DESC'],
    ['i.id', 'DESC'],
  ],
  leastcomment: [
    ['i.num_comments', 'ASC'],
    ['i.created_unix', 'DESC'],
    ['i.id', 'DESC'],
  ],
  newest: [
    ['i.created_unix', 'DESC'],
    ['i.id', 'DESC'],
  ],
};

/** The only door to the `pull_request` table (and to the issue rows it lists pull requests by). */
@Injectable()
export class PullRequestStore {
  /** The hot reads (a pull request by number, a page of them), as bound statements hydrated by hand. */
  private readonly issueRows: RowReader<IssueEntity>;
  private readonly pullRows: RowReader<PullRequestEntity>;
  private readonly byIndexSql: string;

  constructor(private readonly dataSource: DataSource) {
    this.issueRows = new RowReader(dataSource, IssueEntity);
    this.pullRows = new RowReader(dataSource, PullRequestEntity);
    this.byIndexSql =
      `SELECT ${this.issueRows.columnList('i')}, ${this.pullRows.columnList('p')} FROM issue i JOIN pull_request p ON p.issue_id = i.id ` +
      'WHERE i.repo_id = ? AND i.repo_index = ? AND i.is_pull = 1';
  }

  private pulls(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(PullRequestEntity);
  }

  insert(tx: EntityManager, pull: Partial<PullRequestEntity>): Promise<PullRequestEntity> {
    return this.pulls(tx).save(this.pulls(tx).create(pull));
  }

  byId(id: number, tx?: EntityManager): Promise<PullRequestEntity | null> {
    return this.pulls(tx).findOneBy({ id });
  }

  byIssueId(issueId: number, tx?: EntityManager): Promise<PullRequestEntity | null> {
    return this.pulls(tx).findOneBy({ issueId });
  }

  async byIssueIds(issueIds: number[], tx?: EntityManager): Promise<Map<number, PullRequestEntity>> {
    if (issueIds.length === 0) return new Map();
    const sql = `${this.pullRows.select()}WHERE issue_id IN (${issueIds.map(() => '?').join(', ')})`;
    const set = await this.pullRows.rows(sql, issueIds, tx);
    const rows = set.rows.map((_, index) => this.pullRows.hydrate(set, index));
    return new Map(rows.map((row) => [row.issueId, row]));
  }

  async issueOf(pull: PullRequestEntity, tx?: EntityManager): Promise<IssueEntity | null> {
    return (tx ?? this.dataSource.manager).getRepository(IssueEntity).findOneBy({ id: pull.issueId });
  }

  /** The pull request of the given number in a repository (its issue must be a pull request). */
  async byIndex(repoId: number, repoIndex: number): Promise<PullRow | null> {
    const set = await this.issueRows.rows(this.byIndexSql, [repoId, repoIndex]);
    if (set.rows.length === 0) return null;
    return { issue: this.issueRows.hydrate(set, 0, 'i'), pull: this.pullRows.hydrate(set, 0, 'p') };
  }

  /** The newest pull request of head and base, open ones first (GET …/pulls/{base}/{head}). */
  async byBaseAndHead(baseRepoId: number, baseBranch: string, headRepoId: number, headBranch: string): Promise<PullRow | null> {
    const pull = await this.pulls()
      .createQueryBuilder('p')
      .innerJoin(IssueEntity, 'i', 'i.id = p.issue_id')
      .where('p.base_repo_id = :baseRepoId AND p.base_branch = :baseBranch AND p.head_repo_id = :headRepoId AND p.head_branch = :headBranch', {
        baseRepoId,
        baseBranch,
        headRepoId,
        headBranch,
      })
      .orderBy('i.is_closed', 'ASC')
      .addOrderBy('p.id', 'DESC')
      .getOne();
    if (!pull) return null;
    const issue = await this.issueOf(pull);
    return issue ? { pull, issue } : null;
  }

  /** The open, unmerged pull request of this head and base, if any. */
  async openOf(baseRepoId: number, baseBranch: string, headRepoId: number, headBranch: string, tx?: EntityManager): Promise<PullRequestEntity | null> {
    return this.pulls(tx)
      .createQueryBuilder('p')
      .innerJoin(IssueEntity, 'i', 'i.id = p.issue_id')
      .where('p.base_repo_id = :baseRepoId AND p.base_branch = :baseBranch AND p.head_repo_id = :headRepoId AND p.head_branch = :headBranch', {
        baseRepoId,
        baseBranch,
        headRepoId,
        headBranch,
      })
      .andWhere('p.has_merged = :merged AND i.is_closed = :closed', { merged: false, closed: false })
      .getOne();
  }

  /** Open, unmerged pull requests whose head is one of these branches of a repository. */
  async openWithHeads(headRepoId: number, branches: string[]): Promise<PullRow[]> {
    if (branches.length === 0) return [];
    return this.openRows('p.head_repo_id = :repoId AND p.head_branch IN (:...branches)', { repoId: headRepoId, branches });
  }

  /** Open, unmerged pull requests whose head is in a repository, whatever the branch. */
  async openFromRepository(headRepoId: number, tx?: EntityManager): Promise<PullRow[]> {
    return this.openRows('p.head_repo_id = :repoId', { repoId: headRepoId }, tx);
  }

  /** Open, unmerged pull requests whose base is one of these branches of a repository. */
  async openWithBases(baseRepoId: number, branches: string[]): Promise<PullRow[]> {
    if (branches.length === 0) return [];
    return this.openRows('p.base_repo_id = :repoId AND p.base_branch IN (:...branches)', { repoId: baseRepoId, branches });
  }

  private async openRows(where: string, parameters: Record<string, unknown>, tx?: EntityManager): Promise<PullRow[]> {
    const rows = await this.pulls(tx)
      .createQueryBuilder('p')
      .innerJoinAndMapOne('p.issue', IssueEntity, 'i', 'i.id = p.issue_id')
      .where(where, parameters)
      .andWhere('p.has_merged = :merged AND i.is_closed = :closed', { merged: false, closed: false })
      .getMany();
    return rows.map((row) => {
      const { issue, ...pull } = row as PullRequestEntity & { issue: IssueEntity };
      return { pull: pull as PullRequestEntity, issue };
    });
  }

  /** A page of pull requests and how many match (`knownTotal` when the caller has it from the counters). */
  async list(criteria: PullCriteria, page: PageQuery, knownTotal?: number): Promise<Page<IssueEntity>> {
    const query = this.dataSource
      .getRepository(IssueEntity)
      .createQueryBuilder('i')
      .innerJoin(PullRequestEntity, 'p', 'p.issue_id = i.id')
      .where('i.repo_id = :repoId AND i.is_pull = 1', { repoId: criteria.baseRepoId });
    if (criteria.isClosed !== undefined) query.andWhere('i.is_closed = :isClosed', { isClosed: criteria.isClosed ? 1 : 0 });
    (criteria.labelIds ?? []).forEach((labelId, n) => {
      query.andWhere(`i.id IN (SELECT issue_id FROM issue_label WHERE label_id = :label${n})`, { [`label${n}`]: labelId });
    });
    if (criteria.milestoneId !== undefined) query.andWhere('i.milestone_id = :milestoneId', { milestoneId: criteria.milestoneId });
    if (criteria.posterId !== undefined) query.andWhere('i.poster_id = :posterId', { posterId: criteria.posterId });
    if (criteria.baseBranch !== undefined) query.andWhere('p.base_branch = :baseBranch', { baseBranch: criteria.baseBranch });
    if (criteria.headBranch !== undefined) query.andWhere('p.head_branch = :headBranch', { headBranch: criteria.headBranch });
    let total = knownTotal;
    if (total === undefined) {
      const [countSql, countParameters] = query.clone().select('COUNT(*)', 'total').getQueryAndParameters();
      total = Number((await this.issueRows.rows(countSql, countParameters)).rows[0]?.[0] ?? 0);
    }
    if (total === 0 || page.offset >= total) return { items: [], total };
    const order = ORDERS[criteria.sort ?? ''] ?? ORDERS.newest;
    order.forEach(([column, direction], n) => (n === 0 ? query.orderBy(column, direction) : query.addOrderBy(column, direction)));
    // The page as a bound statement (prepared once per shape of the filters), hydrated without TypeORM's per-row work.
    const [sql, parameters] = query.select(this.issueRows.columnList('i')).limit(page.limit).offset(page.offset).getQueryAndParameters();
    const set = await this.issueRows.rows(sql, parameters);
    return { items: set.rows.map((_, index) => this.issueRows.hydrate(set, index, 'i')), total };
  }

  /** The pinned pull requests of a repository, in their pinned order. */
  async pinned(repoId: number): Promise<IssueEntity[]> {
    return this.dataSource
      .getRepository(IssueEntity)
      .createQueryBuilder('i')
      .where('i.repo_id = :repoId AND i.is_pull = :isPull AND i.pin_order > 0', { repoId, isPull: true })
      .orderBy('i.pin_order', 'ASC')
      .getMany();
  }

  /** The pull request of a repository merged as this commit. */
  byMergedCommit(baseRepoId: number, sha: string): Promise<PullRequestEntity | null> {
    return this.pulls().findOneBy({ baseRepoId, mergedCommitId: sha, hasMerged: true });
  }

  async update(tx: EntityManager, id: number, changes: Partial<PullRequestEntity>): Promise<void> {
    await this.pulls(tx).update({ id }, changes);
  }

  /** Asks for a new mergeability test of these pull requests (status checking, next version). */
  async requestCheck(tx: EntityManager, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    await changeRows(
      tx,
      `UPDATE pull_request SET status = ?, check_version = check_version + 1 WHERE id IN (${ids.map(() => '?').join(', ')}) AND has_merged = 0`,
      [PullStatus.Checking, ...ids],
    );
  }

  /**
   * Asks for a new test of every open pull request into these branches of a repository, in one statement: a push
   * to a base with hundreds of open pull requests reads none of them. The number asked.
   */
  async requestChecksOnBases(tx: EntityManager, baseRepoId: number, branches: string[]): Promise<number> {
    if (branches.length === 0) return 0;
    return changeRows(
      tx,
      `UPDATE pull_request SET status = ?, check_version = check_version + 1 WHERE base_repo_id = ? AND base_branch IN (${branches.map(() => '?').join(', ')})` +
        ' AND has_merged = 0 AND EXISTS (SELECT 1 FROM issue WHERE issue.id = pull_request.issue_id AND issue.is_closed = 0)',
      [PullStatus.Checking, baseRepoId, ...branches],
    );
  }

  /** Pull requests waiting for a test that nobody holds, oldest request first. */
  async waitingForCheck(now: number, limit: number): Promise<number[]> {
    const rows = await this.pulls()
      .createQueryBuilder('p')
      .select('p.id', 'id')
      .where('p.status = :status AND p.check_claimed_until < :now', { status: PullStatus.Checking, now })
      .orderBy('p.id', 'ASC')
      .limit(limit)
      .getRawMany<{ id: number | string }>();
    return rows.map((row) => Number(row.id));
  }

  /** Takes the test of a pull request until `until`, unless another instance holds it. True when taken. */
  async claimCheck(tx: EntityManager, id: number, now: number, until: number): Promise<boolean> {
    return (
      (await changeRows(tx, 'UPDATE pull_request SET check_claimed_until = ? WHERE id = ? AND status = ? AND check_claimed_until < ?', [
        until,
        id,
        PullStatus.Checking,
        now,
      ])) > 0
    );
  }

  /**
   * Stores a test's result, only if no newer test was asked for since it began (`version`), and gives up the
   * claim either way. True when stored.
   */
  async storeCheck(tx: EntityManager, id: number, version: number, result: Partial<PullRequestEntity>): Promise<boolean> {
    const updated = await tx.getRepository(PullRequestEntity).update({ id, checkVersion: version, hasMerged: false }, { ...result, checkClaimedUntil: 0 });
    if ((updated.affected ?? 0) > 0) return true;
    await tx.getRepository(PullRequestEntity).update({ id }, { checkClaimedUntil: 0 });
    return false;
  }

  /** A repository is going: its pull requests go with it (their issue rows go with the issues). */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.pulls(tx).delete({ baseRepoId: repoId });
  }

  /** An issue that is a pull request was deleted. */
  async deleteOfIssue(tx: EntityManager, issueId: number): Promise<void> {
    await this.pulls(tx).delete({ issueId });
  }
}
