import type { BranchProtectionEntity } from '../access/branch-protection.entity';
import { isGlob } from '../access/branch-globs';
import { formatTime } from '../common/time';
import type { BranchProtectionWire } from './branch-protection.wire';

/** The names a rule's whitelists show: users that exist, teams that still reach the repository. */
export interface WhitelistNames {
  users: Map<number, string>;
  teams: Map<number, string>;
}

function names(ids: number[], known: Map<number, string>): string[] {
  return ids.flatMap((id) => (known.has(id) ? [known.get(id)!] : []));
}

/** Pure: a rule as Forgejo's BranchProtection, `branch_name` set only for a plain name. */
export function toBranchProtectionWire(rule: BranchProtectionEntity, known: WhitelistNames): BranchProtectionWire {
  return {
    branch_name: isGlob(rule.ruleName) ? '' : rule.ruleName,
    rule_name: rule.ruleName,
    enable_push: rule.canPush,
    enable_push_whitelist: rule.enableWhitelist,
    push_whitelist_usernames: names(rule.whitelistUserIds, known.users),
    push_whitelist_teams: names(rule.whitelistTeamIds, known.teams),
    push_whitelist_deploy_keys: rule.whitelistDeployKeys,
    enable_merge_whitelist: rule.enableMergeWhitelist,
    merge_whitelist_usernames: names(rule.mergeWhitelistUserIds, known.users),
    merge_whitelist_teams: names(rule.mergeWhitelistTeamIds, known.teams),
    enable_status_check: rule.enableStatusCheck,
    status_check_contexts: rule.statusCheckContexts,
    required_approvals: rule.requiredApprovals,
    enable_approvals_whitelist: rule.enableApprovalsWhitelist,
    approvals_whitelist_username: names(rule.approvalsWhitelistUserIds, known.users),
    approvals_whitelist_teams: names(rule.approvalsWhitelistTeamIds, known.teams),
    block_on_rejected_reviews: rule.blockOnRejectedReviews,
    block_on_official_review_requests: rule.blockOnOfficialReviewRequests,
    block_on_outdated_branch: rule.blockOnOutdatedBranch,
    dismiss_stale_approvals: rule.dismissStaleApprovals,
    ignore_stale_approvals: rule.ignoreStaleApprovals,
    require_signed_commits: rule.requireSignedCommits,
    protected_file_patterns: rule.protectedFilePatterns,
    unprotected_file_patterns: rule.unprotectedFilePatterns,
    apply_to_admins: rule.applyToAdmins,
    created_at: formatTime(rule.createdUnix),
    updated_at: formatTime(rule.updatedUnix),
  };
}
