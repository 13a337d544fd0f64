import { Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** Where a pull request stands with its base, as Forgejo numbers it (`status`). */
export enum PullStatus {
  Conflict = 0,
  Checking = 1,
  Mergeable = 2,
  ManuallyMerged = 3,
  Error = 4,
  Empty = 5,
  Ancestor = 6,
}

/**
 * A pull request: the issue row (`issue.is_pull`) carries its number, title, body, state, labels and comments;
 * this row adds the branches and what git says about them. The head ref `refs/pull/{n}/head` of the base
 * repository follows `headCommitId`. Mergeability is tested in the background (pull-checks.ts): `checkVersion`
 * moves with every change that asks for a new test, and a result is kept only for the version it tested.
 */
@Entity('pull_request')
@Index('IDX_pull_request_issue_id', ['issueId'], { unique: true })
@Index('IDX_pull_request_base_repo_id_base_branch', ['baseRepoId', 'baseBranch'])
@Index('IDX_pull_request_head_repo_id_head_branch', ['headRepoId', 'headBranch'])
@Index('IDX_pull_request_base_repo_id_merged_commit_id', ['baseRepoId', 'mergedCommitId'])
@Index('IDX_pull_request_status_check_claimed_until', ['status', 'checkClaimedUntil'])
export class PullRequestEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  issueId: number;

  /** The issue's number, copied for lookups that start from the pull request. */
  @RefColumn()
  repoIndex: number;

  @RefColumn()
  baseRepoId: number;

  /** The repository the head branch lives in (the base repository itself until forks can propose). */
  @RefColumn()
  headRepoId: number;

  @TextColumn(255)
  headBranch: string;

  @TextColumn(255)
  baseBranch: string;

  /** The commit the head branch held when last seen (also in `refs/pull/{n}/head`). */
  @TextColumn(64)
  headCommitId: string;

  /** The commit the base branch held when last tested. */
  @TextColumn(64)
  baseCommitId: string;

  @TextColumn(64)
  mergeBase: string;

  @CounterColumn()
  status: number;

  /** JSON array of the paths a merge would conflict on; '[]' when none. */
  @LongTextColumn()
  conflictedFiles: string;

  @CounterColumn()
  commitsAhead: number;

  @CounterColumn()
  commitsBehind: number;

  /** Lines and files changed between the merge base and the head, as last tested. */
  @CounterColumn()
  additions: number;

  @CounterColumn()
  deletions: number;

  @CounterColumn()
  changedFiles: number;

  @FlagColumn(false)
  allowMaintainerEdit: boolean;

  @FlagColumn(false)
  hasMerged: boolean;

  @TextColumn(64)
  mergedCommitId: string;

  @RefColumn({ default: 0 })
  mergerId: number;

  @UnixTimeColumn()
  mergedUnix: number;

  /** Moved by every change that asks for a new mergeability test. */
  @CounterColumn()
  checkVersion: number;

  /** An instance testing the pull request holds it until then (unix seconds); 0 when nobody does. */
  @UnixTimeColumn()
  checkClaimedUntil: number;
}
