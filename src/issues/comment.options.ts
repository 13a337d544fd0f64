import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST /repos/{owner}/{repo}/issues/{index}/comments. */
@ApiSchema({ name: 'CreateIssueCommentOption' })
export class CreateIssueCommentOption {
  @Field({ field: 'Body', type: 'string', required: true, description: 'at most 4 MiB of UTF-8 (422 beyond)' })
  body: string;

  @Field({ field: 'Updated', type: 'string', nullable: true, description: 'date-time (ignored)' })
  updated_at?: string | null;
}

/** Body of PATCH …/issues/comments/{id}. */
@ApiSchema({ name: 'EditIssueCommentOption' })
export class EditIssueCommentOption {
  @Field({ field: 'Body', type: 'string', required: true, description: 'at most 4 MiB of UTF-8 (422 beyond)' })
  body: string;

  @Field({ field: 'Updated', type: 'string', nullable: true, description: 'date-time (ignored)' })
  updated_at?: string | null;
}
