import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** `event` of a review: its state; anything else (or nothing) leaves the review pending. */
const EVENT_DESCRIPTION = 'APPROVED, REQUEST_CHANGES, COMMENT or PENDING';

/** One line comment of a new review: `new_position` on the new side, or `old_position` on the old. */
@ApiSchema({ name: 'CreatePullReviewComment' })
export class CreatePullReviewComment {
  @ApiProperty({ required: false, description: 'the path of the file to comment on' })
  path?: string;

  @ApiProperty({ required: false })
  body?: string;

  @ApiProperty({ required: false, type: Number, format: 'int64', description: 'if comment to old file line or 0' })
  old_position?: number;

  @ApiProperty({ required: false, type: Number, format: 'int64', description: 'if comment to new file line or 0' })
  new_position?: number;
}

/** Body of POST …/pulls/{index}/reviews. */
@ApiSchema({ name: 'CreatePullReviewOptions' })
export class CreatePullReviewOptions {
  @Field({ field: 'Event', type: 'string', description: EVENT_DESCRIPTION })
  event?: string;

  @Field({ field: 'Body', type: 'string' })
  body?: string;

  @Field({ field: 'CommitID', type: 'string', maxSize: 64, description: 'the head commit reviewed (the head now when empty)' })
  commit_id?: string;

  @ApiProperty({ type: [CreatePullReviewComment], required: false })
  @Field({ field: 'Comments', type: 'array' })
  comments?: CreatePullReviewComment[];
}

/** Body of POST …/reviews/{id}: submits a pending review. */
@ApiSchema({ name: 'SubmitPullReviewOptions' })
export class SubmitPullReviewOptions {
  @Field({ field: 'Event', type: 'string', description: EVENT_DESCRIPTION })
  event?: string;

  @Field({ field: 'Body', type: 'string' })
  body?: string;
}

/** Body of POST …/reviews/{id}/comments. */
@ApiSchema({ name: 'CreatePullReviewCommentOptions' })
export class CreatePullReviewCommentOptions {
  @Field({ field: 'Path', type: 'string', maxSize: 1024 })
  path?: string;

  @Field({ field: 'Body', type: 'string' })
  body?: string;

  @ApiProperty({ required: false, type: Number, format: 'int64' })
  @Field({ field: 'OldLineNum', type: 'integer' })
  old_position?: number;

  @ApiProperty({ required: false, type: Number, format: 'int64' })
  @Field({ field: 'NewLineNum', type: 'integer' })
  new_position?: number;
}

/** Body of POST …/reviews/{id}/dismissals. */
@ApiSchema({ name: 'DismissPullReviewOptions' })
export class DismissPullReviewOptions {
  @Field({ field: 'Message', type: 'string' })
  message?: string;

  @Field({ field: 'Priors', type: 'boolean', description: "dismiss the reviewer's earlier approvals and rejections too" })
  priors?: boolean;
}

/** Body of POST and DELETE …/pulls/{index}/requested_reviewers. */
@ApiSchema({ name: 'PullReviewRequestOptions' })
export class PullReviewRequestOptions {
  @Field({ field: 'Reviewers', type: 'strings', description: 'user names or e-mail addresses' })
  reviewers?: string[];

  @Field({ field: 'TeamReviewers', type: 'strings', description: "team names of the repository's organisation" })
  team_reviewers?: string[];
}
