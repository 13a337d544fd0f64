import { Entity, Index } from 'typeorm';
import { CounterColumn, FlagColumn, IdColumn, LongTextColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/**
 * A milestone of a repository. `numIssues` and `numClosedIssues` count the issues that carry it; they move in
 * the transaction that puts an issue on or off it, closes, reopens or deletes one.
 */
@Entity('milestone')
@Index('IDX_milestone_repo_id_is_closed', ['repoId', 'isClosed'])
@Index('IDX_milestone_name', ['name'])
export class MilestoneEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  repoId: number;

  @TextColumn(255)
  name: string;

  @LongTextColumn()
  content: string;

  @FlagColumn(false)
  isClosed: boolean;

  @CounterColumn()
  numIssues: number;

  @CounterColumn()
  numClosedIssues: number;

  /** The due date; NO_DEADLINE (the last day of year 9999) when there is none, so that lists sort it last. */
  @UnixTimeColumn()
  deadlineUnix: number;

  @UnixTimeColumn()
  createdUnix: number;

  @UnixTimeColumn()
  updatedUnix: number;

  /** When it was last closed; 0 while never closed. */
  @UnixTimeColumn()
  closedUnix: number;
}

/** 9999-12-31T00:00:00Z: a milestone without a due date, as Forgejo stores it. */
export const NO_DEADLINE = 253402214400;
