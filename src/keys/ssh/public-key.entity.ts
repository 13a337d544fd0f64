import { Entity, Index } from 'typeorm';
import { IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../../database/columns';

/**
 * A user's SSH public key. Fingerprints are unique across the server and titles per user:
 * both rules are unique indexes too, so that a lost race cannot store a duplicate.
 */
@Entity('public_key')
@Index('IDX_public_key_fingerprint', ['fingerprint'], { unique: true })
@Index('IDX_public_key_owner_id_name', ['ownerId', 'name'], { unique: true })
export class PublicKeyEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  ownerId: number;

  /** The key's title. */
  @TextColumn(255)
  name: string;

  /** `SHA256:<unpadded base64>`, as `ssh-keygen -lf` prints it. */
  @TextColumn(64)
  fingerprint: string;

  /** Normalised single line `<type> <base64>[ <comment>]`. */
  @LongTextColumn()
  content: string;

  @UnixTimeColumn()
  createdUnix: number;

  /** Last use: set when a git command over SSH with this key succeeds (docs/git-transports.md). */
  @UnixTimeColumn()
  updatedUnix: number;
}
