import { Module } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { LabelLookup } from './label-lookup';
import { LabelStore } from './label.store';
import { OrganizationLabelsController, RepositoryLabelsController } from './labels.controller';
import { LabelsService } from './labels.service';
import { LabelsLifecycle } from './labels-lifecycle';

/** Labels of repositories and organisations. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [RepositoryLabelsController, OrganizationLabelsController],
  providers: [LabelStore, LabelsService, LabelLookup, LabelsLifecycle],
  exports: [LabelsService, LabelLookup],
})
export class LabelsModule {}
