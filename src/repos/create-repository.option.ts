import { ApiSchema } from '@nestjs/swagger';
import { ALPHA_DASH_DOT, Field } from '../common/fields';
import { GIT_REF_NAME, maxSize } from './repository-names';

/** Body of POST /user/repos, /orgs/{org}/repos and /org/{org}/repos. */
@ApiSchema({ name: 'CreateRepoOption' })
export class CreateRepositoryOption {
  @Field({ field: 'Name', type: 'string', required: true, rules: [ALPHA_DASH_DOT, maxSize(100)], description: 'unique per owner; at most 100 characters' })
  name: string;

  @Field({ field: 'Description', type: 'string', maxSize: 2048 })
  description?: string;

  @Field({ field: 'Private', type: 'boolean' })
  private?: boolean;

  @Field({ field: 'AutoInit', type: 'boolean', description: 'create an initial commit with README, .gitignore and LICENSE' })
  auto_init?: boolean;

  @Field({
    field: 'Gitignores',
    type: 'string',
    maxSize: 4096,
    description: 'comma-separated gitignore template names (at most 32 distinct); used with auto_init',
  })
  gitignores?: string;

  @Field({ field: 'License', type: 'string', description: 'license template name (SPDX id); used with auto_init' })
  license?: string;

  @Field({ field: 'Readme', type: 'string', description: 'readme template name; `Default` with auto_init' })
  readme?: string;

  @Field({ field: 'DefaultBranch', type: 'string', rules: [GIT_REF_NAME, maxSize(100)], description: 'default `main`' })
  default_branch?: string;

  @Field({ field: 'Template', type: 'boolean' })
  template?: boolean;

  @Field({ field: 'ObjectFormatName', type: 'string', in: ['sha1', 'sha256'], description: 'default `sha1`' })
  object_format_name?: string;

  @Field({ field: 'IssueLabels', type: 'string', description: 'ignored: issues are out of scope' })
  issue_labels?: string;

  @Field({ field: 'TrustModel', type: 'string', description: 'ignored: signing features are out of scope' })
  trust_model?: string;
}
