import { ApiSchema } from '@nestjs/swagger';
import { ALPHA_DASH_DOT, Field } from '../common/fields';
import { maxSize } from '../repos/repository-names';

/**
 * Body of POST /repos/migrate (docs/mirrors.md), fields in Forgejo's order so that the
 * first failing rule is the one Forgejo reports.
 */
@ApiSchema({ name: 'MigrateRepoOptions' })
export class MigrateRepositoryOption {
  @Field({ field: 'CloneAddr', type: 'string', required: true, description: 'http://, https:// or git:// URL without credentials' })
  clone_addr: string;

  @Field({ field: 'AuthUsername', type: 'string', description: 'HTTP Basic user name for the source; stored encrypted, never shown' })
  auth_username?: string;

  @Field({ field: 'AuthPassword', type: 'string', description: 'HTTP Basic password for the source; stored encrypted, never shown' })
  auth_password?: string;

  @Field({ field: 'AuthToken', type: 'string', description: 'used as the password (user `auth_username` or `oauth2`) when auth_password is empty' })
  auth_token?: string;

  @Field({ field: 'RepoOwnerID', type: 'integer', description: 'deprecated: the owner by id' })
  uid?: number;

  @Field({ field: 'RepoOwner', type: 'string', description: 'owner name; default: the caller' })
  repo_owner?: string;

  @Field({ field: 'RepoName', type: 'string', required: true, rules: [ALPHA_DASH_DOT, maxSize(100)] })
  repo_name: string;

  @Field({ field: 'Mirror', type: 'boolean', description: 'make the repository a pull mirror' })
  mirror?: boolean;

  @Field({ field: 'LFS', type: 'boolean', description: 'bring the LFS objects the source points to, at the migration and at every sync of a pull mirror' })
  lfs?: boolean;

  @Field({
    field: 'LFSEndpoint',
    type: 'string',
    description: 'the LFS server of the source (at most 2048 characters); default: the clone address with .git/info/lfs',
  })
  lfs_endpoint?: string;

  @Field({ field: 'Private', type: 'boolean' })
  private?: boolean;

  @Field({ field: 'Description', type: 'string', maxSize: 2048 })
  description?: string;

  @Field({ field: 'Wiki', type: 'boolean', description: 'accepted and ignored' })
  wiki?: boolean;

  @Field({ field: 'Milestones', type: 'boolean', description: 'accepted and ignored' })
  milestones?: boolean;

  @Field({ field: 'Labels', type: 'boolean', description: 'accepted and ignored' })
  labels?: boolean;

  @Field({ field: 'Issues', type: 'boolean', description: 'accepted and ignored' })
  issues?: boolean;

  @Field({ field: 'PullRequests', type: 'boolean', description: 'accepted and ignored' })
  pull_requests?: boolean;

  @Field({ field: 'Releases', type: 'boolean', description: 'accepted and ignored' })
  releases?: boolean;

  @Field({
    field: 'MirrorInterval',
    type: 'string',
    description: 'with `mirror`: Go duration, `0` (no periodic sync) or at least `10m`; default `8h`',
    example: '8h0m0s',
  })
  mirror_interval?: string;

  @Field({
    field: 'Service',
    type: 'string',
    description: 'only the git data is imported, whatever the service',
    example: 'git',
  })
  service?: string;
}
