import { Module } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { RepositoryTeamsController } from './repository-teams.controller';
import { TeamDirectory } from './team-directory';
import { TeamStore } from './team.store';
import { TeamsController } from './teams.controller';
import { TeamsService } from './teams.service';
import { TeamsLifecycle } from './teams-lifecycle';

/** Teams of organisations: their permission and units, members and the repositories they reach. */
@Module({
  imports: [UsersModule, ReposModule, ClaimsModule],
  controllers: [TeamsController, RepositoryTeamsController],
  providers: [TeamStore, TeamsService, TeamsLifecycle, TeamDirectory],
  exports: [TeamDirectory],
})
export class TeamsModule {}
