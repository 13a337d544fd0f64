import { Column, Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, MediumTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** Forgejo's review types, by the numbers it stores. */
export enum ReviewType {
  Pending = 0,
  Approve = 1,
  Comment = 2,
  Reject = 3,
  /** A review asked of a user or a team, not given yet. */
  Request = 4,
}

/**
 * A review of a pull request (its issue), or a request for one: by a user (`reviewerId`) or, for a request, a
 * team (`reviewerTeamId`). `official` is decided when the review is given (a writer, or on the approvals
 * whitelist of the base branch's rule); `stale` once the head moved on and changed the diff after `commitId`.
 */
@Entity('review')
@Index('IDX_review_issue_id', ['issueId', 'id'])
@Index('IDX_review_repo_id', ['repoId'])
@Index('IDX_review_reviewer_id', ['reviewerId'])
@Index('IDX_review_reviewer_team_id', ['reviewerTeamId'])
export class ReviewEntity {
  @IdColumn()
  id: number;

  @CounterColumn()
  type: ReviewType;

  @RefColumn()
  reviewerId: number;

  @RefColumn({ default: 0 })
  reviewerTeamId: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  repoId: number;

  @MediumTextColumn()
  content: string;

  @FlagColumn(false)
  official: boolean;

  @TextColumn(64)
  commitId: string;

  @FlagColumn(false)
  stale: boolean;

  @FlagColumn(false)
  dismissed: boolean;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}

/**
 * A comment on one line of a pull request's diff, within a review: `line` positive on the new side, negative
 * on the old; `patch` the diff around the line when it was made; `commitSha` the commit that last changed it.
 */
@Entity('review_comment')
@Index('IDX_review_comment_review_id', ['reviewId', 'id'])
@Index('IDX_review_comment_issue_id', ['issueId'])
@Index('IDX_review_comment_repo_id', ['repoId'])
export class ReviewCommentEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  reviewId: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  posterId: number;

  @TextColumn(1024)
  path: string;

  @Column({ type: 'integer', default: 0 })
  line: number;

  @TextColumn(64)
  commitSha: string;

  @MediumTextColumn()
  patch: string;

  @MediumTextColumn()
  body: string;

  @RefColumn({ default: 0 })
  resolverId: number;

  @FlagColumn(false)
  invalidated: boolean;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
