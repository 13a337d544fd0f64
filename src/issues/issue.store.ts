import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, MoreThan, SelectQueryBuilder } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { RowReader } from '../database/row-reader';
import { changeRows, insertUnlessPresent } from '../database/transactions';
import type { VisibilityScope } from '../repos/repository-access';
import { applyScope } from '../repos/repository-search-planner';
import { GHOST_USER_ID } from '../users/system-users';
import { CommentEntity, IssueAssigneeEntity, IssueCounterEntity, IssueEntity, IssueLabelEntity, IssueMentionEntity, IssueWordEntity } from './issue.entity';
import { prefixRange } from './issue-words';
import { ReactionEntity } from './reaction.entity';
import { IssueDependencyEntity } from './issue-dependency.entity';

// One cohesive thing, kept whole though long: every query of the issue table and its link tables, so that the
// indexes the lists rely on and the statements that use them are read side by side.

/** What a list of issues is narrowed to; every field is optional and all given ones must hold. */
export interface IssueCriteria {
  /** One repository (the repository's list). */
  repoId?: number;
  /** Repositories a viewer may see, with the tracker on (the search across repositories). */
  scope?: VisibilityScope;
  /** Narrows `scope` further to these repositories (search `owner`, `priority_repo_id` is a sort). */
  ownerId?: number;
  isPull?: boolean;
  isClosed?: boolean;
  /** Every one of these labels. */
  labelIds?: number[];
  /** Any of these labels (the search across repositories). */
  anyLabelIds?: number[];
  /** Any of these milestones. */
  milestoneIds?: number[];
  /** Each must begin a word of the title or body (issue_word). */
  words?: string[];
  posterId?: number;
  assigneeId?: number;
  /** A user the issue or its comments mention (issue_mention). */
  mentionedId?: number;
  updatedAfter?: number;
  updatedBefore?: number;
}

/**
 * Above this many matches, a `labels` filter is answered for the page by walking the newest issues: at 6 920 of
 * 50 000 the page took 0.5 ms against 6.7 (SQLite) and 46 ms (MariaDB) from the labels' side.
 */
const DENSE_LABEL_MATCHES = 1000;

const LABEL_LED: ReadonlySet<keyof IssueCriteria> = new Set(['repoId', 'labelIds', 'isClosed', 'isPull']);

/**
 * The count of a repository's list narrowed by labels and nothing but state and type, from the label links alone
 * (they carry their issue's repository, state and type): the first label's index entries, each tested for the
 * other labels. Undefined for any other list.
 */
function labelLedCount(criteria: IssueCriteria): [string, unknown[]] | undefined {
  const labelIds = criteria.labelIds ?? [];
  if (criteria.repoId === undefined || labelIds.length === 0) return undefined;
  if (Object.entries(criteria).some(([key, value]) => value !== undefined && !LABEL_LED.has(key as keyof IssueCriteria))) return undefined;
  const [first, ...others] = labelIds;
  let sql = 'SELECT COUNT(*) AS total FROM issue_label l WHERE l.repo_id = ? AND l.label_id = ?';
  const parameters: unknown[] = [criteria.repoId, first];
  if (criteria.isClosed !== undefined) {
    sql += ' AND l.is_closed = ?';
    parameters.push(criteria.isClosed ? 1 : 0);
  }
  if (criteria.isPull !== undefined) {
    sql += ' AND l.is_pull = ?';
    parameters.push(criteria.isPull ? 1 : 0);
  }
  for (const labelId of others) {
    sql += ' AND EXISTS (SELECT 1 FROM issue_label o WHERE o.issue_id = l.issue_id AND o.label_id = ?)';
    parameters.push(labelId);
  }
  return [sql, parameters];
}

/** An issue with the repository it belongs to, for lists across repositories. */
export type IssueRow = IssueEntity;

/**
 * The only door to the issue tables (issue, issue_counter, issue_word, issue_label, issue_assignee, issue_mention,
 * comment), and to what hangs on an issue when it, its repository or a user goes (reactions).
 */
@Injectable()
export class IssueStore {
  /** Lists and the rows hanging on a page of issues: the hot reads, as bound statements hydrated by hand. */
  private readonly rows: RowReader<IssueEntity>;

  constructor(private readonly dataSource: DataSource) {
    this.rows = new RowReader(dataSource, IssueEntity);
  }

  private issues(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(IssueEntity);
  }

  findByIndex(repoId: number, repoIndex: number, tx?: EntityManager): Promise<IssueEntity | null> {
    return this.issues(tx).findOneBy({ repoId, repoIndex });
  }

