import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, UnixTimeColumn } from '../database/columns';

/** A user's star on a repository. */
@Entity('star')
@Index('IDX_star_uid_repo_id', ['uid', 'repoId'], { unique: true })
@Index('IDX_star_repo_id', ['repoId'])
export class StarEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  uid: number;

  @RefColumn()
  repoId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
