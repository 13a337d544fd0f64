import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { formatTime } from '../common/time';
import { ScopeSet } from '../auth/scopes';
import type { AccessTokenEntity } from './access-token.entity';

/** The `AccessToken` JSON. `sha1` carries the plaintext only in the creation response. */
@ApiSchema({ name: 'AccessToken' })
export class AccessTokenWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty({ description: 'the token, only in the creation response; "" otherwise' }) sha1: string;
  @ApiProperty() token_last_eight: string;
  @ApiProperty({ type: [String] }) scopes: string[];
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ nullable: true, type: [String], example: null }) repositories: null;
}

export function toAccessTokenWire(token: AccessTokenEntity, plaintext = ''): AccessTokenWire {
  return {
    id: token.id,
    name: token.name,
    sha1: plaintext,
    token_last_eight: token.tokenLastEight,
    scopes: ScopeSet.fromStored(token.scope).toList(),
    created_at: formatTime(token.createdUnix),
    repositories: null,
  };
}
