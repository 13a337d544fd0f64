import { Module, OnModuleInit } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { UsersService } from '../users/users.service';
import { GpgKeyStore } from './gpg/gpg-key.store';
import { GpgKeysController } from './gpg/gpg-keys.controller';
import { GpgKeysService } from './gpg/gpg-keys.service';
import { OpenPgpAdapter } from './gpg/openpgp.adapter';
import { KeyOwners } from './key-owners';
import { PlainTextKeysController } from './plain-text-keys.controller';
import { PublicKeyStore } from './ssh/public-key.store';
import { PublicKeysController } from './ssh/public-keys.controller';
import { PublicKeysService } from './ssh/public-keys.service';
import { SshKeyLookup } from './ssh/ssh-key-lookup';

/** SSH and GPG keys of users, and the plain-text listings `/{user}.keys` and `/{user}.gpg`. */
@Module({
  imports: [UsersModule],
  controllers: [PublicKeysController, GpgKeysController, PlainTextKeysController],
  providers: [PublicKeyStore, PublicKeysService, GpgKeyStore, GpgKeysService, OpenPgpAdapter, KeyOwners, SshKeyLookup],
  exports: [PublicKeysService, SshKeyLookup],
})
export class KeysModule implements OnModuleInit {
  constructor(
    private readonly users: UsersService,
    private readonly sshKeys: PublicKeyStore,
    private readonly gpgKeys: GpgKeyStore,
  ) {}

  onModuleInit(): void {
    this.users.onUserDeleted(async (tx, user) => {
      await this.sshKeys.deleteAllOfUser(tx, user.id);
      await this.gpgKeys.deleteAllOfUser(tx, user.id);
    });
  }
}
