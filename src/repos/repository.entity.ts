import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, CounterColumn, FlagColumn, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A git repository's row; its files live at DATA_DIR/repositories/<owner>/<name>.git (git/repository-paths.ts). */
@Entity('repository')
@Index('IDX_repository_owner_id_lower_name', ['ownerId', 'lowerName'], { unique: true })
@Index('IDX_repository_lower_name', ['lowerName'])
@Index('IDX_repository_owner_id', ['ownerId'])
@Index('IDX_repository_owner_private_size', ['ownerId', 'isPrivate', 'gitSize'])
@Index('IDX_repository_created_unix', ['createdUnix'])
@Index('IDX_repository_updated_unix', ['updatedUnix'])
@Index('IDX_repository_num_stars', ['numStars'])
@Index('IDX_repository_git_size', ['gitSize'])
@Index('IDX_repository_lfs_size', ['lfsSize'])
@Index('IDX_repository_fork_id', ['forkId'])
@Index('IDX_repository_object_pool', ['objectPool'])
export class RepositoryEntity {
  @IdColumn()
  id: number;

  /** The owning user or organisation. */
  @RefColumn()
  ownerId: number;

  @TextColumn(100)
  lowerName: string;

  @TextColumn(100)
  name: string;

  @TextColumn(2048)
  description: string;

  @TextColumn(2048)
  website: string;

  /** Migration source without credentials; '' for repositories created here. */
  @TextColumn(2048)
  originalUrl: string;

  @TextColumn(255)
  defaultBranch: string;

  @TextColumn(16)
  objectFormatName: string;

  @FlagColumn(false)
  isPrivate: boolean;

  /** True while the repository has no commit. */
  @FlagColumn(true)
  isEmpty: boolean;

  @FlagColumn(false)
  isTemplate: boolean;

  @FlagColumn(false)
  isMirror: boolean;

  /** Go duration such as `8h0m0s`; '' for non-mirrors. */
  @TextColumn(32)
  mirrorInterval: string;

  @UnixTimeColumn()
  mirrorUpdatedUnix: number;

  /** Read-only for everyone: no push, no content, branch, tag or release writes, no mirror sync. */
  @FlagColumn(false)
  isArchived: boolean;

  /** When it was last archived; 0 when never. */
  @UnixTimeColumn()
  archivedUnix: number;

  /** The topic names, sorted and comma-separated (the repo_topic rows are the index; see topic.store.ts). */
  @TextColumn(1024)
  topics: string;

  /** The language with the most bytes at the default branch when last measured (languages.service.ts); '' before. */
  @TextColumn(50)
  primaryLanguage: string;

  /** The issues unit: on (the built-in tracker, or the external one when `externalTrackerUrl` is set) or off. */
  @FlagColumn(true)
  hasIssues: boolean;

  /** Built-in tracker settings Forgejo reports (`internal_tracker`); Anvil has no time tracking yet. */
  @FlagColumn(true)
  enableTimeTracker: boolean;

  @FlagColumn(true)
  allowOnlyContributorsToTrackTime: boolean;

  @FlagColumn(true)
  enableIssueDependencies: boolean;

  /** An external tracker replaces the built-in one while set (http(s) URL); '' for none. */
  @TextColumn(2048)
  externalTrackerUrl: string;

  @TextColumn(2048)
  externalTrackerFormat: string;

  /** `numeric`, `alphanumeric` or `regexp`. */
  @TextColumn(16)
  externalTrackerStyle: string;

  @TextColumn(1024)
  externalTrackerRegexp: string;

  /** Issues (not pull requests), and how many of them are closed: moved with every create, close, reopen, delete. */
  @CounterColumn()
  numIssues: number;

  @CounterColumn()
  numClosedIssues: number;

  /** Pull requests, and how many of them are closed (merged ones included), moved as `numIssues`. */
  @CounterColumn()
  numPulls: number;

  @CounterColumn()
  numClosedPulls: number;

  /** The pull requests unit and its settings (Forgejo's defaults for a new unit). */
  @FlagColumn(true)
  hasPullRequests: boolean;

  @FlagColumn(false)
  ignoreWhitespaceConflicts: boolean;

  @FlagColumn(true)
  allowMergeCommits: boolean;

  @FlagColumn(true)
  allowRebase: boolean;

  @FlagColumn(true)
  allowRebaseExplicit: boolean;

  @FlagColumn(true)
  allowSquashMerge: boolean;

  @FlagColumn(true)
  allowFastForwardOnlyMerge: boolean;

  @FlagColumn(true)
  allowRebaseUpdate: boolean;

  @FlagColumn(false)
  allowManualMerge: boolean;

  @FlagColumn(false)
  autodetectManualMerge: boolean;

  @FlagColumn(false)
  defaultDeleteBranchAfterMerge: boolean;

  /** merge, rebase, rebase-merge, squash, fast-forward-only or manually-merged. */
  @TextColumn(32, { default: 'merge' })
  defaultMergeStyle: string;

  @FlagColumn(false)
  defaultAllowMaintainerEdit: boolean;

  @CounterColumn()
  numStars: number;

  /** True while the repository is a fork of an existing source (docs/forks.md). */
  @FlagColumn(false)
  isFork: boolean;

  /** The source of a fork, one level; 0 for a repository that is not (or no longer) a fork. */
  @RefColumn({ default: 0 })
  forkId: number;

  /** Direct forks, moved in the transaction that inserts or deletes one. */
  @CounterColumn()
  numForks: number;

  /** The name of the object pool of the repository's fork network; '' outside any network. */
  @TextColumn(64)
  objectPool: string;

  @CounterColumn()
  numWatches: number;

  /** Bytes of the regular files in the repository directory (docs/quota.md). */
  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  gitSize: number;

  /** Bytes of the LFS objects the repository holds; moves in the transaction that adds or removes a row. */
  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  lfsSize: number;

  /**
   * Measurements of the size begun (each takes the next number before it walks the directory), and the number
   * of the one `gitSize` holds: a measurement is stored only over an older one, so that of measurements racing
   * on several instances the one begun last wins, whichever commits last.
   */
  @UnixTimeColumn()
  gitSizeTicket: number;

  @UnixTimeColumn()
  gitSizeStoredTicket: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
