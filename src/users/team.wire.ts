import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { OrganizationWire } from './organization.wire';

/** The `Team` JSON. Anvil has only each organisation's Owners team. */
@ApiSchema({ name: 'Team' })
export class TeamWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: OrganizationWire, nullable: true, description: 'always null in team lists' }) organization: OrganizationWire | null;
  @ApiProperty() includes_all_repositories: boolean;
  @ApiProperty({ enum: ['none', 'read', 'write', 'admin', 'owner'] }) permission: string;
  @ApiProperty({ type: [String], example: ['repo.code'] }) units: string[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { 'repo.code': 'owner' } }) units_map: Record<string, string>;
  @ApiProperty() can_create_org_repo: boolean;
}
