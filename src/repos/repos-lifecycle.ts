import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { StarStore } from './star.store';
import { TopicStore } from './topic.store';
import { WatchStore } from './watch.store';

/** What the repositories module does on lifecycle events of others (src/events/subscribers.ts). */
@Injectable()
export class ReposLifecycle {
  constructor(
    private readonly stars: StarStore,
    private readonly watches: WatchStore,
    private readonly topics: TopicStore,
  ) {}

  /** A deleted user's stars and watches go with them, and the repositories' counters follow. */
  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.stars.deleteAllOfUser(tx, user.id);
    await this.watches.deleteAllOfUser(tx, user.id);
  }

  /** A deleted repository's topics lose it from their counts. */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.topics.deleteAllOfRepository(tx, repo.id);
  }
}
