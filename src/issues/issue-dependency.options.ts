import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of the dependency routes: an issue named by its repository and number (Forgejo's `IssueMeta`). */
@ApiSchema({ name: 'IssueMeta' })
export class IssueMeta {
  @Field({ field: 'Index', type: 'integer', description: 'the issue number' })
  index?: number;

  @Field({ field: 'Owner', type: 'string' })
  owner?: string;

  @Field({ field: 'Name', type: 'string', description: 'the repository name' })
  repo?: string;
}
