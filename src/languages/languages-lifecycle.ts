import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted } from '../events/lifecycle-events';
import { LanguageStatStore } from './language-stat.store';

/** A deleted repository's language statistics go in the deleting transaction (src/events/subscribers.ts). */
@Injectable()
export class LanguagesLifecycle {
  constructor(private readonly stats: LanguageStatStore) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.stats.deleteAllOfRepository(tx, repo.id);
  }
}
