import { Injectable } from '@nestjs/common';
import type { UserDeleted } from '../events/lifecycle-events';
import { QuotaStore } from './quota.store';

/** What the quota module does on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class QuotaLifecycle {
  constructor(private readonly store: QuotaStore) {}

  /** A deleted user or organisation leaves no group mapping behind. */
  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.store.deleteMappingsOf(tx, user.id);
  }
}
