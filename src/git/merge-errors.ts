import { ConflictError } from '../common/errors';

/** The styles a pull request merges with, by Forgejo's names (`Do` of the merge option). */
export type MergeStyle = 'merge' | 'rebase' | 'rebase-merge' | 'squash' | 'fast-forward-only';

/** 409: the head and the base change the same lines; nothing was written that a ref points at. */
export class MergeConflictError extends ConflictError {
  constructor(
    readonly style: MergeStyle,
    readonly paths: string[],
  ) {
    super(`Merge Conflict Error: ${style}: conflicting files: ${paths.join(', ')}`);
  }
}

/** 409: a commit of the head does not apply on the base while rebasing. */
export class RebaseConflictError extends ConflictError {
  constructor(
    readonly style: MergeStyle,
    readonly commit: string,
    readonly paths: string[],
  ) {
    super(`Rebase Error: ${style}: cannot apply ${commit}: conflicting files: ${paths.join(', ')}`);
  }
}

/** 409: the head and the base share no history. */
export class UnrelatedHistoriesError extends ConflictError {
  constructor(readonly style: MergeStyle) {
    super(`Merge UnrelatedHistories Error: ${style}: refusing to merge unrelated histories`);
  }
}

/** 409: fast-forward-only, but the base has commits the head lacks. */
export class DivergingFastForwardError extends ConflictError {
  constructor() {
    super('Merge DivergingFastForwardOnly Error: Not possible to fast-forward, aborting');
  }
}

/** 409: the style would make a commit without changes (the base already holds everything of the head). */
export class NothingToMergeError extends ConflictError {
  constructor(readonly style: MergeStyle) {
    super(`${style}: the base branch already contains the changes of the head: nothing to commit`);
  }
}
