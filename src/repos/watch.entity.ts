import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, UnixTimeColumn } from '../database/columns';

/** A user watching a repository (the creator watches each new repository). */
@Entity('watch')
@Index('IDX_watch_uid_repo_id', ['uid', 'repoId'], { unique: true })
@Index('IDX_watch_repo_id', ['repoId'])
export class WatchEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  uid: number;

  @RefColumn()
  repoId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
