import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/issues. Labels, milestone, assignees and due date are for writers only. */
@ApiSchema({ name: 'CreateIssueOption' })
export class CreateIssueOption {
  @Field({ field: 'Title', type: 'string', required: true, description: 'trimmed, and cut at 255 bytes' })
  title: string;

  @Field({ field: 'Body', type: 'string', description: 'at most 4 MiB of UTF-8 (422 beyond)' })
  body?: string;

  @Field({ field: 'Ref', type: 'string', maxSize: 255 })
  ref?: string;

  @Field({ field: 'Assignee', type: 'string', description: 'deprecated: one of `assignees`' })
  assignee?: string;

  @Field({ field: 'Assignees', type: 'strings' })
  assignees?: string[];

  @Field({ field: 'Deadline', type: 'string', description: 'date-time', nullable: true })
  due_date?: string | null;

  @ApiProperty({ type: Number, format: 'int64', required: false, description: 'milestone id' })
  @Field({ field: 'Milestone', type: 'integer' })
  milestone?: number;

  @Field({ field: 'Labels', type: 'integers', description: 'list of label ids' })
  labels?: number[];

  @Field({ field: 'Closed', type: 'boolean' })
  closed?: boolean;
}

/** Body of PATCH /repos/{owner}/{repo}/issues/{index}: absent fields stay. */
@ApiSchema({ name: 'EditIssueOption' })
export class EditIssueOption {
  @Field({ field: 'Title', type: 'string' })
  title?: string;

  @Field({ field: 'Body', type: 'string', nullable: true })
  body?: string | null;

  @Field({ field: 'Ref', type: 'string', maxSize: 255, nullable: true })
  ref?: string | null;

  @Field({ field: 'Assignee', type: 'string', nullable: true, description: 'deprecated' })
  assignee?: string | null;

  @Field({ field: 'Assignees', type: 'strings', nullable: true })
  assignees?: string[] | null;

  @ApiProperty({ type: Number, format: 'int64', required: false, nullable: true })
  @Field({ field: 'Milestone', type: 'integer', nullable: true })
  milestone?: number | null;

  @Field({ field: 'State', type: 'string', nullable: true, description: '`open` or `closed`' })
  state?: string | null;

  @Field({ field: 'Deadline', type: 'string', nullable: true, description: 'date-time' })
  due_date?: string | null;

  @Field({ field: 'RemoveDeadline', type: 'boolean', nullable: true })
  unset_due_date?: boolean | null;

  @Field({ field: 'Updated', type: 'string', nullable: true, description: 'date-time (ignored)' })
  updated_at?: string | null;
}

/** Body of POST /repos/{owner}/{repo}/issues/{index}/deadline. */
@ApiSchema({ name: 'EditDeadlineOption' })
export class EditDeadlineOption {
  @Field({ field: 'Deadline', type: 'string', nullable: true, description: 'date-time; null removes the due date' })
  due_date?: string | null;
}
