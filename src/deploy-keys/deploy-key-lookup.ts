import { Injectable } from '@nestjs/common';
import { DeployKeyEntity } from './deploy-key.entity';
import { DeployKeyStore } from './deploy-key.store';

/**
 * What the SSH server asks of deploy keys: which deploy key holds this material, and that it was used.
 * DeployKeyStore stays inside the deploy-keys module; each method is its one statement, returned as it is.
 */
@Injectable()
export class DeployKeyLookup {
  constructor(private readonly store: DeployKeyStore) {}

  /** The oldest deploy key with this fingerprint (`SHA256:…`), if any. */
  firstByFingerprint(fingerprint: string): Promise<DeployKeyEntity | null> {
    return this.store.findFirstByFingerprint(fingerprint);
  }

  /** Records a use of the repository's key with this fingerprint (after a git command that succeeded). */
  recordUse(repoId: number, fingerprint: string, nowUnix: number): Promise<void> {
    return this.store.touch(repoId, fingerprint, nowUnix);
  }
}
