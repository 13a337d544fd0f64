import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** The plaintext token is never stored: only a salted PBKDF2 hash and its last eight characters. */
@Entity('access_token')
@Index('IDX_access_token_uid', ['uid'])
@Index('IDX_access_token_token_last_eight', ['tokenLastEight'])
export class AccessTokenEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  uid: number;

  @TextColumn(255)
  name: string;

  @TextColumn(255)
  tokenHash: string;

  @TextColumn(255)
  tokenSalt: string;

  @TextColumn(8)
  tokenLastEight: string;

  /** Normalised scope list, comma separated. */
  @TextColumn(512)
  scope: string;

  @UnixTimeColumn()
  createdUnix: number;

  /** Last successful use. */
  @UnixTimeColumn()
  updatedUnix: number;
}
