import { Module, OnModuleInit } from '@nestjs/common';
import { AccessModule } from '../access/access.module';
import { GitModule } from '../git/git.module';
import { LabelsModule } from '../labels/labels.module';
import { LabelsService } from '../labels/labels.service';
import { MilestonesModule } from '../milestones/milestones.module';
import { MilestonesService } from '../milestones/milestones.service';
import { ReposModule } from '../repos/repos.module';
import { TeamsModule } from '../teams/teams.module';
import { UsersModule } from '../users/users.module';
import { CommentStore } from './comment.store';
import { CommitReferences } from './commit-references';
import { IssuePushStore } from './issue-push.store';
import { CommentsController } from './comments.controller';
import { CommentsService } from './comments.service';
import { IssueStore } from './issue.store';
import { AssigneesController, IssueLabelsController, IssueSearchController, IssuesController } from './issues.controller';
import { IssueLabelsService } from './issue-labels.service';
import { IssuesLifecycle } from './issues-lifecycle';
import { IssuesService } from './issues.service';
import { IssueListsService } from './issue-lists.service';
import { IssueTimeline } from './issue-timeline';
import { IssueParticipants } from './issue-participants';
import { IssuePinsController } from './issue-pins.controller';
import { IssuePinsService } from './issue-pins.service';
import { IssueDependenciesController } from './issue-dependencies.controller';
import { IssueDependenciesService } from './issue-dependencies.service';
import { ReactionStore } from './reaction.store';
import { ReactionsController } from './reactions.controller';
import { ReactionsService } from './reactions.service';

/**
 * The issue tracker: issues of repositories, their comments, labels and assignees, the search across repositories,
 * and the issue references of pushed commits.
 */
@Module({
  imports: [UsersModule, ReposModule, LabelsModule, MilestonesModule, AccessModule, GitModule, TeamsModule],
  // The pinned list before the issue routes: `issues/pinned` is not an issue number.
  controllers: [
    IssueSearchController,
    CommentsController,
    IssuePinsController,
    IssuesController,
    IssueLabelsController,
    AssigneesController,
    ReactionsController,
    IssueDependenciesController,
  ],
  providers: [
    IssueStore,
    CommentStore,
    ReactionStore,
    IssuePushStore,
    IssueTimeline,
    IssueParticipants,
    IssuesService,
    IssueListsService,
    CommentsService,
    IssueLabelsService,
    ReactionsService,
    IssueDependenciesService,
    IssuePinsService,
    CommitReferences,
    IssuesLifecycle,
  ],
  exports: [IssuesService, CommentsService, IssueTimeline],
})
export class IssuesModule implements OnModuleInit {
  constructor(
    private readonly labels: LabelsService,
    private readonly milestones: MilestonesService,
    private readonly issues: IssueStore,
  ) {}

  onModuleInit(): void {
    // In the deleting transaction: a label or a milestone leaves its issues (a deleted repository or user:
    // IssuesLifecycle).
    this.labels.onLabelDeleted((tx, labelId) => this.issues.removeLabelEverywhere(tx, labelId));
    this.milestones.onMilestoneDeleted((tx, milestone) => this.issues.removeMilestoneEverywhere(tx, milestone.id));
  }
}
