import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { Field } from '../common/fields';
import { UserWire } from '../users/user.wire';

/** Forgejo's `AddCollaboratorOption`; `write` when absent, as Forgejo. */
@ApiSchema({ name: 'AddCollaboratorOption' })
export class AddCollaboratorOption {
  @Field({ field: 'Permission', type: 'string', in: ['read', 'write', 'admin'] })
  permission?: string;
}

/** Forgejo's `RepoCollaboratorPermission`. */
@ApiSchema({ name: 'RepoCollaboratorPermission' })
export class RepoCollaboratorPermissionWire {
  @ApiProperty() permission: string;
  @ApiProperty() role_name: string;
  @ApiProperty({ type: UserWire }) user: UserWire;
}
