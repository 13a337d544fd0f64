import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { formatTime } from '../../common/time';
import type { GpgKeyEntity } from './gpg-key.entity';

@ApiSchema({ name: 'GPGKeyEmail' })
export class GpgKeyEmailWire {
  @ApiProperty() email: string;
  @ApiProperty() verified: boolean;
}

/** The `GPGKey` JSON. */
@ApiSchema({ name: 'GPGKey' })
export class GpgKeyWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ description: '"" for a primary key' }) primary_key_id: string;
  @ApiProperty() key_id: string;
  @ApiProperty({ description: 'base64 of the serialized public-key packet' }) public_key: string;
  @ApiProperty({ type: [GpgKeyEmailWire], nullable: true }) emails: GpgKeyEmailWire[] | null;
  @ApiProperty({ type: () => [GpgKeyWire], nullable: true }) subkeys: GpgKeyWire[] | null;
  @ApiProperty() can_sign: boolean;
  @ApiProperty() can_encrypt_comms: boolean;
  @ApiProperty() can_encrypt_storage: boolean;
  @ApiProperty() can_certify: boolean;
  @ApiProperty() verified: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) expires_at: string;
}

/** A key as it is served: a primary with its subkeys, or a subkey on its own (no subkeys). */
export interface GpgKeyView {
  key: GpgKeyEntity;
  subkeys: GpgKeyEntity[];
}

/**
 * Pure. A primary lists its matched emails and nests its subkeys, which then carry `emails: null` and
 * `subkeys: null`; a subkey fetched by its own id has `[]` for both.
 */
export function toGpgKeyWire(view: GpgKeyView): GpgKeyWire {
  const { key } = view;
  const primary = key.primaryKeyId === '';
  return keyWire(key, {
    emails: primary ? storedEmails(key).map((email) => ({ email, verified: true })) : [],
    subkeys: primary ? view.subkeys.map((subkey) => keyWire(subkey, { emails: null, subkeys: null })) : [],
  });
}

function keyWire(key: GpgKeyEntity, nested: Pick<GpgKeyWire, 'emails' | 'subkeys'>): GpgKeyWire {
  return {
    id: key.id,
    primary_key_id: key.primaryKeyId,
    key_id: key.keyId,
    public_key: key.content,
    emails: nested.emails,
    subkeys: nested.subkeys,
    can_sign: key.canSign,
    can_encrypt_comms: key.canEncryptComms,
    can_encrypt_storage: key.canEncryptStorage,
    can_certify: key.canCertify,
    verified: key.verified,
    created_at: formatTime(key.createdUnix),
    expires_at: formatTime(key.expiredUnix),
  };
}

function storedEmails(key: GpgKeyEntity): string[] {
  try {
    const emails: unknown = JSON.parse(key.emails);
    return Array.isArray(emails) ? emails.filter((email): email is string => typeof email === 'string') : [];
  } catch {
    return [];
  }
}
