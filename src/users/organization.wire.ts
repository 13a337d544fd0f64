import { ApiProperty, ApiSchema } from '@nestjs/swagger';

/** The `Organization` JSON. `username` is a copy of `name`, emitted last. */
@ApiSchema({ name: 'Organization' })
export class OrganizationWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() full_name: string;
  @ApiProperty({ description: '"" for anonymous callers' }) email: string;
  @ApiProperty() avatar_url: string;
  @ApiProperty() description: string;
  @ApiProperty() website: string;
  @ApiProperty() location: string;
  @ApiProperty({ enum: ['public', 'limited', 'private'] }) visibility: string;
  @ApiProperty() repo_admin_change_team_access: boolean;
  @ApiProperty({ format: 'date-time' }) created: string;
  @ApiProperty() username: string;
}

/** What a user may do in an organisation (GET /users/{username}/orgs/{org}/permissions). */
@ApiSchema({ name: 'OrganizationPermissions' })
export class OrganizationPermissionsWire {
  @ApiProperty() is_owner: boolean;
  @ApiProperty() is_admin: boolean;
  @ApiProperty() can_write: boolean;
  @ApiProperty() can_read: boolean;
  @ApiProperty() can_create_repository: boolean;
}
