import { Injectable } from '@nestjs/common';
import type { AfterCommit, RepositoryDeleted, UserDeleted } from '../events/lifecycle-events';
import { LfsLockStore } from './lfs-lock.store';
import { LfsObjectStore } from './lfs-object.store';
import { LfsService } from './lfs.service';

/** What LFS does on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class LfsLifecycle {
  constructor(
    private readonly objects: LfsObjectStore,
    private readonly locks: LfsLockStore,
    private readonly lfs: LfsService,
  ) {}

  /**
   * A deleted repository's objects and locks go in the deleting transaction; after its commit, the files that no
   * other repository holds.
   */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<AfterCommit | undefined> {
    await this.locks.deleteOfRepository(tx, repo.id);
    const oids = await this.objects.deleteOfRepository(tx, repo.id);
    return oids.length === 0 ? undefined : () => this.lfs.removeUnreferenced(oids);
  }

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.locks.deleteOfOwner(tx, user.id);
  }
}
