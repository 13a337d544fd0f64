import { Module, OnModuleInit } from '@nestjs/common';
import { ClaimsModule } from '../claims/claims.module';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { RepositoryTeamsController } from './repository-teams.controller';
import { TeamStore } from './team.store';
import { TeamsController } from './teams.controller';
import { TeamsService } from './teams.service';

/** Teams of organisations: their permission and units, members and the repositories they reach. */
@Module({
  imports: [UsersModule, ReposModule, ClaimsModule],
  controllers: [TeamsController, RepositoryTeamsController],
  providers: [TeamStore, TeamsService],
})
export class TeamsModule implements OnModuleInit {
  constructor(
    private readonly repositories: RepositoriesService,
    private readonly teams: TeamStore,
  ) {}

  onModuleInit(): void {
    // A deleted repository leaves no team link behind: the links go in the deleting transaction.
    this.repositories.onRepositoryDeleted(async (tx, repo) => this.teams.deleteLinksOfRepository(tx, repo.id));
  }
}
