import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn } from '../database/columns';

/**
 * One owner's fork of one source: the row exists while `repoId` is a fork of `sourceId`. Its unique index is what
 * lets one owner hold one fork of a source, so that two concurrent forks cannot both succeed (a nullable
 * `repository.fork_id` under a unique index would do the same, but its default reads differently on MySQL and
 * MariaDB).
 */
@Entity('repository_fork')
@Index('IDX_repository_fork_owner_id_source_id', ['ownerId', 'sourceId'], { unique: true })
@Index('IDX_repository_fork_source_id', ['sourceId'])
@Index('IDX_repository_fork_repo_id', ['repoId'], { unique: true })
export class ForkEntity {
  @IdColumn()
  id: number;

  /** The fork's owner. */
  @RefColumn()
  ownerId: number;

  @RefColumn()
  sourceId: number;

  /** The fork. */
  @RefColumn()
  repoId: number;
}
