import { Module } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { CollaborationStore } from './collaboration.store';
import { CollaboratorsController } from './collaborators.controller';
import { CollaboratorsService } from './collaborators.service';
import { CollaboratorsLifecycle } from './collaborators-lifecycle';

/** Repository collaborators: users given a mode on one repository beside its owner. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [CollaboratorsController],
  providers: [CollaborationStore, CollaboratorsService, CollaboratorsLifecycle],
})
export class CollaboratorsModule {}
