import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** Forgejo's `BranchProtection`, key for key. */
@ApiSchema({ name: 'BranchProtection' })
export class BranchProtectionWire {
  @ApiProperty({ deprecated: true, description: 'the rule name when it is a plain branch name, else empty' }) branch_name: string;
  @ApiProperty() rule_name: string;
  @ApiProperty() enable_push: boolean;
  @ApiProperty() enable_push_whitelist: boolean;
  @ApiProperty({ type: [String] }) push_whitelist_usernames: string[];
  @ApiProperty({ type: [String] }) push_whitelist_teams: string[];
  @ApiProperty() push_whitelist_deploy_keys: boolean;
  @ApiProperty() enable_merge_whitelist: boolean;
  @ApiProperty({ type: [String] }) merge_whitelist_usernames: string[];
  @ApiProperty({ type: [String] }) merge_whitelist_teams: string[];
  @ApiProperty() enable_status_check: boolean;
  @ApiProperty({ type: [String] }) status_check_contexts: string[];
  @ApiProperty({ format: 'int64' }) required_approvals: number;
  @ApiProperty() enable_approvals_whitelist: boolean;
  @ApiProperty({ type: [String] }) approvals_whitelist_username: string[];
  @ApiProperty({ type: [String] }) approvals_whitelist_teams: string[];
  @ApiProperty() block_on_rejected_reviews: boolean;
  @ApiProperty() block_on_official_review_requests: boolean;
  @ApiProperty() block_on_outdated_branch: boolean;
  @ApiProperty() dismiss_stale_approvals: boolean;
  @ApiProperty() ignore_stale_approvals: boolean;
  @ApiProperty() require_signed_commits: boolean;
  @ApiProperty() protected_file_patterns: string;
  @ApiProperty() unprotected_file_patterns: string;
  @ApiProperty() apply_to_admins: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}
