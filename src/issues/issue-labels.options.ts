import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of POST and PUT /repos/{owner}/{repo}/issues/{index}/labels. */
@ApiSchema({ name: 'IssueLabelsOption' })
export class IssueLabelsOption {
  @ApiProperty({
    type: 'array',
    items: {},
    required: false,
    description: 'Labels can be a list of integers representing label IDs or a list of strings representing label names',
  })
  @Field({ field: 'Labels', type: 'array' })
  labels?: unknown[];

  @Field({ field: 'Updated', type: 'string', nullable: true, description: 'date-time (ignored)' })
  updated_at?: string | null;
}
