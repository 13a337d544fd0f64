import { ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Body of PUT /repos/{owner}/{repo}/topics. */
@ApiSchema({ name: 'RepoTopicOptions' })
export class RepoTopicOption {
  @Field({ field: 'Topics', type: 'strings', description: 'the repository’s topics, replacing the current ones; at most 25' })
  topics?: string[];
}
