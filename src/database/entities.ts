import { AuditEventEntity } from '../audit/audit-event.entity';
import { LfsLockEntity } from '../lfs/lfs-lock.entity';
import { LfsObjectEntity } from '../lfs/lfs-object.entity';
import {
  CommentEntity,
  IssueAssigneeEntity,
  IssueCounterEntity,
  IssueEntity,
  IssueLabelEntity,
  IssueMentionEntity,
  IssuePushEntity,
  IssueWordEntity,
} from '../issues/issue.entity';
import { LabelEntity } from '../labels/label.entity';
import { MilestoneEntity } from '../milestones/milestone.entity';
import { ReactionEntity } from '../issues/reaction.entity';
import { IssueDependencyEntity } from '../issues/issue-dependency.entity';
import { LanguageStatEntity } from '../languages/language-stat.entity';
import { MirrorEntity } from '../mirrors/mirror.entity';
import { QuotaGroupEntity, QuotaGroupMappingEntity, QuotaGroupRuleEntity, QuotaRuleEntity } from '../quota/quota.entities';
import { PackageBlobEntity, PackageEntity, PackageFileEntity, PackageVersionEntity } from '../packages/package.entities';
import { AttachmentEntity, ReleaseEntity } from '../releases/release.entities';
import { RepositoryEntity } from '../repos/repository.entity';
import { StarEntity } from '../repos/star.entity';
import { RepoTopicEntity, TopicEntity } from '../repos/topic.entities';
import { WatchEntity } from '../repos/watch.entity';
import { ForkEntity } from '../repos/fork.entity';
import { GpgKeyEntity } from '../keys/gpg/gpg-key.entity';
import { PublicKeyEntity } from '../keys/ssh/public-key.entity';
import { AccessTokenEntity } from '../users/access-token.entity';
import { EmailAddressEntity } from '../users/email-address.entity';
import { FollowEntity } from '../users/follow.entity';
import { OrgUserEntity, TeamEntity, TeamRepoEntity, TeamUserEntity } from '../users/organization.entities';
import { CollaborationEntity } from '../collaborators/collaboration.entity';
import { DeployKeyEntity } from '../deploy-keys/deploy-key.entity';
import { BranchProtectionEntity } from '../access/branch-protection.entity';
import { UserSearchGramEntity, UserSearchTextEntity } from '../users/user-search.entities';
import { UserEntity } from '../users/user.entity';
import { CommitStatusEntity } from '../statuses/commit-status.entity';
import { OAuth2ApplicationEntity, OAuth2RecordEntity, OAuth2SigningKeyEntity } from '../oauth2/oauth2.entities';
import { WebhookDeliveryEntity, WebhookEntity, WebhookEventEntity, WebhookLeaseEntity } from '../webhooks/webhook.entities';
import { PullAutoMergeEntity, PullMergeIntentEntity } from '../pulls/pull-merge.entity';
import { PullRequestEntity } from '../pulls/pull-request.entity';
import { ReviewCommentEntity, ReviewEntity } from '../reviews/review.entity';

/** Every entity the data source knows; a module adds its own here. */
export const ENTITIES = [
  UserEntity,
  EmailAddressEntity,
  AccessTokenEntity,
  OrgUserEntity,
  TeamEntity,
  TeamUserEntity,
  TeamRepoEntity,
  CollaborationEntity,
  DeployKeyEntity,
  RepositoryEntity,
  ForkEntity,
  StarEntity,
  WatchEntity,
  FollowEntity,
  UserSearchGramEntity,
  UserSearchTextEntity,
  PublicKeyEntity,
  GpgKeyEntity,
  QuotaRuleEntity,
  QuotaGroupEntity,
  QuotaGroupRuleEntity,
  QuotaGroupMappingEntity,
  ReleaseEntity,
  AttachmentEntity,
  PackageEntity,
  PackageVersionEntity,
  PackageFileEntity,
  PackageBlobEntity,
  MirrorEntity,
  TopicEntity,
  RepoTopicEntity,
  LanguageStatEntity,
  LabelEntity,
  CommitStatusEntity,
  WebhookEntity,
  WebhookEventEntity,
  WebhookDeliveryEntity,
  WebhookLeaseEntity,
  OAuth2ApplicationEntity,
  OAuth2RecordEntity,
  OAuth2SigningKeyEntity,
  AuditEventEntity,
  LfsObjectEntity,
  LfsLockEntity,
  IssueEntity,
  IssueCounterEntity,
  IssueWordEntity,
  IssueLabelEntity,
  IssueAssigneeEntity,
  CommentEntity,
  BranchProtectionEntity,
  PullRequestEntity,
  IssuePushEntity,
  IssueMentionEntity,
  PullMergeIntentEntity,
  PullAutoMergeEntity,
  MilestoneEntity,
  ReactionEntity,
  IssueDependencyEntity,
  ReviewEntity,
  ReviewCommentEntity,
];
