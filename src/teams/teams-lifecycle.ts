import { Injectable } from '@nestjs/common';
import type { RepositoryDeleted } from '../events/lifecycle-events';
import { TeamStore } from './team.store';

/** A deleted repository leaves no team link behind: the links go in the deleting transaction (src/events/subscribers.ts). */
@Injectable()
export class TeamsLifecycle {
  constructor(private readonly teams: TeamStore) {}

  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.teams.deleteLinksOfRepository(tx, repo.id);
  }
}
