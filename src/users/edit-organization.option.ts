import { ApiSchema } from '@nestjs/swagger';
import { Field, VALID_URL } from '../common/fields';

/**
 * Body of PATCH /orgs/{org}. As Forgejo: the text fields are written as sent, so a field left out becomes
 * empty; `visibility` and `repo_admin_change_team_access` change only when given.
 */
@ApiSchema({ name: 'EditOrgOption' })
export class EditOrganizationOption {
  @Field({ field: 'FullName', type: 'string', maxSize: 100 })
  full_name?: string;

  @Field({ field: 'Email', type: 'string', maxSize: 255, description: 'the contact address; an empty value keeps the current one' })
  email?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 255 })
  description?: string;

  @Field({ field: 'Website', type: 'string', maxSize: 255, rules: [VALID_URL] })
  website?: string;

  @Field({ field: 'Location', type: 'string', maxSize: 50 })
  location?: string;

  @Field({ field: 'Visibility', type: 'string', in: ['', 'public', 'limited', 'private'], description: 'possible values are `public`, `limited` or `private`' })
  visibility?: string;

  @Field({ field: 'RepoAdminChangeTeamAccess', type: 'boolean' })
  repo_admin_change_team_access?: boolean;
}

/** The profile fields of a create or edit body, in the service's terms (one binding for the three routes). */
export function organizationProfile(option: EditOrganizationOption) {
  return {
    fullName: option.full_name,
    email: option.email,
    description: option.description,
    website: option.website,
    location: option.location,
    visibility: option.visibility,
    repoAdminChangeTeamAccess: option.repo_admin_change_team_access,
  };
}
