import { Injectable } from '@nestjs/common';
import type { AfterCommit, RepositoryDeleted } from '../events/lifecycle-events';
import { PullMergeStore } from './pull-merge.store';
import { PullRequestStore } from './pull-request.store';
import { PullsService } from './pulls.service';

/** What pull requests do on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class PullsLifecycle {
  constructor(
    private readonly pulls: PullsService,
    private readonly store: PullRequestStore,
    private readonly merges: PullMergeStore,
  ) {}

  /** In the deleting transaction: a repository takes its pull requests along (their issues go with the issues). */
  async repositoryDeleted({ tx, repo, doerId }: RepositoryDeleted): Promise<AfterCommit | void> {
    await this.merges.deleteOfRepository(tx, repo.id);
    await this.store.deleteAllOfRepository(tx, repo.id);
    // A fork's pull requests into its network are closed, not deleted.
    return this.pulls.onHeadRepositoryDeleted(tx, repo.id, doerId);
  }
}
