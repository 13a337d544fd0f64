import { Entity, Index } from 'typeorm';
import { CounterColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * An SSH key that reaches one repository, not a user. The same key may be a deploy key of several repositories
 * (one row each) but never also a user's key (checked on both sides when a key is added).
 */
@Entity('deploy_key')
@Index('IDX_deploy_key_repo_id_fingerprint', ['repoId', 'fingerprint'], { unique: true })
@Index('IDX_deploy_key_fingerprint', ['fingerprint'])
export class DeployKeyEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @TextColumn(255)
  name: string;

  /** `SHA256:<unpadded base64>`, as for user keys. */
  @TextColumn(64)
  fingerprint: string;

  /** Normalised single line `<type> <base64>[ <comment>]`. */
  @LongTextColumn()
  content: string;

  /** An AccessMode: read (read-only key) or write. */
  @CounterColumn()
  mode: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
