import { Injectable } from '@nestjs/common';
import type { UserDeleted } from '../events/lifecycle-events';
import { GpgKeyStore } from './gpg/gpg-key.store';
import { PublicKeyStore } from './ssh/public-key.store';

/** A deleted user's SSH and GPG keys go in the deleting transaction (src/events/subscribers.ts). */
@Injectable()
export class KeysLifecycle {
  constructor(
    private readonly sshKeys: PublicKeyStore,
    private readonly gpgKeys: GpgKeyStore,
  ) {}

  async userDeleted({ tx, user }: UserDeleted): Promise<void> {
    await this.sshKeys.deleteAllOfUser(tx, user.id);
    await this.gpgKeys.deleteAllOfUser(tx, user.id);
  }
}
