import { Entity, Index } from 'typeorm';
import { IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A path of a repository locked by a user (git lfs lock); one lock per path, whatever its letter case. */
@Entity('lfs_lock')
@Index('IDX_lfs_lock_repository_id_path_key', ['repositoryId', 'pathKey'], { unique: true })
export class LfsLockEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repositoryId: number;

  /** The user holding the lock. */
  @RefColumn()
  ownerId: number;

  /** The path as the client sent it (cleaned). */
  @LongTextColumn()
  path: string;

  /** SHA-256 of the lowercased path: paths may be longer than any portable unique index allows. */
  @TextColumn(64)
  pathKey: string;

  @UnixTimeColumn()
  createdUnix: number;
}
