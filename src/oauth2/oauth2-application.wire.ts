import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { formatTime } from '../common/time';
import type { OAuth2ApplicationEntity } from './oauth2.entities';

/** Forgejo's `OAuth2Application`; `client_secret` carries the secret only in the answer that made it. */
@ApiSchema({ name: 'OAuth2Application' })
export class OAuth2ApplicationWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty() name: string;
  @ApiProperty() client_id: string;
  @ApiProperty({ description: 'the secret, only when created or regenerated; "" otherwise' }) client_secret: string;
  @ApiProperty() confidential_client: boolean;
  @ApiProperty({ type: [String] }) redirect_uris: string[];
  @ApiProperty({ format: 'date-time' }) created: string;
}

export function toOAuth2ApplicationWire(application: OAuth2ApplicationEntity, secret = ''): OAuth2ApplicationWire {
  return {
    id: application.id,
    name: application.name,
    client_id: application.clientId,
    client_secret: secret,
    confidential_client: application.confidentialClient,
    redirect_uris: redirectUrisOf(application),
    created: formatTime(application.createdUnix),
  };
}

export function redirectUrisOf(application: OAuth2ApplicationEntity): string[] {
  const parsed = JSON.parse(application.redirectUris || '[]') as unknown;
  return Array.isArray(parsed) ? parsed.filter((item): item is string => typeof item === 'string') : [];
}
