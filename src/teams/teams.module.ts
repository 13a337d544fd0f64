import { Module, OnModuleInit } from '@nestjs/common';
import { ReposModule } from '../repos/repos.module';
import { RepositoriesService } from '../repos/repositories.service';
import { UsersModule } from '../users/users.module';
import { TeamStore } from './team.store';
import { TeamRepositoriesController } from './teams.controller';
import { TeamsService } from './teams.service';

/** Teams of organisations beyond Owners: their units and the repositories they reach. */
@Module({
  imports: [UsersModule, ReposModule],
  controllers: [TeamRepositoriesController],
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
