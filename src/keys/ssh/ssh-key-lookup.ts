import { Injectable } from '@nestjs/common';
import { PublicKeyEntity } from './public-key.entity';
import { PublicKeyStore } from './public-key.store';

/**
 * What the SSH server asks of users' SSH keys: which key holds this material, and that a key was used.
 * PublicKeyStore stays inside the keys module; each method is its one statement, returned as it is.
 */
@Injectable()
export class SshKeyLookup {
  constructor(private readonly store: PublicKeyStore) {}

  /** The user key with this fingerprint (`SHA256:…`), if any. */
  byFingerprint(fingerprint: string): Promise<PublicKeyEntity | null> {
    return this.store.findByFingerprint(fingerprint);
  }

  /** Records a use of the key (after a git command that succeeded). */
  recordUse(id: number, nowUnix: number): Promise<void> {
    return this.store.touch(id, nowUnix);
  }
}
