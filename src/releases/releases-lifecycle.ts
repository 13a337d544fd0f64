import { Injectable } from '@nestjs/common';
import type { AfterCommit, RepositoryDeleted } from '../events/lifecycle-events';
import { ReleaseStore } from './release.store';
import { ReleasesService } from './releases.service';

/** What releases do on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class ReleasesLifecycle {
  constructor(
    private readonly store: ReleaseStore,
    private readonly releases: ReleasesService,
  ) {}

  /** A deleted repository takes its releases, attachment rows and, after the commit, their files. */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<AfterCommit | undefined> {
    const uuids = await this.store.deleteAllOfRepository(tx, repo.id);
    return uuids.length > 0 ? () => this.releases.removeFiles(uuids) : undefined;
  }
}