  findById(id: number, tx?: EntityManager): Promise<IssueEntity | null> {
    return this.issues(tx).findOneBy({ id });
  }

  async byIds(ids: number[], tx?: EntityManager): Promise<IssueEntity[]> {
    return ids.length > 0 ? this.issues(tx).findBy({ id: In(ids) }) : [];
  }

  /**
   * A page of issues, newest first, and how many match: `knownTotal` when the caller has it from the
   * repository's counters (moved in the same transactions as the rows they count), else counted. The builder
   * only writes the SQL; it runs as a bound statement (prepared once per shape of the filters) and the rows are
   * hydrated without TypeORM's per-row bookkeeping, which cost as much as the database's own work on a
   * repository's list.
   */
  async list(criteria: IssueCriteria, page: PageQuery, knownTotal?: number): Promise<Page<IssueEntity>> {
    const count = knownTotal ?? (await this.count(criteria));
    if (count === 0 || page.offset >= count) return { items: [], total: count };
    // With many matches, the page walks the newest issues and asks of each whether it has the labels; a
    // handful of matches are read from the labels' side instead (the walk could pass every issue for them).
    const [sql, parameters] = this.filtered(criteria, count > DENSE_LABEL_MATCHES)
      .select(this.rows.columnList('i'))
      .orderBy('i.created_unix', 'DESC')
      .addOrderBy('i.id', 'DESC')
      .limit(page.limit)
      .offset(page.offset)
      .getQueryAndParameters();
    const set = await this.rows.rows(sql, parameters);
    return { items: set.rows.map((_, index) => this.rows.hydrate(set, index, 'i')), total: count };
  }

  private async count(criteria: IssueCriteria): Promise<number> {
    const [sql, parameters] = labelLedCount(criteria) ?? this.filtered(criteria).select('COUNT(*)', 'total').getQueryAndParameters();
    const counted = await this.rows.rows(sql, parameters);
    return Number(counted.rows[0]?.[0] ?? 0);
  }

  private filtered(criteria: IssueCriteria, walkLabels = false): SelectQueryBuilder<IssueEntity> {
    const query = this.issues().createQueryBuilder('i');
    if (criteria.repoId !== undefined) query.andWhere('i.repo_id = :repoId', { repoId: criteria.repoId });
    if (criteria.scope) {
      query.innerJoin('repository', 'r', 'r.id = i.repo_id').innerJoin('user', 'o', 'o.id = r.owner_id');
      query.andWhere("r.has_issues = 1 AND r.external_tracker_url = ''");
      applyScope(query, criteria.scope);
      if (criteria.ownerId !== undefined) query.andWhere('r.owner_id = :ownerId', { ownerId: criteria.ownerId });
    }
    if (criteria.isPull !== undefined) query.andWhere('i.is_pull = :isPull', { isPull: criteria.isPull ? 1 : 0 });
    if (criteria.isClosed !== undefined) query.andWhere('i.is_closed = :isClosed', { isClosed: criteria.isClosed ? 1 : 0 });
    (criteria.labelIds ?? []).forEach((labelId, n) => {
      // A correlated count is asked per issue on both databases; MariaDB turns IN and EXISTS alike into a join
      // led by the label's links, which reads and sorts all of them before the first row of the page.
      const term = walkLabels
        ? `(SELECT COUNT(*) FROM issue_label il${n} WHERE il${n}.issue_id = i.id AND il${n}.label_id = :label${n}) > 0`
        : `i.id IN (SELECT issue_id FROM issue_label WHERE label_id = :label${n})`;
      query.andWhere(term, { [`label${n}`]: labelId });
    });
    if (criteria.anyLabelIds) {
      query.andWhere('i.id IN (SELECT issue_id FROM issue_label WHERE label_id IN (:...anyLabelIds))', {
        anyLabelIds: criteria.anyLabelIds.length > 0 ? criteria.anyLabelIds : [-1],
      });
    }
    if (criteria.milestoneIds)
      query.andWhere('i.milestone_id IN (:...milestoneIds)', { milestoneIds: criteria.milestoneIds.length > 0 ? criteria.milestoneIds : [-1] });
    const wordTerm = (n: number) =>
      criteria.repoId !== undefined
        ? `i.id IN (SELECT issue_id FROM issue_word WHERE repo_id = :repoId AND word >= :word${n} AND word < :wordEnd${n})`
        : `i.id IN (SELECT issue_id FROM issue_word WHERE word >= :word${n} AND word < :wordEnd${n})`;
    (criteria.words ?? []).forEach((word, n) => {
      const [from, to] = prefixRange(word);
      query.andWhere(wordTerm(n), { [`word${n}`]: from, [`wordEnd${n}`]: to });
    });
    if (criteria.mentionedId !== undefined) {
      query.andWhere('i.id IN (SELECT issue_id FROM issue_mention WHERE user_id = :mentionedId)', { mentionedId: criteria.mentionedId });
    }
    if (criteria.posterId !== undefined) query.andWhere('i.poster_id = :posterId', { posterId: criteria.posterId });
    if (criteria.assigneeId !== undefined) {
      query.andWhere('i.id IN (SELECT issue_id FROM issue_assignee WHERE assignee_id = :assigneeId)', { assigneeId: criteria.assigneeId });
    }
    if (criteria.updatedAfter !== undefined) query.andWhere('i.updated_unix >= :after', { after: criteria.updatedAfter });
    if (criteria.updatedBefore !== undefined) query.andWhere('i.updated_unix <= :before', { before: criteria.updatedBefore });
    return query;
  }

