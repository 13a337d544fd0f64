import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { ContentModule } from '../content/content.module';
import { GitModule } from '../git/git.module';
import { IssuesModule } from '../issues/issues.module';
import { IssuesService } from '../issues/issues.service';
import { ReposModule } from '../repos/repos.module';
import { UsersModule } from '../users/users.module';
import { StatusesModule } from '../statuses/statuses.module';
import { PullChecks } from './pull-checks';
import { PullMergeController } from './pull-merge.controller';
import { PullMergeService } from './pull-merge.service';
import { PullMergeStore } from './pull-merge.store';
import { PullHeads } from './pull-heads';
import { PullServerPushes } from './pull-server-pushes';
import { PullUpdatesService } from './pull-updates.service';
import { PullRequestStore } from './pull-request.store';
import { CompareController, PullsController } from './pulls.controller';
import { PullsLifecycle } from './pulls-lifecycle';
import { PullsService } from './pulls.service';

/** Pull requests: issues with a head and a base branch, their mergeability, diffs and commits; comparing revisions. */
@Module({
  imports: [UsersModule, ReposModule, AccessModule, IssuesModule, ContentModule, GitModule, StatusesModule],
  controllers: [PullMergeController, PullsController, CompareController],
  providers: [PullRequestStore, PullsService, PullHeads, PullChecks, PullMergeStore, PullMergeService, PullServerPushes, PullUpdatesService, PullsLifecycle],
  exports: [PullsService, PullChecks, PullMergeService],
})
export class PullsModule implements OnModuleInit {
  constructor(
    private readonly issues: IssuesService,
    private readonly pulls: PullsService,
    private readonly store: PullRequestStore,
  ) {}

  onModuleInit(): void {
    this.issues.usePullRequests({
      meta: (issues, tx) => this.pulls.meta(issues, tx),
      record: (tx, target, issue, change) => this.pulls.record(tx, target, issue, change),
      deleted: async (tx, issue) => {
        await this.pulls.deleteReviewsOf(tx, issue.id);
        await this.store.deleteOfIssue(tx, issue.id);
      },
    });
  }
}
