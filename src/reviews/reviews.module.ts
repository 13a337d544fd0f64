import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { ContentModule } from '../content/content.module';
import { GitModule } from '../git/git.module';
import { IssuesModule } from '../issues/issues.module';
import { PullsModule } from '../pulls/pulls.module';
import { PullsService } from '../pulls/pulls.service';
import { ReposModule } from '../repos/repos.module';
import { TeamsModule } from '../teams/teams.module';
import { UsersModule } from '../users/users.module';
import { ReviewRequestsService } from './review-requests.service';
import { ReviewStates } from './review-states';
import { ReviewStore } from './review.store';
import { ReviewsController } from './reviews.controller';
import { ReviewsService } from './reviews.service';

/** Reviews of pull requests and requests for them; what the merge rules count and what head pushes make stale. */
@Module({
  imports: [UsersModule, ReposModule, AccessModule, ContentModule, GitModule, IssuesModule, PullsModule, TeamsModule],
  controllers: [ReviewsController],
  providers: [ReviewStore, ReviewsService, ReviewRequestsService, ReviewStates],
  exports: [ReviewsService],
})
export class ReviewsModule implements OnModuleInit {
  constructor(
    private readonly states: ReviewStates,
    private readonly pulls: PullsService,
  ) {}

  onModuleInit(): void {
    this.pulls.useReviews({
      summaries: (issueIds, tx) => this.states.summaries(issueIds, tx),
      mergeReviews: (issueId) => this.states.mergeReviews(issueId),
      headMoved: (target, row, oldHead, newHead) => this.states.headMoved(target, row, oldHead, newHead),
      deleted: (tx, issueId) => this.states.deleted(tx, issueId),
    });
  }
}
