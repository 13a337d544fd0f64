import { Module, OnModuleInit } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { ContentModule } from '../content/content.module';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { CommitStatusLookup } from './commit-status-lookup';
import { CommitStatusStore } from './commit-status.store';
import { StatusesController } from './statuses.controller';
import { StatusesService } from './statuses.service';

/** Commit statuses (POST/GET statuses, the combined status of a ref) and their `status` event. */
@Module({
  imports: [ContentModule, ReposModule, UsersModule, ClaimsModule],
  controllers: [StatusesController],
  providers: [CommitStatusStore, StatusesService, CommitStatusLookup],
  exports: [CommitStatusLookup, StatusesService],
})
export class StatusesModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly statuses: CommitStatusStore,
  ) {}

  onModuleInit(): void {
    this.repositories.onRepositoryDeleted((tx, repo) => this.statuses.deleteOfRepository(tx, repo.id));
  }
}
