import { Module, OnModuleInit } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { PublicKeysService } from '../keys/ssh/public-keys.service';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { DeployKeyLookup } from './deploy-key-lookup';
import { DeployKeyStore } from './deploy-key.store';
import { DeployKeysController } from './deploy-keys.controller';
import { DeployKeysService } from './deploy-keys.service';

/** Deploy keys: SSH keys that reach one repository each, read-only or read-write. */
@Module({
  imports: [UsersModule, KeysModule, ReposModule],
  controllers: [DeployKeysController],
  providers: [DeployKeyStore, DeployKeysService, DeployKeyLookup],
  exports: [DeployKeyLookup],
})
export class DeployKeysModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly userKeys: PublicKeysService,
    private readonly keys: DeployKeyStore,
  ) {}

  onModuleInit(): void {
    // A deleted repository's keys go in the deleting transaction: the key is locked out at its next login.
    this.repositories.onRepositoryDeleted((tx, repo) => this.keys.deleteAllOfRepository(tx, repo.id));
    // The same material is never a user's key and a deploy key at once.
    this.userKeys.addKeyMaterialHolder((fingerprint, tx, options) => this.keys.fingerprintTaken(fingerprint, tx, options));
  }
}