  /** Makes sure the repository's counter row exists, in a transaction of its own (a row at 0 changes nothing). */
  async ensureCounter(tx: EntityManager, repoId: number): Promise<void> {
    await changeRows(tx, insertUnlessPresent(tx, 'issue_counter', ['repo_id', 'max_index']), [repoId, 0]);
  }

  async hasCounter(repoId: number): Promise<boolean> {
    return (await this.dataSource.getRepository(IssueCounterEntity).countBy({ repoId })) > 0;
  }

  /**
   * The next number of the repository, inside the creating transaction: the UPDATE locks the counter row until
   * the transaction ends, so concurrent creates take numbers one after another and a rolled-back create gives
   * its number back. Undefined when the counter row is missing (ensureCounter first).
   */
  async nextIndex(tx: EntityManager, repoId: number): Promise<number | undefined> {
    if ((await changeRows(tx, 'UPDATE issue_counter SET max_index = max_index + 1 WHERE repo_id = ?', [repoId])) === 0) return undefined;
    const [row] = await tx.query('SELECT max_index FROM issue_counter WHERE repo_id = ?', [repoId]);
    return Number(row.max_index);
  }

  insert(tx: EntityManager, issue: Partial<IssueEntity>): Promise<IssueEntity> {
    return tx.getRepository(IssueEntity).save(tx.getRepository(IssueEntity).create(issue));
  }

  async update(tx: EntityManager, id: number, changes: Partial<IssueEntity>): Promise<void> {
    await tx.getRepository(IssueEntity).update({ id }, changes);
    // The label links carry copies of these (the label-led list counts read them): moved in the same transaction.
    const copied: Partial<IssueLabelEntity> = {};
    if (changes.repoId !== undefined) copied.repoId = changes.repoId;
    if (changes.isClosed !== undefined) copied.isClosed = changes.isClosed;
    if (changes.isPull !== undefined) copied.isPull = changes.isPull;
    if (Object.keys(copied).length > 0) await tx.getRepository(IssueLabelEntity).update({ issueId: id }, copied);
  }

  /** Replaces the issue's entries in the word index. */
  async replaceWords(tx: EntityManager, issue: { id: number; repoId: number }, words: string[]): Promise<void> {
    await tx.getRepository(IssueWordEntity).delete({ issueId: issue.id });
    for (let start = 0; start < words.length; start += 200) {
      const rows = words.slice(start, start + 200).map((word) => ({ issueId: issue.id, repoId: issue.repoId, word }));
      await tx.getRepository(IssueWordEntity).insert(rows);
    }
  }

  /** Records mentions of the issue (those already recorded stay as they are). */
  async addMentions(tx: EntityManager, issue: { id: number; repoId: number }, userIds: number[]): Promise<void> {
    if (userIds.length === 0) return;
    const known = new Set((await tx.getRepository(IssueMentionEntity).findBy({ issueId: issue.id, userId: In(userIds) })).map((row) => row.userId));
    const rows = [...new Set(userIds)].filter((userId) => !known.has(userId)).map((userId) => ({ issueId: issue.id, repoId: issue.repoId, userId }));
    if (rows.length > 0) await tx.getRepository(IssueMentionEntity).insert(rows);
  }

  /** The issues' label ids, each issue's in the order they were put on. */
  labelIdsOf(issueIds: number[], tx?: EntityManager): Promise<Map<number, number[]>> {
    return this.links('issue_label', 'label_id', issueIds, tx);
  }

