import { Module } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { AdminUsersController } from './admin-users.controller';

/** /admin routes: thin controllers over the feature services. */
@Module({ imports: [UsersModule], controllers: [AdminUsersController] })
export class AdminModule {}
