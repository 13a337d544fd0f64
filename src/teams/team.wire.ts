import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { OrganizationWire } from '../users/organization.wire';

/** Forgejo's `Team` JSON; `organization` is filled for a single team and for the caller's own teams. */
@ApiSchema({ name: 'Team' })
export class TeamWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() description: string;
  @ApiProperty({ type: OrganizationWire, nullable: true, description: 'null in the lists of an organisation or repository' })
  organization: OrganizationWire | null;
  @ApiProperty() includes_all_repositories: boolean;
  @ApiProperty({ enum: ['none', 'read', 'write', 'admin', 'owner'] }) permission: string;
  @ApiProperty({ type: [String], example: ['repo.code'] }) units: string[];
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' }, example: { 'repo.code': 'write' } }) units_map: Record<string, string>;
  @ApiProperty() can_create_org_repo: boolean;
}

/** The answer of `GET /orgs/{org}/teams/search`: Forgejo wraps the teams as `{ok, data}`. */
@ApiSchema({ name: 'TeamSearchResults' })
export class TeamSearchResultsWire {
  @ApiProperty() ok: boolean;
  @ApiProperty({ type: [TeamWire] }) data: TeamWire[];
}
