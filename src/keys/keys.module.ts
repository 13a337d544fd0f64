import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
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
import { KeysLifecycle } from './keys-lifecycle';

/** SSH and GPG keys of users, and the plain-text listings `/{user}.keys` and `/{user}.gpg`. */
@Module({
  imports: [UsersModule],
  controllers: [PublicKeysController, GpgKeysController, PlainTextKeysController],
  providers: [PublicKeyStore, PublicKeysService, GpgKeyStore, GpgKeysService, OpenPgpAdapter, KeyOwners, SshKeyLookup, KeysLifecycle],
  exports: [PublicKeysService, SshKeyLookup],
})
export class KeysModule {}
