import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/branch_protections. */
@ApiSchema({ name: 'CreateBranchProtectionOption' })
export class CreateBranchProtectionOption {
  @Field({ field: 'BranchName', type: 'string', maxSize: 255, description: 'deprecated: rule_name' })
  branch_name?: string;

  @Field({ field: 'RuleName', type: 'string', maxSize: 255 })
  rule_name?: string;

  @Field({ field: 'EnablePush', type: 'boolean' })
  enable_push?: boolean;

  @Field({ field: 'EnablePushWhitelist', type: 'boolean' })
  enable_push_whitelist?: boolean;

  @Field({ field: 'PushWhitelistUsernames', type: 'strings', maxSize: 1000 })
  push_whitelist_usernames?: string[];

  @Field({ field: 'PushWhitelistTeams', type: 'strings', maxSize: 1000 })
  push_whitelist_teams?: string[];

  @Field({ field: 'PushWhitelistDeployKeys', type: 'boolean' })
  push_whitelist_deploy_keys?: boolean;

  @Field({ field: 'EnableMergeWhitelist', type: 'boolean' })
  enable_merge_whitelist?: boolean;

  @Field({ field: 'MergeWhitelistUsernames', type: 'strings', maxSize: 1000 })
  merge_whitelist_usernames?: string[];

  @Field({ field: 'MergeWhitelistTeams', type: 'strings', maxSize: 1000 })
  merge_whitelist_teams?: string[];

  @Field({ field: 'EnableStatusCheck', type: 'boolean' })
  enable_status_check?: boolean;

  @Field({ field: 'StatusCheckContexts', type: 'strings', maxSize: 1000 })
  status_check_contexts?: string[];

  @Field({ field: 'RequiredApprovals', type: 'integer' })
  required_approvals?: number;

  @Field({ field: 'EnableApprovalsWhitelist', type: 'boolean' })
  enable_approvals_whitelist?: boolean;

  @Field({ field: 'ApprovalsWhitelistUsernames', type: 'strings', maxSize: 1000 })
  approvals_whitelist_username?: string[];

  @Field({ field: 'ApprovalsWhitelistTeams', type: 'strings', maxSize: 1000 })
  approvals_whitelist_teams?: string[];

  @Field({ field: 'BlockOnRejectedReviews', type: 'boolean' })
  block_on_rejected_reviews?: boolean;

  @Field({ field: 'BlockOnOfficialReviewRequests', type: 'boolean' })
  block_on_official_review_requests?: boolean;

  @Field({ field: 'BlockOnOutdatedBranch', type: 'boolean' })
  block_on_outdated_branch?: boolean;

  @Field({ field: 'DismissStaleApprovals', type: 'boolean' })
  dismiss_stale_approvals?: boolean;

  @Field({ field: 'IgnoreStaleApprovals', type: 'boolean' })
  ignore_stale_approvals?: boolean;

  @Field({ field: 'RequireSignedCommits', type: 'boolean' })
  require_signed_commits?: boolean;

  @Field({ field: 'ProtectedFilePatterns', type: 'string' })
  protected_file_patterns?: string;

  @Field({ field: 'UnprotectedFilePatterns', type: 'string' })
  unprotected_file_patterns?: string;

  @Field({ field: 'ApplyToAdmins', type: 'boolean' })
  apply_to_admins?: boolean;
}

/** Body of PATCH .../branch_protections/{name}: absent (or null) fields stay; a list sent replaces the list. */
@ApiSchema({ name: 'EditBranchProtectionOption' })
export class EditBranchProtectionOption {
  @Field({ field: 'EnablePush', type: 'boolean' })
  enable_push?: boolean;

  @Field({ field: 'EnablePushWhitelist', type: 'boolean' })
  enable_push_whitelist?: boolean;

  @Field({ field: 'PushWhitelistUsernames', type: 'strings', maxSize: 1000, nullable: true })
  push_whitelist_usernames?: string[] | null;

  @Field({ field: 'PushWhitelistTeams', type: 'strings', maxSize: 1000, nullable: true })
  push_whitelist_teams?: string[] | null;

  @Field({ field: 'PushWhitelistDeployKeys', type: 'boolean' })
  push_whitelist_deploy_keys?: boolean;

  @Field({ field: 'EnableMergeWhitelist', type: 'boolean' })
  enable_merge_whitelist?: boolean;

  @Field({ field: 'MergeWhitelistUsernames', type: 'strings', maxSize: 1000, nullable: true })
  merge_whitelist_usernames?: string[] | null;

  @Field({ field: 'MergeWhitelistTeams', type: 'strings', maxSize: 1000, nullable: true })
  merge_whitelist_teams?: string[] | null;

  @Field({ field: 'EnableStatusCheck', type: 'boolean' })
  enable_status_check?: boolean;

  @Field({ field: 'StatusCheckContexts', type: 'strings', maxSize: 1000, nullable: true })
  status_check_contexts?: string[] | null;

  @Field({ field: 'RequiredApprovals', type: 'integer' })
  required_approvals?: number;

  @Field({ field: 'EnableApprovalsWhitelist', type: 'boolean' })
  enable_approvals_whitelist?: boolean;

  @Field({ field: 'ApprovalsWhitelistUsernames', type: 'strings', maxSize: 1000, nullable: true })
  approvals_whitelist_username?: string[] | null;

  @Field({ field: 'ApprovalsWhitelistTeams', type: 'strings', maxSize: 1000, nullable: true })
  approvals_whitelist_teams?: string[] | null;

  @Field({ field: 'BlockOnRejectedReviews', type: 'boolean' })
  block_on_rejected_reviews?: boolean;

  @Field({ field: 'BlockOnOfficialReviewRequests', type: 'boolean' })
  block_on_official_review_requests?: boolean;

  @Field({ field: 'BlockOnOutdatedBranch', type: 'boolean' })
  block_on_outdated_branch?: boolean;

  @Field({ field: 'DismissStaleApprovals', type: 'boolean' })
  dismiss_stale_approvals?: boolean;

  @Field({ field: 'IgnoreStaleApprovals', type: 'boolean' })
  ignore_stale_approvals?: boolean;

  @Field({ field: 'RequireSignedCommits', type: 'boolean' })
  require_signed_commits?: boolean;

  @Field({ field: 'ProtectedFilePatterns', type: 'string' })
  protected_file_patterns?: string;

  @Field({ field: 'UnprotectedFilePatterns', type: 'string' })
  unprotected_file_patterns?: string;

  @Field({ field: 'ApplyToAdmins', type: 'boolean' })
  apply_to_admins?: boolean;
}
