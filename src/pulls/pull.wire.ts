import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { CommitWire } from '../content/content.wire';
import { LabelWire } from '../labels/label.wire';
import { RepositoryWire } from '../repos/repository.wire';
import { UserWire } from '../users/user.wire';

/** Forgejo's `PRBranchInfo`: one side of a pull request. */
@ApiSchema({ name: 'PRBranchInfo' })
export class PRBranchInfoWire {
  @ApiProperty({ description: 'the branch name' }) label: string;
  @ApiProperty({ description: 'the branch, or `refs/pull/{n}/head` once the head branch is gone' }) ref: string;
  @ApiProperty() sha: string;
  @ApiProperty({ format: 'int64' }) repo_id: number;
  @ApiProperty({ type: RepositoryWire, nullable: true }) repo: RepositoryWire | null;
}

/** Forgejo's `PullRequest` JSON, fields in Forgejo's order. */
@ApiSchema({ name: 'PullRequest' })
export class PullRequestWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ description: "the pull request's page, as Forgejo sends it" }) url: string;
  @ApiProperty({ format: 'int64' }) number: number;
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty() title: string;
  @ApiProperty() body: string;
  @ApiProperty({ type: [LabelWire] }) labels: LabelWire[];
  @ApiProperty({ type: Object, nullable: true }) milestone: unknown;
  @ApiProperty({ type: UserWire, nullable: true }) assignee: UserWire | null;
  @ApiProperty({ type: [UserWire], nullable: true }) assignees: UserWire[] | null;
  @ApiProperty({ type: [UserWire], nullable: true }) requested_reviewers: UserWire[] | null;
  @ApiProperty({ type: [Object], nullable: true }) requested_reviewers_teams: unknown[] | null;
  @ApiProperty({ enum: ['open', 'closed'] }) state: 'open' | 'closed';
  @ApiProperty({ description: 'the title starts with `WIP:` or `[WIP]`' }) draft: boolean;
  @ApiProperty() is_locked: boolean;
  @ApiProperty({ format: 'int64' }) comments: number;
  @ApiProperty({ format: 'int64' }) review_comments: number;
  @ApiProperty({ format: 'int64' }) additions: number;
  @ApiProperty({ format: 'int64' }) deletions: number;
  @ApiProperty({ format: 'int64' }) changed_files: number;
  @ApiProperty() html_url: string;
  @ApiProperty() diff_url: string;
  @ApiProperty() patch_url: string;
  @ApiProperty({ description: 'tested, without conflicts, and not a work in progress' }) mergeable: boolean;
  @ApiProperty() merged: boolean;
  @ApiProperty({ format: 'date-time', nullable: true }) merged_at: string | null;
  @ApiProperty({ nullable: true }) merge_commit_sha: string | null;
  @ApiProperty({ type: UserWire, nullable: true }) merged_by: UserWire | null;
  @ApiProperty() allow_maintainer_edit: boolean;
  @ApiProperty({ type: PRBranchInfoWire }) base: PRBranchInfoWire;
  @ApiProperty({ type: PRBranchInfoWire }) head: PRBranchInfoWire;
  @ApiProperty() merge_base: string;
  @ApiProperty({ format: 'date-time', nullable: true }) due_date: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) created_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) updated_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) closed_at: string | null;
  @ApiProperty({ format: 'int64' }) pin_order: number;
}

/** Forgejo's `ChangedFile`: one file a pull request changes. */
@ApiSchema({ name: 'ChangedFile' })
export class ChangedFileWire {
  @ApiProperty() filename: string;
  @ApiProperty({ required: false }) previous_filename?: string;
  @ApiProperty({ enum: ['added', 'deleted', 'changed', 'renamed', 'copied', 'unchanged'] }) status: string;
  @ApiProperty({ format: 'int64' }) additions: number;
  @ApiProperty({ format: 'int64' }) deletions: number;
  @ApiProperty({ format: 'int64' }) changes: number;
  @ApiProperty() html_url: string;
  @ApiProperty() contents_url: string;
  @ApiProperty() raw_url: string;
}

/** Forgejo's `Compare`: the commits between two revisions. */
@ApiSchema({ name: 'Compare' })
export class CompareWire {
  @ApiProperty({ format: 'int64' }) total_commits: number;
  @ApiProperty({ type: [CommitWire] }) commits: CommitWire[];
}
