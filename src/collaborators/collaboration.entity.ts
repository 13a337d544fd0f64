import { Entity, Index } from 'typeorm';
import { CounterColumn, IdColumn, RefColumn, UnixTimeColumn } from '../database/columns';

/** A user's access to one repository beside its owner's (Forgejo's `collaboration`). */
@Entity('collaboration')
@Index('IDX_collaboration_repo_id_user_id', ['repoId', 'userId'], { unique: true })
@Index('IDX_collaboration_user_id', ['userId'])
export class CollaborationEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @RefColumn()
  userId: number;

  /** An AccessMode: read, write or admin. */
  @CounterColumn()
  mode: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
