import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/time';
import { CommentStore } from './comment.store';
import { CommentType } from './comment-types';
import type { CommentEntity } from './issue.entity';
import type { LabelFacts, LabelStep } from './issue-labels';

/** The issue an entry goes on. */
type OnIssue = { id: number; repoId: number };

/** A due date as a timeline entry writes it: the day, `YYYY-MM-DD` (UTC). */
function day(seconds: number): string {
  return new Date(seconds * 1000).toISOString().slice(0, 10);
}

/**
 * The one writer of an issue's timeline events (everything but plain comments): every door that changes an
 * issue (its edit, its labels, pins, dependencies, a pull request's edit, a pushed commit) writes its entries here,
 * inside the transaction of the change, by the doer, in the order Forgejo writes them. Changes that change
 * nothing write nothing.
 */
@Injectable()
export class IssueTimeline {
  constructor(
    private readonly comments: CommentStore,
    private readonly clock: Clock,
  ) {}

  /** Closed or reopened; `commitSha` when a pushed commit did it. */
  stateChanged(tx: EntityManager, issue: OnIssue, doerId: number, closed: boolean, commitSha = ''): Promise<CommentEntity> {
    return this.write(tx, issue, doerId, closed ? CommentType.Close : CommentType.Reopen, { commitSha });
  }

  async titleChanged(tx: EntityManager, issue: OnIssue, doerId: number, oldTitle: string, newTitle: string): Promise<void> {
    if (oldTitle !== newTitle) await this.write(tx, issue, doerId, CommentType.ChangeTitle, { oldTitle, newTitle });
  }

  async refChanged(tx: EntityManager, issue: OnIssue, doerId: number, oldRef: string, newRef: string): Promise<void> {
    if (oldRef !== newRef) await this.write(tx, issue, doerId, CommentType.ChangeIssueRef, { oldRef, newRef });
  }

  /** Added, modified (body `new|old`) or removed, as unix seconds (0: none). */
  async deadlineChanged(tx: EntityManager, issue: OnIssue, doerId: number, before: number, after: number): Promise<void> {
    if (before === after) return;
    if (after === 0) await this.write(tx, issue, doerId, CommentType.RemovedDeadline, { body: day(before) });
    else if (before === 0) await this.write(tx, issue, doerId, CommentType.AddedDeadline, { body: day(after) });
    else await this.write(tx, issue, doerId, CommentType.ModifiedDeadline, { body: `${day(after)}|${day(before)}` });
  }

  /** One entry per user taken off (in the order they were on), then per user put on (in the order given). */
  async assigneesChanged(tx: EntityManager, issue: OnIssue, doerId: number, before: number[], after: number[]): Promise<void> {
    for (const id of before) if (!after.includes(id)) await this.write(tx, issue, doerId, CommentType.Assignees, { assigneeId: id, removedAssignee: true });
    for (const id of after) if (!before.includes(id)) await this.write(tx, issue, doerId, CommentType.Assignees, { assigneeId: id });
  }

  async milestoneChanged(tx: EntityManager, issue: OnIssue, doerId: number, oldMilestoneId: number, milestoneId: number): Promise<void> {
    if (oldMilestoneId !== milestoneId) await this.write(tx, issue, doerId, CommentType.Milestone, { oldMilestoneId, milestoneId });
  }

  /** One entry per label put on (body `1`) or taken off (body empty), in the steps' order. */
  async labelsChanged(tx: EntityManager, issue: OnIssue, doerId: number, steps: LabelStep<LabelFacts>[]): Promise<void> {
    for (const step of steps) await this.write(tx, issue, doerId, CommentType.Label, { labelId: step.label.id, body: step.added ? '1' : '' });
  }

  async pinChanged(tx: EntityManager, issue: OnIssue, doerId: number, pinned: boolean): Promise<void> {
    await this.write(tx, issue, doerId, pinned ? CommentType.Pin : CommentType.Unpin);
  }

  /** `waiting` now depends (or no longer) on `awaited`: an entry on each, naming the other, the waiting one's first. */
  async dependencyChanged(tx: EntityManager, waiting: OnIssue, awaited: OnIssue, doerId: number, added: boolean): Promise<void> {
    const type = added ? CommentType.AddDependency : CommentType.RemoveDependency;
    await this.write(tx, waiting, doerId, type, { dependentIssueId: awaited.id });
    await this.write(tx, awaited, doerId, type, { dependentIssueId: waiting.id });
  }

  /** A review given (approved, changes requested, commented), its body the review's. */
  async reviewed(tx: EntityManager, issue: OnIssue, doerId: number, reviewId: number, body: string): Promise<void> {
    await this.write(tx, issue, doerId, CommentType.Review, { reviewId, body });
  }

  /** A review asked of `reviewerId` (`reviewId` the request), or taken back. */
  async reviewRequested(tx: EntityManager, issue: OnIssue, doerId: number, reviewerId: number, reviewId: number, removed: boolean): Promise<void> {
    await this.write(tx, issue, doerId, CommentType.ReviewRequest, { assigneeId: reviewerId, removedAssignee: removed, reviewId: removed ? 0 : reviewId });
  }

  /** A review asked of the team `teamId` (`reviewId` the request), or taken back. */
  async teamReviewRequested(tx: EntityManager, issue: OnIssue, doerId: number, teamId: number, reviewId: number, removed: boolean): Promise<void> {
    await this.write(tx, issue, doerId, CommentType.ReviewRequest, { assigneeTeamId: teamId, removedAssignee: removed, reviewId: removed ? 0 : reviewId });
  }

  /** A review dismissed, `body` the reason. */
  async reviewDismissed(tx: EntityManager, issue: OnIssue, doerId: number, reviewId: number, body: string): Promise<void> {
    await this.write(tx, issue, doerId, CommentType.DismissReview, { reviewId, body });
  }

  /** The entry of each given review, by review id: where a review is shown on the pull request's page. */
  reviewEntryIds(reviewIds: number[]): Promise<Map<number, number>> {
    return this.comments.reviewEntryIds(reviewIds);
  }

  /** A review deleted takes its entries along. */
  reviewDeleted(tx: EntityManager, issue: OnIssue, reviewId: number): Promise<void> {
    return this.comments.deleteOfReview(tx, issue.id, reviewId);
  }

  /** A pushed commit names the issue (`body` links it); once per commit and issue. */
  async commitReferenced(tx: EntityManager, issue: OnIssue, doerId: number, sha: string, body: string): Promise<boolean> {
    if (await this.comments.hasCommitReference(tx, issue.id, sha)) return false;
    await this.write(tx, issue, doerId, CommentType.CommitRef, { commitSha: sha, body });
    return true;
  }

  private write(tx: EntityManager, issue: OnIssue, doerId: number, type: CommentType, fields: Partial<CommentEntity> = {}): Promise<CommentEntity> {
    const now = this.clock.nowUnix();
    return this.comments.insert(tx, {
      type,
      issueId: issue.id,
      repoId: issue.repoId,
      posterId: doerId,
      body: '',
      commitSha: '',
      createdUnix: now,
      updatedUnix: now,
      ...fields,
    });
  }
}
