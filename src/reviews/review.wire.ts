import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

/** Forgejo's review states, as the API names them. */
export const REVIEW_STATES = ['APPROVED', 'PENDING', 'COMMENT', 'REQUEST_CHANGES', 'REQUEST_REVIEW', ''] as const;
export type ReviewState = (typeof REVIEW_STATES)[number];

/** Forgejo's `PullReview`: a review of a pull request, or a request for one. */
@ApiSchema({ name: 'PullReview' })
export class PullReviewWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ type: UserWire, nullable: true }) user: UserWire | null;
  @ApiProperty({ type: Object, nullable: true, description: 'the team a review was requested of' }) team: unknown;
  @ApiProperty({ enum: REVIEW_STATES }) state: ReviewState;
  @ApiProperty() body: string;
  @ApiProperty() commit_id: string;
  @ApiProperty({ description: 'the head moved on and changed the diff since the review' }) stale: boolean;
  @ApiProperty({ description: 'given by a writer, or by a member of the approvals whitelist of the base branch' }) official: boolean;
  @ApiProperty() dismissed: boolean;
  @ApiProperty({ format: 'int64' }) comments_count: number;
  @ApiProperty({ format: 'date-time' }) submitted_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty() html_url: string;
  @ApiProperty() pull_request_url: string;
}

/** Forgejo's `PullReviewComment`: a comment on one line of the diff, within a review. */
@ApiSchema({ name: 'PullReviewComment' })
export class PullReviewCommentWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() body: string;
  @ApiProperty({ type: UserWire, nullable: true }) user: UserWire | null;
  @ApiProperty({ type: UserWire, nullable: true }) resolver: UserWire | null;
  @ApiProperty({ format: 'int64' }) pull_request_review_id: number;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty() path: string;
  @ApiProperty() commit_id: string;
  @ApiProperty() original_commit_id: string;
  @ApiProperty({ description: 'the diff around the line when the comment was made' }) diff_hunk: string;
  @ApiProperty({ format: 'uint64', description: 'the line on the new side (0 for a comment on the old side)' }) position: number;
  @ApiProperty({ format: 'uint64', description: 'the line on the old side (0 for a comment on the new side)' }) original_position: number;
  @ApiProperty() html_url: string;
  @ApiProperty() pull_request_url: string;
}
