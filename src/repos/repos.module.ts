import { Module } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { QuotaModule } from '../quota/quota.module';
import { UsersModule } from '../users/users.module';
import { GitModule } from '../git/git.module';
import { RepositoriesController } from './repositories.controller';
import { RepositoriesService } from './repositories.service';
import { RepositoryCreation } from './repository-creation.service';
import { RepositorySettings } from './repository-settings.service';
import { RepositoryAccess } from './repository-access';
import { RepositoryAssignment, RepositoryRouteLookup } from './repository-assignment';
import { RepositoryDirectory } from './repository-directory';
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
import { TopicStore } from './topic.store';
import { TopicsController } from './topics.controller';
import { TopicsService } from './topics.service';
import { ForksController } from './forks.controller';
import { ForksService } from './forks.service';
import { ReposLifecycle } from './repos-lifecycle';

/** Repositories: git storage, creation, search, lists, stars and watches. */
@Module({
  imports: [UsersModule, QuotaModule, GitModule, AccessModule],
  controllers: [RepositoriesController, RepositoryListsController, StarsController, WatchesController, TopicsController, ForksController],
  providers: [
    RepositoryTemplates,
    RepositoryStore,
    RepositoryDirectory,
    StarStore,
    WatchStore,
    RepositoryAccess,
    RepositoryAssignment,
    RepositoryRouteLookup,
    RepositoryGitAccess,
    RepositoryPushes,
    RepositoryViews,
    RepositoriesService,
    RepositoryCreation,
    RepositorySettings,
    RepositoryListsService,
    StarsService,
    WatchesService,
    TopicStore,
    TopicsService,
    ForksService,
    ReposLifecycle,
  ],
  exports: [
    AccessModule,
    RepositoriesService,
    ForksService,
    RepositoryCreation,
    RepositorySettings,
    RepositoryDirectory,
    RepositoryAccess,
    RepositoryAssignment,
    RepositoryRouteLookup,
    RepositoryViews,
    RepositoryGitAccess,
    RepositoryPushes,
    QuotaModule,
  ],
})
export class ReposModule {}