  /** The issues' assignee ids, each issue's in the order they were assigned. */
  assigneeIdsOf(issueIds: number[], tx?: EntityManager): Promise<Map<number, number[]>> {
    return this.links('issue_assignee', 'assignee_id', issueIds, tx);
  }

  private async links(
    table: 'issue_label' | 'issue_assignee',
    column: 'label_id' | 'assignee_id',
    issueIds: number[],
    tx?: EntityManager,
  ): Promise<Map<number, number[]>> {
    const result = new Map<number, number[]>();
    if (issueIds.length === 0) return result;
    const set = await this.rows.rows(
      `SELECT issue_id, ${column} FROM ${table} WHERE issue_id IN (${issueIds.map(() => '?').join(', ')}) ORDER BY id`,
      issueIds,
      tx,
    );
    for (const [issueId, linkedId] of set.rows) {
      const key = Number(issueId);
      const list = result.get(key);
      if (list) list.push(Number(linkedId));
      else result.set(key, [Number(linkedId)]);
    }
    return result;
  }

  async setLabels(tx: EntityManager, issueId: number, labelIds: number[]): Promise<void> {
    await tx.getRepository(IssueLabelEntity).delete({ issueId });
    if (labelIds.length === 0) return;
    const issue = await this.findById(issueId, tx);
    if (!issue) return;
    const { repoId, isClosed, isPull } = issue;
    await tx.getRepository(IssueLabelEntity).insert(labelIds.map((labelId) => ({ issueId, labelId, repoId, isClosed, isPull })));
  }

  async setAssignees(tx: EntityManager, issueId: number, assigneeIds: number[]): Promise<void> {
    await tx.getRepository(IssueAssigneeEntity).delete({ issueId });
    if (assigneeIds.length > 0) await tx.getRepository(IssueAssigneeEntity).insert(assigneeIds.map((assigneeId) => ({ issueId, assigneeId })));
  }

  /** The issue and everything hanging on it. True when the issue row was really deleted. */
  async delete(tx: EntityManager, issueId: number): Promise<boolean> {
    await this.deleteDependents(tx, [issueId]);
    const result = await tx.getRepository(IssueEntity).delete({ id: issueId });
    return (result.affected ?? 0) > 0;
  }

