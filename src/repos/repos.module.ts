import { Module, OnModuleInit } from '@nestjs/common';
import { UsersModule } from '../users/users.module';
import { UsersService } from '../users/users.service';
import { GitModule } from '../git/git.module';
import { AllowAllQuotaGate, QUOTA_GATE } from './quota-gate';
import { RepositoriesController } from './repositories.controller';
import { RepositoriesService } from './repositories.service';
import { RepositoryAccess } from './repository-access';
import { RepositoryGitAccess } from './repository-git-access';
import { RepositoryPushes } from './repository-pushes.service';
import { RepositoryListsController } from './repository-lists.controller';
import { RepositoryListsService } from './repository-lists.service';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import { StarStore } from './star.store';
import { StarsController } from './stars.controller';
import { StarsService } from './stars.service';
import { RepositoryTemplates } from './templates/repository-templates';
import { WatchStore } from './watch.store';
import { WatchesController } from './watches.controller';
import { WatchesService } from './watches.service';

/** Repositories: git storage, creation, search, lists, stars and watches. */
@Module({
  imports: [UsersModule, GitModule],
  controllers: [RepositoriesController, RepositoryListsController, StarsController, WatchesController],
  providers: [
    RepositoryTemplates,
    RepositoryStore,
    StarStore,
    WatchStore,
    RepositoryAccess,
    RepositoryGitAccess,
    RepositoryPushes,
    RepositoryViews,
    RepositoriesService,
    RepositoryListsService,
    StarsService,
    WatchesService,
    // The quota engine (a later issue) replaces this provider with its own gate.
    { provide: QUOTA_GATE, useClass: AllowAllQuotaGate },
  ],
  exports: [RepositoriesService, RepositoryStore, RepositoryAccess, RepositoryViews, RepositoryGitAccess, QUOTA_GATE],
})
export class ReposModule implements OnModuleInit {
  constructor(
    private readonly users: UsersService,
    private readonly stars: StarStore,
    private readonly watches: WatchStore,
  ) {}

  onModuleInit(): void {
    // A deleted user's stars and watches go with them, and the repositories' counters follow.
    this.users.onUserDeleted(async (tx, user) => {
      await this.stars.deleteAllOfUser(tx, user.id);
      await this.watches.deleteAllOfUser(tx, user.id);
    });
  }
}
