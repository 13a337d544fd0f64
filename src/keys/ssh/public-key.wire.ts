import { ApiProperty, ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import type { AuthContext } from '../../auth/auth-context';
import { formatTime } from '../../common/time';
import type { Site } from '../../common/site-urls';
import { toUserWire } from '../../users/user.mapper';
import { UserEntity } from '../../users/user.entity';
import { UserWire } from '../../users/user.wire';
import type { PublicKeyEntity } from './public-key.entity';

/** The `PublicKey` JSON. */
@ApiSchema({ name: 'PublicKey' })
export class PublicKeyWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() key: string;
  @ApiProperty() url: string;
  @ApiProperty() title: string;
  @ApiProperty() fingerprint: string;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiPropertyOptional({ type: () => UserWire, description: 'only for the owner or a site admin' }) user?: UserWire;
  @ApiPropertyOptional({ example: 'user', description: 'only for the owner or a site admin' }) key_type?: string;
  @ApiProperty({ description: 'always false: Anvil cannot verify SSH keys' }) verified: boolean;
}

/** A key with the user who owns it. */
export interface OwnedPublicKey {
  key: PublicKeyEntity;
  owner: UserEntity;
}

/** Pure: the key as `viewer` may see it; `user` and `key_type` only for the owner or a site admin. */
export function toPublicKeyWire({ key, owner }: OwnedPublicKey, viewer: AuthContext, site: Site): PublicKeyWire {
  const privileged = viewer.isSelfOrAdmin(key.ownerId);
  return {
    id: key.id,
    key: key.content,
    url: `${site.rootUrl}api/v1/user/keys/${key.id}`,
    title: key.name,
    fingerprint: key.fingerprint,
    created_at: formatTime(key.createdUnix),
    updated_at: formatTime(key.updatedUnix),
    ...(privileged ? { user: toUserWire(owner, viewer, site), key_type: 'user' } : {}),
    verified: false,
  };
}
