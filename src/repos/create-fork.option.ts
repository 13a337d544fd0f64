import { ApiSchema } from '@nestjs/swagger';
import { ALPHA_DASH_DOT, Field } from '../common/fields';
import { maxSize } from './repository-names';

/** Body of POST /repos/{owner}/{repo}/forks. */
@ApiSchema({ name: 'CreateForkOption' })
export class CreateForkOption {
  @Field({ field: 'Organization', type: 'string', maxSize: 255, description: 'organization name, if forking into an organization' })
  organization?: string;

  @Field({ field: 'Name', type: 'string', rules: [ALPHA_DASH_DOT, maxSize(100)], description: "name of the forked repository; the source's name by default" })
  name?: string;
}
