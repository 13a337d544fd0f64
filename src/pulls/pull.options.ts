import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/pulls. Labels, milestone, assignees and due date are for writers only. */
@ApiSchema({ name: 'CreatePullRequestOption' })
export class CreatePullRequestOption {
  @Field({ field: 'Head', type: 'string', required: true, description: 'the branch to merge, `branch` or `owner:branch`' })
  head: string;

  @Field({ field: 'Base', type: 'string', required: true, description: 'the branch to merge into' })
  base: string;

  @Field({ field: 'Title', type: 'string', required: true, description: 'trimmed, and cut at 255 bytes' })
  title: string;

  @Field({ field: 'Body', type: 'string', description: 'at most 65 535 bytes (422 beyond)' })
  body?: string;

  @Field({ field: 'Assignee', type: 'string', description: 'deprecated: one of `assignees`' })
  assignee?: string;

  @Field({ field: 'Assignees', type: 'strings' })
  assignees?: string[];

  @ApiProperty({ type: Number, format: 'int64', required: false, description: 'milestone id' })
  @Field({ field: 'Milestone', type: 'integer' })
  milestone?: number;

  @Field({ field: 'Labels', type: 'integers', description: 'list of label ids' })
  labels?: number[];

  @Field({ field: 'Deadline', type: 'string', description: 'date-time', nullable: true })
  due_date?: string | null;
}

/** Body of PATCH /repos/{owner}/{repo}/pulls/{index}: absent fields stay. */
@ApiSchema({ name: 'EditPullRequestOption' })
export class EditPullRequestOption {
  @Field({ field: 'Title', type: 'string' })
  title?: string;

  @Field({ field: 'Body', type: 'string', nullable: true })
  body?: string | null;

  @Field({ field: 'Base', type: 'string', description: 'a new base branch (404 when it does not exist)' })
  base?: string;

  @Field({ field: 'Assignee', type: 'string', nullable: true, description: 'deprecated' })
  assignee?: string | null;

  @Field({ field: 'Assignees', type: 'strings', nullable: true })
  assignees?: string[] | null;

  @ApiProperty({ type: Number, format: 'int64', required: false })
  @Field({ field: 'Milestone', type: 'integer' })
  milestone?: number;

  @Field({ field: 'Labels', type: 'integers', nullable: true, description: 'replaces the labels' })
  labels?: number[] | null;

  @Field({ field: 'State', type: 'string', nullable: true, description: '`open` or `closed`' })
  state?: string | null;

  @Field({ field: 'Deadline', type: 'string', nullable: true, description: 'date-time' })
  due_date?: string | null;

  @Field({ field: 'RemoveDeadline', type: 'boolean', nullable: true })
  unset_due_date?: boolean | null;

  @Field({ field: 'AllowMaintainerEdit', type: 'boolean', nullable: true })
  allow_maintainer_edit?: boolean | null;
}
