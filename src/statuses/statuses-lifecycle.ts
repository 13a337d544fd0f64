import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted } from '../events/lifecycle-events';
import { CommitStatusStore } from './commit-status.store';

/** A deleted repository's commit statuses go in the deleting transaction (src/events/subscribers.ts). */
@Injectable()
export class StatusesLifecycle {
  constructor(private readonly statuses: CommitStatusStore) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.statuses.deleteOfRepository(tx, repo.id);
  }
}
