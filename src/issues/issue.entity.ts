import { Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintAsNumber, CounterColumn, FlagColumn, IdColumn, MediumTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * An issue of a repository, or a pull request (`isPull`): both take their number from the repository's one
 * counter (IssueCounterEntity), so a number is never given twice nor reused after a deletion.
 */
@Entity('issue')
@Index('IDX_issue_repo_id_repo_index', ['repoId', 'repoIndex'], { unique: true })
@Index('IDX_issue_repo_id_is_pull_is_closed_created_unix', ['repoId', 'isPull', 'isClosed', 'createdUnix'])
// A list without a type (issues and pull requests alike) reads its page from here, newest first.
@Index('IDX_issue_repo_id_is_closed_created_unix', ['repoId', 'isClosed', 'createdUnix'])
// Lists of every state, of one type or of both, newest first.
@Index('IDX_issue_repo_id_is_pull_created_unix', ['repoId', 'isPull', 'createdUnix'])
@Index('IDX_issue_repo_id_created_unix', ['repoId', 'createdUnix'])
@Index('IDX_issue_poster_id', ['posterId'])
@Index('IDX_issue_updated_unix', ['updatedUnix'])
@Index('IDX_issue_milestone_id', ['milestoneId'])
export class IssueEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  /** The issue's number in its repository (`number` in the API). */
  @RefColumn()
  repoIndex: number;

  /** The author; -1 (Ghost) once the account is deleted. */
  @RefColumn()
  posterId: number;

  @TextColumn(255)
  title: string;

  @MediumTextColumn()
  body: string;

  /** A branch or tag the issue is about (`ref`); '' for none. */
  @TextColumn(255)
  ref: string;

  @RefColumn({ default: 0 })
  milestoneId: number;

  @FlagColumn(false)
  isPull: boolean;

  @FlagColumn(false)
  isClosed: boolean;

  @FlagColumn(false)
  isLocked: boolean;

  /** Plain comments on the issue, moved with each comment created or deleted. */
  @CounterColumn()
  numComments: number;

  /** Place among the repository's pinned issues; 0 when not pinned. */
  @CounterColumn()
  pinOrder: number;

  /** Due date; 0 for none. */
  @UnixTimeColumn()
  deadlineUnix: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;

  /** When it was last closed; 0 while never closed. */
  @UnixTimeColumn()
  closedUnix: number;
}

/** The last number given out in a repository: one row per repository, moved in the creating transaction. */
@Entity('issue_counter')
export class IssueCounterEntity {
  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber })
  repoId: number;

  @RefColumn()
  maxIndex: number;
}

/**
 * The search index of issue titles and bodies: one row per distinct word (lower-cased, at most 64 characters)
 * of an issue, written with the issue in the same transaction. `q` is answered by prefix lookups in it.
 */
@Entity('issue_word')
// Both hold the issue, so that a word's issues are read from the index alone.
@Index('IDX_issue_word_repo_id_word_issue_id', ['repoId', 'word', 'issueId'])
@Index('IDX_issue_word_word_issue_id', ['word', 'issueId'])
@Index('IDX_issue_word_issue_id', ['issueId'])
export class IssueWordEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  repoId: number;

  @TextColumn(64)
  word: string;
}

/** A label on an issue (a label of the issue's repository or of its organisation). */
@Entity('issue_label')
@Index('IDX_issue_label_issue_id_label_id', ['issueId', 'labelId'], { unique: true })
// Led by the label and holding the issue, so that a `labels` filter reads its issues from the index alone.
@Index('IDX_issue_label_label_id_issue_id', ['labelId', 'issueId'])
// A repository's list narrowed by a label counts its matches from this index alone (the columns are the issue's).
@Index('IDX_issue_label_repo_id_label_id_is_closed_is_pull', ['repoId', 'labelId', 'isClosed', 'isPull'])
export class IssueLabelEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  labelId: number;

  /** Copies of the issue's columns, written with the link and moved with the issue by IssueStore alone. */
  @RefColumn({ default: 0 })
  repoId: number;

  @FlagColumn()
  isClosed: boolean;

  @FlagColumn()
  isPull: boolean;
}

