import { Entity, Index } from 'typeorm';
import { IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * One status a CI system reported for one commit. Every report is kept (all are listed); the combined view
 * takes the latest per context.
 */
@Entity('commit_status')
@Index('IDX_commit_status_repo_id_sha', ['repoId', 'sha'])
export class CommitStatusEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  /** The full commit id the status is about. */
  @TextColumn(64)
  sha: string;

  /** pending | success | error | failure | warning */
  @TextColumn(16)
  state: string;

  @LongTextColumn()
  targetUrl: string;

  @LongTextColumn()
  description: string;

  @TextColumn(255)
  context: string;

  @RefColumn()
  creatorId: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;
}
