import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { ContentModule } from '../content/content.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { CommitStatusLookup } from './commit-status-lookup';
import { CommitStatusStore } from './commit-status.store';
import { StatusesController } from './statuses.controller';
import { StatusesService } from './statuses.service';
import { StatusesLifecycle } from './statuses-lifecycle';

/** Commit statuses (POST/GET statuses, the combined status of a ref) and their `status` event. */
@Module({
  imports: [ContentModule, ReposModule, UsersModule, ClaimsModule],
  controllers: [StatusesController],
  providers: [CommitStatusStore, StatusesService, CommitStatusLookup, StatusesLifecycle],
  exports: [CommitStatusLookup, StatusesService],
})
export class StatusesModule {}