/** A user assigned to an issue. */
@Entity('issue_assignee')
@Index('IDX_issue_assignee_issue_id_assignee_id', ['issueId', 'assigneeId'], { unique: true })
@Index('IDX_issue_assignee_assignee_id', ['assigneeId'])
export class IssueAssigneeEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  assigneeId: number;
}

/**
 * An entry of an issue's timeline: a plain comment (`type` 0, counted in `issue.num_comments`) or an event
 * Anvil records (closed, labelled, assigned, …: CommentType), with the columns of what the event changed.
 * `repoId` is the issue's, kept here so that a repository's comments are listed without a join.
 */
@Entity('comment')
@Index('IDX_comment_issue_id_created_unix', ['issueId', 'createdUnix'])
@Index('IDX_comment_repo_id_type_updated_unix', ['repoId', 'type', 'updatedUnix'])
@Index('IDX_comment_poster_id', ['posterId'])
export class CommentEntity {
  @IdColumn()
  id: number;

  @CounterColumn()
  type: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  posterId: number;

  @MediumTextColumn()
  body: string;

  /** For a commit reference: the commit's id. */
  @TextColumn(64)
  commitSha: string;

  /** For a `label` entry: the label put on or taken off. */
  @RefColumn({ default: 0 })
  labelId: number;

  /** For a `milestone` entry: the milestone before (0: none) and after. */
  @RefColumn({ default: 0 })
  oldMilestoneId: number;

  @RefColumn({ default: 0 })
  milestoneId: number;

  /** For an `assignees` entry: the user assigned, or taken off when `removedAssignee`. */
  @RefColumn({ default: 0 })
  assigneeId: number;

  @FlagColumn(false)
  removedAssignee: boolean;

  /** For a `review_request` entry of a team: the team asked, or no longer asked when `removedAssignee`. */
  @RefColumn({ default: 0 })
  assigneeTeamId: number;

  /** For a `change_title` entry. */
  @TextColumn(255)
  oldTitle: string;

  @TextColumn(255)
  newTitle: string;

  /** For a `change_issue_ref` entry. */
  @TextColumn(255)
  oldRef: string;

  @TextColumn(255)
  newRef: string;

  /** For an `add_dependency` or `remove_dependency` entry: the issue at the other end of the link. */
  @RefColumn({ default: 0 })
  dependentIssueId: number;

  /** For a `review`, `review_request` or `dismiss_review` entry: the review (0 for a request taken back). */
  @RefColumn({ default: 0 })
  reviewId: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}

/**
 * A branch a push moved, waiting to have its commits read for issue references (closing keywords and
 * `commit_ref` entries). Written in the transaction that records the push, claimed by one instance at a time
 * (`claimedUntil`), deleted once done: a push answered is never left unread, and the reading never holds it up.
 */
@Entity('issue_push')
@Index('IDX_issue_push_claimed_until', ['claimedUntil'])
export class IssuePushEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  /** Who pushed (the doer of the closes and references). */
  @RefColumn()
  pusherId: number;

  /** The full ref name, `refs/heads/…`. */
  @TextColumn(255)
  ref: string;

  /** The ref's commit before the push; all zeros for a new branch. */
  @TextColumn(64)
  beforeSha: string;

  @TextColumn(64)
  afterSha: string;

  /** Failed readings so far; the row is dropped after a few. */
  @CounterColumn()
  attempts: number;

  /** Unix seconds until which an instance holds the row; 0 when free. */
  @UnixTimeColumn()
  claimedUntil: number;

  @UnixTimeColumn()
  createdUnix: number;
}

/**
 * A user an issue's body or one of its comments mentions (`@name`), recorded when the user could read the
 * repository's issues at the time; `mentioned_by` lists by it. Edits add mentions, never take them away.
 */
@Entity('issue_mention')
@Index('IDX_issue_mention_issue_id_user_id', ['issueId', 'userId'], { unique: true })
@Index('IDX_issue_mention_user_id', ['userId'])
export class IssueMentionEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  userId: number;
}
