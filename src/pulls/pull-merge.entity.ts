import { Entity, Index } from 'typeorm';
import { FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * A merge between its ref update and its recording: written before the base branch moves, removed in the
 * transaction that records the pull request as merged. One found at start-up (its merger died) is finished when
 * the branch holds the merge, dropped when it does not (docs/crash-safety.md).
 */
@Entity('pull_merge_intent')
@Index('IDX_pull_merge_intent_pull_id', ['pullId'], { unique: true })
export class PullMergeIntentEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  pullId: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  mergerId: number;

  /** merge, rebase, rebase-merge, squash or fast-forward-only. */
  @TextColumn(32)
  style: string;

  /** The base branch's full ref, what it held, and the tip the merge moves it to. */
  @TextColumn(255)
  ref: string;

  @TextColumn(64)
  oldCommitId: string;

  @TextColumn(64)
  newCommitId: string;

  /** The push's effects (size, `push` event) are recorded; only the pull request's own state may be missing. */
  @FlagColumn(false)
  pushRecorded: boolean;

  @UnixTimeColumn()
  createdUnix: number;
}

/** A merge scheduled for when the head's required statuses pass (`merge_when_checks_succeed`), as Forgejo's. */
@Entity('pull_auto_merge')
@Index('IDX_pull_auto_merge_pull_id', ['pullId'], { unique: true })
export class PullAutoMergeEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  pullId: number;

  @RefColumn()
  doerId: number;

  @TextColumn(32)
  mergeStyle: string;

  @LongTextColumn()
  message: string;

  @FlagColumn(false)
  deleteBranchAfterMerge: boolean;

  @UnixTimeColumn()
  createdUnix: number;
}
