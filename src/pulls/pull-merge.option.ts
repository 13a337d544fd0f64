import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/pulls/{index}/merge, with Forgejo's key names (some CamelCase). */
@ApiSchema({ name: 'MergePullRequestOption' })
export class MergePullRequestOption {
  @Field({ field: 'Do', type: 'string', required: true, in: ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'] })
  Do: string;

  @Field({ field: 'MergeTitleField', type: 'string' })
  MergeTitleField?: string;

  @Field({ field: 'MergeMessageField', type: 'string' })
  MergeMessageField?: string;

  @Field({ field: 'MergeCommitID', type: 'string', description: 'the commit of the base branch that holds the change (manually-merged)' })
  MergeCommitID?: string;

  @Field({ field: 'HeadCommitID', type: 'string', description: 'the head commit the caller saw: 409 when the head moved since' })
  head_commit_id?: string;

  @Field({ field: 'ForceMerge', type: 'boolean' })
  force_merge?: boolean;

  @Field({ field: 'MergeWhenChecksSucceed', type: 'boolean' })
  merge_when_checks_succeed?: boolean;

  @Field({ field: 'DeleteBranchAfterMerge', type: 'boolean' })
  delete_branch_after_merge?: boolean;
}