  /** A repository is going: its issues, their comments, labels, assignees and index entries, and its counter. */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(IssueWordEntity).delete({ repoId });
    await tx.getRepository(CommentEntity).delete({ repoId });
    await tx.getRepository(IssueMentionEntity).delete({ repoId });
    await tx.query('DELETE FROM issue_label WHERE repo_id = ?', [repoId]);
    await tx.query('DELETE FROM issue_label WHERE issue_id IN (SELECT id FROM issue WHERE repo_id = ?)', [repoId]);
    await tx.query('DELETE FROM issue_assignee WHERE issue_id IN (SELECT id FROM issue WHERE repo_id = ?)', [repoId]);
    await tx.query('DELETE FROM reaction WHERE issue_id IN (SELECT id FROM issue WHERE repo_id = ?)', [repoId]);
    await tx.query('DELETE FROM issue_dependency WHERE issue_id IN (SELECT id FROM issue WHERE repo_id = ?)', [repoId]);
    await tx.query('DELETE FROM issue_dependency WHERE dependency_id IN (SELECT id FROM issue WHERE repo_id = ?)', [repoId]);
    await tx.getRepository(IssueEntity).delete({ repoId });
    await tx.getRepository(IssueCounterEntity).delete({ repoId });
  }

  /** A label is going: it leaves every issue. */
  async removeLabelEverywhere(tx: EntityManager, labelId: number): Promise<void> {
    await tx.getRepository(IssueLabelEntity).delete({ labelId });
  }

  /** Records that `issueId` depends on `dependencyId` (no error when it already does); true when it did not. */
  async addDependency(tx: EntityManager, issueId: number, dependencyId: number, now: number): Promise<boolean> {
    return (await changeRows(tx, insertUnlessPresent(tx, 'issue_dependency', ['issue_id', 'dependency_id', 'created_unix']), [issueId, dependencyId, now])) > 0;
  }

  /** True when there was such a dependency. */
  async removeDependency(tx: EntityManager, issueId: number, dependencyId: number): Promise<boolean> {
    return ((await tx.getRepository(IssueDependencyEntity).delete({ issueId, dependencyId })).affected ?? 0) > 0;
  }

  /** Whether `from` reaches `to` by following dependencies (a new link to→from would close a cycle). */
  async dependsOnTransitively(from: number, to: number, tx?: EntityManager): Promise<boolean> {
    const seen = new Set<number>([from]);
    let frontier = [from];
    const repository = (tx ?? this.dataSource.manager).getRepository(IssueDependencyEntity);
    while (frontier.length > 0 && seen.size < 10_000) {
      const rows = await repository.find({ where: { issueId: In(frontier) } });
      frontier = [];
      for (const row of rows) {
        if (row.dependencyId === to) return true;
        if (!seen.has(row.dependencyId)) {
          seen.add(row.dependencyId);
          frontier.push(row.dependencyId);
        }
      }
    }
    return false;
  }

  /** How many of the issue's dependencies are still open (a close is refused while any is). */
  async openDependencyCount(issueId: number, tx?: EntityManager): Promise<number> {
    const [row] = await (tx ?? this.dataSource.manager).query(
      'SELECT COUNT(*) AS n FROM issue_dependency d JOIN issue i ON i.id = d.dependency_id WHERE d.issue_id = ? AND i.is_closed = 0',
      [issueId],
    );
    return Number(row?.n ?? 0);
  }

  /** `direction` dependencies: the issues this one depends on; blocks: the issues that depend on it. Oldest link first. */
  async linked(issueId: number, direction: 'dependencies' | 'blocks', page: PageQuery): Promise<IssueEntity[]> {
    const [mine, theirs] = direction === 'dependencies' ? ['issue_id', 'dependency_id'] : ['dependency_id', 'issue_id'];
    return this.issues()
      .createQueryBuilder('i')
      .innerJoin(IssueDependencyEntity, 'd', `d.${theirs} = i.id`)
      .where(`d.${mine} = :issueId`, { issueId })
      .orderBy('d.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getMany();
  }

  /** The highest pin order among the repository's issues (or pull requests); 0 when none is pinned. */
  async maxPinOrder(tx: EntityManager, repoId: number, isPull: boolean): Promise<number> {
    const [row] = await tx.query('SELECT MAX(pin_order) AS n FROM issue WHERE repo_id = ? AND is_pull = ?', [repoId, isPull ? 1 : 0]);
    return Number(row?.n ?? 0);
  }

  /** How many of the repository's issues (or pull requests) are pinned. */
  async pinnedCount(repoId: number, isPull: boolean): Promise<number> {
    return this.issues().count({ where: { repoId, isPull, pinOrder: MoreThan(0) } });
  }

  /** Moves every pin of the repository's issues (or pull requests) at `from` or beyond by `delta`. */
  async shiftPins(tx: EntityManager, repoId: number, isPull: boolean, from: number, delta: number): Promise<void> {
    await changeRows(tx, `UPDATE issue SET pin_order = pin_order + ${Math.trunc(delta)} WHERE repo_id = ? AND is_pull = ? AND pin_order >= ?`, [
      repoId,
      isPull ? 1 : 0,
      from,
    ]);
  }

  /** The repository's pinned issues (or pull requests), in pin order. */
  pinned(repoId: number, isPull: boolean): Promise<IssueEntity[]> {
    return this.issues()
      .createQueryBuilder('i')
      .where('i.repo_id = :repoId AND i.is_pull = :isPull AND i.pin_order > 0', { repoId, isPull: isPull ? 1 : 0 })
      .orderBy('i.pin_order', 'ASC')
      .getMany();
  }

  /** A milestone is going: its issues carry none. */
  async removeMilestoneEverywhere(tx: EntityManager, milestoneId: number): Promise<void> {
    await tx.getRepository(IssueEntity).update({ milestoneId }, { milestoneId: 0 });
  }

  /**
   * A user is going: their issues and comments elsewhere stay, credited to Ghost (as Forgejo); they leave
   * every assignment, and their reactions go.
   */
  async forgetUser(tx: EntityManager, userId: number): Promise<void> {
    await tx.getRepository(IssueEntity).update({ posterId: userId }, { posterId: GHOST_USER_ID });
    await tx.getRepository(CommentEntity).update({ posterId: userId }, { posterId: GHOST_USER_ID });
    await tx.getRepository(IssueAssigneeEntity).delete({ assigneeId: userId });
    await tx.getRepository(IssueMentionEntity).delete({ userId });
    await tx.getRepository(ReactionEntity).delete({ userId });
  }

  private async deleteDependents(tx: EntityManager, issueIds: number[]): Promise<void> {
    await tx.getRepository(IssueWordEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(CommentEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(IssueLabelEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(IssueAssigneeEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(IssueMentionEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(ReactionEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(IssueDependencyEntity).delete({ issueId: In(issueIds) });
    await tx.getRepository(IssueDependencyEntity).delete({ dependencyId: In(issueIds) });
  }
}
