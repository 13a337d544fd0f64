import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';

/** Forgejo's `CreateTeamOption`. */
@ApiSchema({ name: 'CreateTeamOption' })
export class CreateTeamOption {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: 255 })
  name: string;

  @Field({ field: 'Description', type: 'string', maxSize: 255 })
  description?: string;

  @Field({ field: 'Permission', type: 'string', in: ['read', 'write', 'admin'] })
  permission?: string;

  @ApiProperty({ type: [String], required: false, example: ['repo.code'] })
  units?: unknown;

  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { 'repo.code': 'write' } })
  units_map?: unknown;

  @Field({ field: 'IncludesAllRepositories', type: 'boolean' })
  includes_all_repositories?: boolean;

  @Field({ field: 'CanCreateOrgRepo', type: 'boolean' })
  can_create_org_repo?: boolean;
}
