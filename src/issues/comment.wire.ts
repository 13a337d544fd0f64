import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { LabelWire } from '../labels/label.wire';
import { MilestoneWire } from '../milestones/milestone.wire';
import { UserWire } from '../users/user.wire';
import { IssueWire } from './issue.wire';

/** Forgejo's `Comment` JSON. */
@ApiSchema({ name: 'Comment' })
export class CommentWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() html_url: string;
  @ApiProperty({ description: '"" for a comment on an issue' }) pull_request_url: string;
  @ApiProperty({ description: 'the issue’s page; "" for a comment on a pull request' }) issue_url: string;
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty() original_author: string;
  @ApiProperty({ format: 'int64' }) original_author_id: number;
  @ApiProperty() body: string;
  @ApiProperty({ type: [Object], description: 'always empty: comments carry no attachments yet' }) assets: unknown[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
}

/** Forgejo's `TimelineComment`: a plain comment or an event of an issue's timeline. */
@ApiSchema({ name: 'TimelineComment' })
export class TimelineCommentWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ description: 'comment, reopen, close, commit_ref, label, milestone, assignees, change_title, pin, …' }) type: string;
  @ApiProperty() html_url: string;
  @ApiProperty() pull_request_url: string;
  @ApiProperty() issue_url: string;
  @ApiProperty({ type: UserWire }) user: UserWire;
  @ApiProperty() body: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'int64' }) old_project_id: number;
  @ApiProperty({ format: 'int64' }) project_id: number;
  @ApiProperty({ type: MilestoneWire, nullable: true }) old_milestone: MilestoneWire | null;
  @ApiProperty({ type: MilestoneWire, nullable: true }) milestone: MilestoneWire | null;
  @ApiProperty({ type: Object, nullable: true }) tracked_time: object | null;
  @ApiProperty() old_title: string;
  @ApiProperty() new_title: string;
  @ApiProperty() old_ref: string;
  @ApiProperty() new_ref: string;
  @ApiProperty({ type: Object, nullable: true }) ref_issue: object | null;
  @ApiProperty({ type: Object, nullable: true }) ref_comment: object | null;
  @ApiProperty({ description: 'none, closes, reopens or neutered' }) ref_action: string;
  @ApiProperty({ description: 'the commit that referenced the issue' }) ref_commit_sha: string;
  @ApiProperty({ format: 'int64' }) review_id: number;
  @ApiProperty({ type: LabelWire, nullable: true }) label: LabelWire | null;
  @ApiProperty({ type: UserWire, nullable: true }) assignee: UserWire | null;
  @ApiProperty({ type: Object, nullable: true }) assignee_team: object | null;
  @ApiProperty() removed_assignee: boolean;
  @ApiProperty({ type: UserWire, nullable: true }) resolve_doer: UserWire | null;
  @ApiProperty({ type: IssueWire, nullable: true }) dependent_issue: IssueWire | null;
}
