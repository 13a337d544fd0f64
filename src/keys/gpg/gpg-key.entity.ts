import { Entity, Index } from 'typeorm';
import { FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../../database/columns';

/**
 * One OpenPGP key: a primary key (`primaryKeyId` '') or one of its subkeys (`primaryKeyId` = the primary's
 * key id). Key ids are unique across the server, primaries and subkeys alike.
 */
@Entity('gpg_key')
@Index('IDX_gpg_key_key_id', ['keyId'], { unique: true })
@Index('IDX_gpg_key_owner_id_primary_key_id', ['ownerId', 'primaryKeyId'])
@Index('IDX_gpg_key_primary_key_id', ['primaryKeyId'])
export class GpgKeyEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  ownerId: number;

  /** 16 uppercase hex digits. */
  @TextColumn(16)
  keyId: string;

  /** '' for a primary key. */
  @TextColumn(16)
  primaryKeyId: string;

  /** Base64 of the serialized public-key packet. */
  @LongTextColumn()
  content: string;

  /** JSON array of the owner's verified addresses the key's identities matched; '[]' for subkeys. */
  @LongTextColumn()
  emails: string;

  @UnixTimeColumn()
  createdUnix: number;

  /** 0 when the key never expires. */
  @UnixTimeColumn()
  expiredUnix: number;

  @UnixTimeColumn()
  addedUnix: number;

  @FlagColumn(false)
  canSign: boolean;

  @FlagColumn(false)
  canEncryptComms: boolean;

  @FlagColumn(false)
  canEncryptStorage: boolean;

  @FlagColumn(false)
  canCertify: boolean;

  /** Added with a valid signature over the owner's verification token. */
  @FlagColumn(false)
  verified: boolean;

  /** The armored entity as submitted (primaries only; '' for subkeys). Loaded only for the export. */
  @LongTextColumn({ select: false })
  armored: string;
}
