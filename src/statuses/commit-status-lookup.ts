import { Injectable } from '@nestjs/common';
import type { Page } from '../common/paging';
import type { CommitStatusEntity } from './commit-status.entity';
import { CommitStatusStore } from './commit-status.store';

/** The latest status of each context of a commit, for the rules that gate on them (merges). */
@Injectable()
export class CommitStatusLookup {
  constructor(private readonly store: CommitStatusStore) {}

  /** Newest first, at most `limit` contexts. */
  latestPerContext(repoId: number, sha: string, limit = 1000): Promise<Page<CommitStatusEntity>> {
    return this.store.latestPerContext(repoId, sha, { page: 1, limit, offset: 0 });
  }
}
