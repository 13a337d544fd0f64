import { Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { DeployKeyLookup } from './deploy-key-lookup';
import { DeployKeysLifecycle } from './deploy-keys-lifecycle';
import { DeployKeyStore } from './deploy-key.store';
import { DeployKeysController } from './deploy-keys.controller';
import { DeployKeysService } from './deploy-keys.service';

/** Deploy keys: SSH keys that reach one repository each, read-only or read-write. */
@Module({
  imports: [UsersModule, KeysModule, ReposModule],
  controllers: [DeployKeysController],
  providers: [DeployKeyStore, DeployKeysService, DeployKeyLookup, DeployKeysLifecycle],
  exports: [DeployKeyLookup],
})
export class DeployKeysModule {}
