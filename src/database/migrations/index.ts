import { CreateUsers1763700000000 } from './1763700000000-create-users';
import { CreateKeys1763700100000 } from './1763700100000-create-keys';
import { FollowsAndUserSearch1763700200000 } from './1763700200000-follows-and-user-search';
import { CreateRepositories1763700300000 } from './1763700300000-create-repositories';
import { CreateQuota1763800000000 } from './1763800000000-create-quota';
import { CreateMirrors1764300000000 } from './1764300000000-create-mirrors';
import { CreateReleases1764400000000 } from './1764400000000-create-releases';
import { CreatePackages1764400100000 } from './1764400100000-create-packages';
import { RepositorySearchIndex1764500000000 } from './1764500000000-repository-search-index';
import { RepositorySearchGeneration1764500100000 } from './1764500100000-repository-search-generation';
import { CreateRateLimits1764520000000 } from './1764520000000-create-rate-limits';
import { ExternalAttachments1764530000000 } from './1764530000000-external-attachments';
import { RepositoryUsageIndex1764550000000 } from './1764550000000-repository-usage-index';
import { RepositoryUsageTotals1764560000000 } from './1764560000000-repository-usage-totals';
import { TeamsCollaboratorsDeployKeys1764600000000 } from './1764600000000-teams-collaborators-deploy-keys';
import { TopicsArchiveLanguages1764610000000 } from './1764610000000-topics-archive-languages';
import { CreateLabels1764620000000 } from './1764620000000-create-labels';
import { CreateWebhooksAndStatuses1764640000000 } from './1764640000000-create-webhooks-and-statuses';
import { CreateClaims1764650000000 } from './1764650000000-create-claims';
import { CreateOAuth21795712282862 } from './1795712282862-create-oauth2';
import { CreateAuditEvents1795712695210 } from './1795712695210-create-audit-events';
import { SearchGenerationGrants1795716000000 } from './1795716000000-search-generation-grants';
import { RepositoryForks1796174710906 } from './1796174710906-repository-forks';
import { RepositorySizeTickets1796176079641 } from './1796176079641-repository-size-tickets';
import { RepositoryLfsSize1796184245392 } from './1796184245392-repository-lfs-size';
import { CreateBranchProtections1796184297451 } from './1796184297451-create-branch-protections';
import { CreateIssuePushes1796186458408 } from './1796186458408-create-issue-pushes';
import { CreateIssueMentions1796186458409 } from './1796186458409-create-issue-mentions';
import { MediumTextBodies1796186458410 } from './1796186458410-medium-text-bodies';
import { CreateReviews1796198454044 } from './1796198454044-create-reviews';
import { CommentReviewId1796199264777 } from './1796199264777-comment-review-id';
import { IssueCoveringIndexes1796187646749 } from './1796187646749-issue-covering-indexes';
import { DropWebhookDeliveryClaimIndex1795720000000 } from './1795720000000-drop-webhook-delivery-claim-index';
import { CreateLfs1796172609408 } from './1796172609408-create-lfs';
import { CreateIssues1796174642066 } from './1796174642066-create-issues';
import { CreatePullRequests1796186088002 } from './1796186088002-create-pull-requests';
import { CreatePullMerges1796186469501 } from './1796186469501-create-pull-merges';
import { CreateMilestones1796184284076 } from './1796184284076-create-milestones';
import { CreateReactions1796185153404 } from './1796185153404-create-reactions';
import { CreateIssueDependencies1796188422660 } from './1796188422660-create-issue-dependencies';
import { CommentEventColumns1796197026230 } from './1796197026230-comment-event-columns';
import { MirrorLfs1796199137656 } from './1796199137656-mirror-lfs';
import { IssueListIndex1796198540390 } from './1796198540390-issue-list-index';
import { IssueAllStatesIndexes1796213700000 } from './1796213700000-issue-all-states-indexes';
import { TeamReviewRequests1796268047812 } from './1796268047812-team-review-requests';
import { IssueLabelListColumns1796301000000 } from './1796301000000-issue-label-list-columns';
import { UserSearchGramBinary1796400000000 } from './1796400000000-user-search-gram-binary';
import { RepositoryObjectPoolIndex1796500000000 } from './1796500000000-repository-object-pool-index';

/** Every migration, oldest first. Each entity change ships one (house style: never synchronize). */
export const MIGRATIONS = [
  CreateUsers1763700000000,
  CreateKeys1763700100000,
  FollowsAndUserSearch1763700200000,
  CreateRepositories1763700300000,
  CreateQuota1763800000000,
  CreateMirrors1764300000000,
  CreateReleases1764400000000,
  CreatePackages1764400100000,
  RepositorySearchIndex1764500000000,
  RepositorySearchGeneration1764500100000,
  CreateRateLimits1764520000000,
  ExternalAttachments1764530000000,
  RepositoryUsageIndex1764550000000,
  RepositoryUsageTotals1764560000000,
  TeamsCollaboratorsDeployKeys1764600000000,
  TopicsArchiveLanguages1764610000000,
  CreateLabels1764620000000,
  CreateWebhooksAndStatuses1764640000000,
  CreateClaims1764650000000,
  CreateOAuth21795712282862,
  CreateAuditEvents1795712695210,
  SearchGenerationGrants1795716000000,
  DropWebhookDeliveryClaimIndex1795720000000,
  CreateLfs1796172609408,
  CreateIssues1796174642066,
  RepositoryForks1796174710906,
  RepositorySizeTickets1796176079641,
  RepositoryLfsSize1796184245392,
  CreateMilestones1796184284076,
  CreateBranchProtections1796184297451,
  CreateReactions1796185153404,
  CreatePullRequests1796186088002,
  CreateIssuePushes1796186458408,
  CreateIssueMentions1796186458409,
  MediumTextBodies1796186458410,
  CreatePullMerges1796186469501,
  IssueCoveringIndexes1796187646749,
  CreateIssueDependencies1796188422660,
  CommentEventColumns1796197026230,
  CreateReviews1796198454044,
  IssueListIndex1796198540390,
  MirrorLfs1796199137656,
  CommentReviewId1796199264777,
  IssueAllStatesIndexes1796213700000,
  TeamReviewRequests1796268047812,
  IssueLabelListColumns1796301000000,
  UserSearchGramBinary1796400000000,
  RepositoryObjectPoolIndex1796500000000,
];
