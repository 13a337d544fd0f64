import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { LabelWire } from '../labels/label.wire';
import { UserWire } from '../users/user.wire';
import { MilestoneWire } from '../milestones/milestone.wire';

/** The short form of a repository inside an issue. */
@ApiSchema({ name: 'RepositoryMeta' })
export class RepositoryMetaWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() owner: string;
  @ApiProperty() full_name: string;
}

/** Forgejo's `PullRequestMeta`: set on pull requests, null on issues. */
@ApiSchema({ name: 'PullRequestMeta' })
export class PullRequestMetaWire {
  @ApiProperty() merged: boolean;
  @ApiProperty({ format: 'date-time', nullable: true }) merged_at: string | null;
  @ApiProperty() draft: boolean;
  @ApiProperty() html_url: string;
}

/** Forgejo's `Issue` JSON, fields in Forgejo's order. */
@ApiSchema({ name: 'Issue' })
export class IssueWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() url: string;
  @ApiProperty() html_url: string;
  @ApiProperty({ format: 'int64' }) number: number;
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty({ description: 'always "": Anvil imports no issues' }) original_author: string;
  @ApiProperty({ format: 'int64' }) original_author_id: number;
  @ApiProperty() title: string;
  @ApiProperty() body: string;
  @ApiProperty() ref: string;
  @ApiProperty({ type: [Object], description: 'always empty: issues carry no attachments yet' }) assets: unknown[];
  @ApiProperty({ type: [LabelWire] }) labels: LabelWire[];
  @ApiProperty({ type: MilestoneWire, nullable: true }) milestone: MilestoneWire | null;
  @ApiProperty({ type: UserWire, nullable: true, description: 'deprecated: the first of `assignees`' }) assignee: UserWire | null;
  @ApiProperty({ type: [UserWire], nullable: true }) assignees: UserWire[] | null;
  @ApiProperty({ enum: ['open', 'closed'], description: 'Whether the issue is open or closed' }) state: 'open' | 'closed';
  @ApiProperty() is_locked: boolean;
  @ApiProperty({ format: 'int64' }) comments: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', nullable: true }) closed_at: string | null;
  @ApiProperty({ format: 'date-time', nullable: true }) due_date: string | null;
  @ApiProperty({ type: PullRequestMetaWire, nullable: true }) pull_request: PullRequestMetaWire | null;
  @ApiProperty({ type: RepositoryMetaWire }) repository: RepositoryMetaWire;
  @ApiProperty({ format: 'int64' }) pin_order: number;
}

/** The due date of an issue. */
@ApiSchema({ name: 'IssueDeadline' })
export class IssueDeadlineWire {
  @ApiProperty({ format: 'date-time', nullable: true }) due_date: string | null;
}

/** Forgejo's `NewIssuePinsAllowed`: whether one more issue, and one more pull request, may be pinned. */
@ApiSchema({ name: 'NewIssuePinsAllowed' })
export class NewIssuePinsAllowedWire {
  @ApiProperty() issues: boolean;
  @ApiProperty() pull_requests: boolean;
}
