import { Module } from '@nestjs/common';
import { KeysModule } from '../keys/keys.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { AdminKeysController } from './admin-keys.controller';
import { AdminOrganizationsController } from './admin-organizations.controller';
import { AdminRepositoriesController } from './admin-repositories.controller';
import { AdminUsersController } from './admin-users.controller';

/** /admin routes: thin controllers over the feature services. */
@Module({
  imports: [UsersModule, KeysModule, ReposModule],
  controllers: [AdminUsersController, AdminOrganizationsController, AdminKeysController, AdminRepositoriesController],
})
export class AdminModule {}
