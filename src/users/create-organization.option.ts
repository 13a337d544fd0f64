import { ApiSchema } from '@nestjs/swagger';
import { Field, VALID_URL } from '../common/fields';
import { USERNAME } from './user-names';

/** Body of POST /orgs. Field names in messages are Forgejo's CreateOrgOption names. */
@ApiSchema({ name: 'CreateOrgOption' })
export class CreateOrganizationOption {
  @Field({ field: 'UserName', type: 'string', required: true, maxSize: 40, rules: [USERNAME] })
  username: string;

  @Field({ field: 'FullName', type: 'string', maxSize: 100 })
  full_name?: string;

  @Field({ field: 'Email', type: 'string', maxSize: 255 })
  email?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 255 })
  description?: string;

  @Field({ field: 'Website', type: 'string', maxSize: 255, rules: [VALID_URL] })
  website?: string;

  @Field({ field: 'Location', type: 'string', maxSize: 50 })
  location?: string;

  @Field({ field: 'Visibility', type: 'string', in: ['public', 'limited', 'private'], description: 'public by default' })
  visibility?: string;

  @Field({ field: 'RepoAdminChangeTeamAccess', type: 'boolean' })
  repo_admin_change_team_access?: boolean;
}
