import { Injectable } from '@nestjs/common';
import type { KeyMaterialClaimed, RepositoryDeleted } from '../events/lifecycle-events';
import { DeployKeyStore } from './deploy-key.store';

/** What deploy keys do on lifecycle events (src/events/subscribers.ts). */
@Injectable()
export class DeployKeysLifecycle {
  constructor(private readonly keys: DeployKeyStore) {}

  /** A deleted repository's keys go in the deleting transaction: the key is locked out at its next login. */
  async repositoryDeleted({ tx, repo }: RepositoryDeleted): Promise<void> {
    await this.keys.deleteAllOfRepository(tx, repo.id);
  }

  /** Whether a deploy key holds this material. */
  materialTaken({ fingerprint, tx, locking }: KeyMaterialClaimed): Promise<boolean> {
    return this.keys.fingerprintTaken(fingerprint, tx, { locking });
  }
}
