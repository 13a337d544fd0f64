import { Module } from '@nestjs/common';
import { GitModule } from '../git/git.module';
import { DeployKeysModule } from '../deploy-keys/deploy-keys.module';
import { KeysModule } from '../keys/keys.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { LfsModule } from '../lfs/lfs.module';
import { SshServer } from './ssh-server';

/** The built-in SSH server for git (SSH_ENABLED, on by default). */
@Module({
  imports: [UsersModule, KeysModule, DeployKeysModule, ReposModule, GitModule, LfsModule],
  providers: [SshServer],
})
export class SshModule {}
