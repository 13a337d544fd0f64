import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { ALPHA_DASH_DOT, Field, VALID_URL } from '../common/fields';
import { GIT_REF_NAME, maxSize } from './repository-names';
import { ExternalTrackerWire, InternalTrackerWire } from './repository.wire';

/** Body of PATCH /repos/{owner}/{repo}: absent fields are left as they are. */
@ApiSchema({ name: 'EditRepoOption' })
export class EditRepositoryOption {
  @Field({
    field: 'Name',
    type: 'string',
    rules: [ALPHA_DASH_DOT, maxSize(100)],
    description: 'renames the repository: unique per owner (409 on a clash), reserved names refused (422)',
  })
  name?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 2048 })
  description?: string;

  @Field({ field: 'Website', type: 'string', maxSize: 1024, rules: [VALID_URL], description: 'an http(s) URL, or empty' })
  website?: string;

  @Field({ field: 'Private', type: 'boolean' })
  private?: boolean;

  @Field({ field: 'Template', type: 'boolean' })
  template?: boolean;

  @Field({
    field: 'DefaultBranch',
    type: 'string',
    rules: [GIT_REF_NAME, maxSize(100)],
    description: 'changed only when the branch exists or the repository is empty (as Forgejo)',
  })
  default_branch?: string;

  @Field({ field: 'HasIssues', type: 'boolean', description: 'the issues unit on or off' })
  has_issues?: boolean;

  @ApiProperty({ type: InternalTrackerWire, required: false, description: 'the built-in tracker, with these settings' })
  @Field({ field: 'InternalTracker', type: 'object' })
  internal_tracker?: Record<string, unknown>;

  @ApiProperty({ type: ExternalTrackerWire, required: false, description: 'an external tracker instead of the built-in one' })
  @Field({ field: 'ExternalTracker', type: 'object' })
  external_tracker?: Record<string, unknown>;

  @Field({ field: 'HasPullRequests', type: 'boolean', description: 'the pull requests unit on or off' })
  has_pull_requests?: boolean;

  @Field({ field: 'IgnoreWhitespaceConflicts', type: 'boolean' })
  ignore_whitespace_conflicts?: boolean;

  @Field({ field: 'AllowMerge', type: 'boolean' })
  allow_merge_commits?: boolean;

  @Field({ field: 'AllowRebase', type: 'boolean' })
  allow_rebase?: boolean;

  @Field({ field: 'AllowRebaseMerge', type: 'boolean' })
  allow_rebase_explicit?: boolean;

  @Field({ field: 'AllowSquash', type: 'boolean' })
  allow_squash_merge?: boolean;

  @Field({ field: 'AllowFastForwardOnly', type: 'boolean' })
  allow_fast_forward_only_merge?: boolean;

  @Field({ field: 'AllowManualMerge', type: 'boolean' })
  allow_manual_merge?: boolean;

  @Field({ field: 'AutodetectManualMerge', type: 'boolean' })
  autodetect_manual_merge?: boolean;

  @Field({ field: 'AllowRebaseUpdate', type: 'boolean' })
  allow_rebase_update?: boolean;

  @Field({ field: 'DefaultDeleteBranchAfterMerge', type: 'boolean' })
  default_delete_branch_after_merge?: boolean;

  @Field({ field: 'DefaultMergeStyle', type: 'string', description: 'merge, rebase, rebase-merge, squash, fast-forward-only or manually-merged' })
  default_merge_style?: string;

  @Field({ field: 'DefaultAllowMaintainerEdit', type: 'boolean' })
  default_allow_maintainer_edit?: boolean;

  @Field({ field: 'Archived', type: 'boolean', description: 'archive (read-only at every door) or unarchive; not for mirrors (422)' })
  archived?: boolean;

  @Field({ field: 'MirrorInterval', type: 'string', description: 'a pull mirror only: Go duration, `0` or at least `10m`', example: '8h0m0s' })
  mirror_interval?: string;
}
