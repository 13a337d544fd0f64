import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { WebhookStore } from './webhook.store';

/** A deleted repository's or owner's hooks go in the deleting transaction (src/events/subscribers.ts). */
@Injectable()
export class WebhooksLifecycle {
  constructor(private readonly store: WebhookStore) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.store.deleteOfRepository(tx, repo.id);
  }

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.store.deleteOfOwner(tx, user.id);
  }
}
