import { Module, OnModuleInit } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { UsersService } from '../users/users.service';
import { LabelLookup } from './label-lookup';
import { LabelStore } from './label.store';
import { OrganizationLabelsController, RepositoryLabelsController } from './labels.controller';
import { LabelsService } from './labels.service';

/** Labels of repositories and organisations. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [RepositoryLabelsController, OrganizationLabelsController],
  providers: [LabelStore, LabelsService, LabelLookup],
  exports: [LabelsService, LabelLookup],
})
export class LabelsModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly users: UsersService,
    private readonly labels: LabelStore,
  ) {}

  onModuleInit(): void {
    // A deleted repository or organisation takes its labels with it, in the same transaction.
    this.repositories.onRepositoryDeleted((tx, repo) => this.labels.deleteAllOf(tx, { repoId: repo.id, orgId: 0 }));
    this.users.onUserDeleted((tx, user) => this.labels.deleteAllOf(tx, { repoId: 0, orgId: user.id }));
  }
}
