import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { ALPHA_DASH_DOT, Field } from '../common/fields';

/** Forgejo's `CreateTeamOption`. */
@ApiSchema({ name: 'CreateTeamOption' })
export class CreateTeamOption {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: 255, rules: [ALPHA_DASH_DOT] })
  name: string;

  @Field({ field: 'Description', type: 'string', maxSize: 255 })
  description?: string;

  @Field({ field: 'Permission', type: 'string', in: ['read', 'write', 'admin'] })
  permission?: string;

  @ApiProperty({ type: [String], required: false, example: ['repo.code'] })
  units?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 'repo.code': 'write' } })
  units_map?: unknown;

  @Field({ field: 'IncludesAllRepositories', type: 'boolean' })
  includes_all_repositories?: boolean;

  @Field({ field: 'CanCreateOrgRepo', type: 'boolean' })
  can_create_org_repo?: boolean;
}

/** Forgejo's `EditTeamOption`: absent fields keep their values. */
@ApiSchema({ name: 'EditTeamOption' })
export class EditTeamOption {
  @Field({ field: 'Name', type: 'string', maxSize: 255, rules: [ALPHA_DASH_DOT] })
  name?: string;

  @Field({ field: 'Description', type: 'string', maxSize: 255, nullable: true })
  description?: string | null;

  @Field({ field: 'Permission', type: 'string', in: ['read', 'write', 'admin'] })
  permission?: string;

  @ApiProperty({ type: [String], required: false, example: ['repo.code'] })
  units?: unknown;

  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'string' }, example: { 'repo.code': 'write' } })
  units_map?: unknown;

  @Field({ field: 'IncludesAllRepositories', type: 'boolean', nullable: true })
  includes_all_repositories?: boolean | null;

  @Field({ field: 'CanCreateOrgRepo', type: 'boolean', nullable: true })
  can_create_org_repo?: boolean | null;
}
