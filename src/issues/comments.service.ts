import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { assertMayChangeComment, assertMayComment } from '../access/repository-rules';
import { NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import type { EntityManager } from 'typeorm';
import { AuthContext } from '../auth/auth-context';
import { AuditService } from '../audit/audit.service';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import { systemUser, GHOST_USER_ID } from '../users/system-users';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { LabelLookup } from '../labels/label-lookup';
import { MilestoneLookup } from '../milestones/milestone-lookup';
import { TeamDirectory } from '../teams/team-directory';
import { toTeamWire } from '../teams/team.mapper';
import { toMilestoneWire } from '../milestones/milestone.mapper';
import { TimelineReferences, toCommentWire, toTimelineCommentWire } from './comment.mapper';
import { IssueDependenciesService } from './issue-dependencies.service';
import { ReactionStore } from './reaction.store';
import { CommentStore } from './comment.store';
import { CommentType } from './comment-types';
import type { CommentWire, TimelineCommentWire } from './comment.wire';
import type { CreateIssueCommentOption, EditIssueCommentOption } from './comment.options';
import type { CommentEntity, IssueEntity } from './issue.entity';
import { IssueStore } from './issue.store';
import { queryTime } from './issue-times';
import { assertBodySize } from './issue-limits';
import { IssueParticipants } from './issue-participants';
import { IssueQuery, IssuesService } from './issues.service';

/** What a comment change reports to the event door (webhooks). */
export interface CommentChange {
  action: 'created' | 'edited' | 'deleted';
  changes?: { body: { from: string } };
}

/**
 * Comments on issues: listed per issue and per repository (oldest first), created by any signed-in reader (not
 * on an archived repository, nor on a locked issue unless a writer), edited and deleted by their poster or a
 * writer. The issue's `comments` moves with each plain comment created or deleted.
 */
@Injectable()
export class CommentsService {
  constructor(
    private readonly comments: CommentStore,
    private readonly issues: IssueStore,
    private readonly issueService: IssuesService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly users: UserAccounts,
    private readonly siteUrls: SiteUrls,
    private readonly events: RepositoryEvents,
    private readonly audit: AuditService,
    private readonly reactions: ReactionStore,
    private readonly labels: LabelLookup,
    private readonly milestones: MilestoneLookup,
    private readonly dependencies: IssueDependenciesService,
    private readonly participants: IssueParticipants,
    private readonly teams: TeamDirectory,
  ) {}

  async listOfIssue(target: RepositoryTarget, rawIndex: string, query: IssueQuery, page: PageQuery): Promise<Page<CommentWire>> {
    this.issueService.assertTracker(target);
    const before = queryTime(query.before, 'before');
    const since = queryTime(query.since, 'since');
    const issue = await this.issueService.find(target, rawIndex);
    const found = await this.comments.list({ issueId: issue.id, updatedAfter: since, updatedBefore: before }, page);
    return { items: await this.wires(target, found.items, new Map([[issue.id, issue]])), total: found.total };
  }

  /**
   * GET …/timeline: every entry of the issue (comments and events), oldest first, `since`/`before` on updates. The
   * line comments of reviews (kept apart, in `review_comment`) are not entries: Forgejo's timeline leaves out its
   * `code` comments for every viewer.
   */
  async timeline(target: RepositoryTarget, rawIndex: string, query: IssueQuery, page: PageQuery): Promise<Page<TimelineCommentWire>> {
    this.issueService.assertTracker(target);
    const before = queryTime(query.before, 'before');
    const since = queryTime(query.since, 'since');
    const issue = await this.issueService.find(target, rawIndex);
    const found = await this.comments.list({ allTypes: true, issueId: issue.id, updatedAfter: since, updatedBefore: before }, page);
    const posters = await this.posters(found.items);
    const refs = await this.references(target, found.items);
    const items = found.items.map((comment) =>
      toTimelineCommentWire(comment, issue, target.repo, target.owner, this.poster(posters, comment), this.siteUrls, refs),
    );
    return { items, total: found.total };
  }

  /** The labels, milestones, assignees and dependent issues a page of timeline entries names, each read once. */
  private async references(target: RepositoryTarget, entries: CommentEntity[]): Promise<TimelineReferences> {
    const ids = (pick: (entry: CommentEntity) => number[]) => [...new Set(entries.flatMap(pick))].filter((id) => id > 0);
    const labels = await this.labels.byIds(ids((entry) => [entry.labelId]));
    const milestones = await this.milestones.byIds(ids((entry) => [entry.oldMilestoneId, entry.milestoneId]));
    const users = await this.users.byIds(ids((entry) => [entry.assigneeId]));
    const dependents = await this.dependencies.readable(target, await this.issues.byIds(ids((entry) => [entry.dependentIssueId])));
    const dependentIds = new Map(dependents.map((wire) => [wire.id, wire]));
    // The Team JSON of a timeline entry names no organisation, as Forgejo's.
    const teams = await this.teams.byIds(ids((entry) => [entry.assigneeTeamId]));
    return {
      teams: new Map(teams.map((team) => [team.id, toTeamWire(team)])),
      labels: new Map(labels.map((label) => [label.id, this.issueService.labelWire(label, target.repo, target.owner)])),
      milestones: new Map(milestones.map((milestone) => [milestone.id, toMilestoneWire(milestone)])),
      users: new Map(users.map((user) => [user.id, user])),
      issues: dependentIds,
    };
  }

  async listOfRepository(target: RepositoryTarget, query: IssueQuery, page: PageQuery): Promise<Page<CommentWire>> {
    this.issueService.assertTracker(target);
    const before = queryTime(query.before, 'before');
    const since = queryTime(query.since, 'since');
    const found = await this.comments.list({ repoId: target.repo.id, updatedAfter: since, updatedBefore: before }, page);
    return { items: await this.wires(target, found.items), total: found.total };
  }

  /** One comment of the repository; undefined (204, as Forgejo) for an entry that is not a plain comment. */
  async get(target: RepositoryTarget, rawId: string): Promise<CommentWire | undefined> {
    this.issueService.assertTracker(target);
    const { comment, issue } = await this.find(target, rawId);
    if (comment.type !== CommentType.Comment) return undefined;
    return (await this.wires(target, [comment], new Map([[issue.id, issue]])))[0];
  }

  /**
   * POST …/{index}/comments, whose route admitted signed-in readers of the tracker on a repository that takes
   * writes: the body's size (422), the issue (404), then its lock (403).
   */
  async create(target: RepositoryTarget, rawIndex: string, option: CreateIssueCommentOption): Promise<CommentWire> {
    assertBodySize(option.body);
    const issue = await this.issueService.find(target, rawIndex);
    await assertMayComment(target, issue);
    const mentioned = await this.participants.mentionable(target, option.body);
    const now = this.clock.nowUnix();
    const comment = await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current) throw new NotFoundError();
      const saved = await this.comments.insert(tx, {
        type: CommentType.Comment,
        issueId: issue.id,
        repoId: issue.repoId,
        posterId: target.viewer.user!.id,
        body: option.body,
        commitSha: '',
        createdUnix: now,
        updatedUnix: now,
      });
      await this.issues.addMentions(tx, current, mentioned);
      await this.record(tx, target, { ...current, numComments: current.numComments + 1, updatedUnix: now }, saved, { action: 'created' });
      return saved;
    });
    this.events.committed();
    return (await this.wires(target, [comment], new Map([[issue.id, issue]])))[0];
  }

  /**
   * PATCH, whose route admitted signed-in readers of the tracker on a repository that takes writes: after the
   * body and the lookup (404), the poster or a writer (403). Undefined (204, as Forgejo) for an entry that is
   * not a plain comment.
   */
  async edit(target: RepositoryTarget, rawId: string, option: EditIssueCommentOption, rawIndex?: string): Promise<CommentWire | undefined> {
    const { comment, issue } = await this.find(target, rawId, rawIndex);
    await assertMayChangeComment(target, comment);
    if (comment.type !== CommentType.Comment) return undefined;
    assertBodySize(option.body);
    const now = this.clock.nowUnix();
    const updated = { ...comment, body: option.body, updatedUnix: now };
    if (option.body !== comment.body) {
      const mentioned = await this.participants.mentionable(target, option.body);
      await this.transactions.run(async (tx) => {
        await this.comments.update(tx, comment.id, { body: option.body, updatedUnix: now });
        await this.issues.addMentions(tx, issue, mentioned);
        await this.record(tx, target, issue, updated, { action: 'edited', changes: { body: { from: comment.body } } });
      });
      this.events.committed();
    }
    return (await this.wires(target, [updated], new Map([[issue.id, issue]])))[0];
  }

  /** DELETE, whose route admitted signed-in readers of the tracker: after the lookup (404), the poster or a writer (403). */
  async delete(target: RepositoryTarget, rawId: string, rawIndex?: string): Promise<void> {
    const { comment, issue } = await this.find(target, rawId, rawIndex);
    await assertMayChangeComment(target, comment);
    await this.transactions.run(async (tx) => {
      if (!(await this.comments.delete(tx, comment))) return;
      await this.reactions.deleteOfComment(tx, comment.id);
      await this.record(tx, target, issue, comment, { action: 'deleted' });
      const where = `${target.owner.name}/${target.repo.name}#${issue.repoIndex}`;
      await this.audit.record(tx, {
        action: 'comment.delete',
        target: { type: 'comment', id: comment.id, name: where },
        detail: { poster_id: comment.posterId },
      });
    });
    this.events.committed();
  }

  /** A comment of this repository (404 otherwise); with `rawIndex` (the deprecated routes), of that issue too. */
  private async find(target: RepositoryTarget, rawId: string, rawIndex?: string): Promise<{ comment: CommentEntity; issue: IssueEntity }> {
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0;
    const comment = id > 0 ? await this.comments.findById(id) : null;
    if (!comment || comment.repoId !== target.repo.id) throw new NotFoundError();
    const issue = await this.issues.findById(comment.issueId);
    if (!issue || issue.repoId !== target.repo.id) throw new NotFoundError();
    if (rawIndex !== undefined && String(issue.repoIndex) !== rawIndex) throw new NotFoundError();
    return { comment, issue };
  }

  private async wires(target: RepositoryTarget, comments: CommentEntity[], known = new Map<number, IssueEntity>(), tx?: EntityManager): Promise<CommentWire[]> {
    if (comments.length === 0) return [];
    for (const issueId of new Set(comments.map((comment) => comment.issueId))) {
      if (!known.has(issueId)) {
        const issue = await this.issues.findById(issueId, tx);
        if (issue) known.set(issueId, issue);
      }
    }
    const posters = await this.posters(comments, tx);
    return comments
      .filter((comment) => known.has(comment.issueId))
      .map((comment) => toCommentWire(comment, known.get(comment.issueId)!, target.repo, target.owner, this.poster(posters, comment), this.siteUrls));
  }

  private async posters(comments: CommentEntity[], tx?: EntityManager): Promise<Map<number, UserEntity>> {
    const ids = [...new Set(comments.map((comment) => comment.posterId))].filter((id) => id > 0);
    return new Map((await this.users.byIds(ids, tx)).map((user) => [user.id, user]));
  }

  private poster(posters: Map<number, UserEntity>, comment: CommentEntity): UserEntity {
    return posters.get(comment.posterId) ?? systemUser(comment.posterId) ?? systemUser(GHOST_USER_ID)!;
  }

  /** Reports a comment change to the event door inside its transaction (webhooks' `issue_comment`). */
  private async record(tx: EntityManager, target: RepositoryTarget, issue: IssueEntity, comment: CommentEntity, change: CommentChange): Promise<void> {
    if (comment.type !== CommentType.Comment || !(await this.events.listensTo(target.repo, tx))) return;
    const [issueWire] = await this.issueService.wires(
      [issue],
      AuthContext.anonymous(),
      new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]),
      tx,
    );
    const [commentWire] = await this.wires(target, [comment], new Map([[issue.id, issue]]), tx);
    await this.events.record(tx, {
      kind: 'issue_comment',
      action: change.action,
      repo: target.repo,
      senderId: target.viewer.user!.id,
      issue: issueWire,
      comment: commentWire,
      changes: change.changes,
    });
  }
}
