import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { LabelStore } from './label.store';

/** A deleted repository or organisation takes its labels with it, in the same transaction (src/events/subscribers.ts). */
@Injectable()
export class LabelsLifecycle {
  constructor(private readonly labels: LabelStore) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.labels.deleteAllOf(tx, { repoId: repo.id, orgId: 0 });
  }

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.labels.deleteAllOf(tx, { repoId: 0, orgId: user.id });
  }
}
