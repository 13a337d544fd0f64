import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * One LFS object a repository holds: it decides who may download the object through that repository. The
 * content is stored once per oid (src/lfs/lfs-content.ts), whatever number of repositories hold it.
 */
@Entity('lfs_meta_object')
@Index('IDX_lfs_meta_object_repository_id_oid', ['repositoryId', 'oid'], { unique: true })
@Index('IDX_lfs_meta_object_oid', ['oid'])
export class LfsObjectEntity {
  @IdColumn()
  id: number;

  /** The SHA-256 of the content, 64 lowercase hex digits. */
  @TextColumn(64)
  oid: string;

  @Column({ type: 'bigint', transformer: bigintAsNumber, default: 0 })
  size: number;

  @RefColumn()
  repositoryId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
