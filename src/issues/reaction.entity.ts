import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, TextColumn, UnixTimeColumn } from '../database/columns';

/** A user's reaction (`+1`, `heart`, …) to an issue (`commentId` 0) or to one of its comments; one of a kind per user. */
@Entity('reaction')
@Index('IDX_reaction_issue_id_comment_id_user_id_type', ['issueId', 'commentId', 'userId', 'type'], { unique: true })
@Index('IDX_reaction_comment_id', ['commentId'])
@Index('IDX_reaction_user_id', ['userId'])
export class ReactionEntity {
  @IdColumn()
  id: number;

  @TextColumn(64)
  type: string;

  @RefColumn()
  issueId: number;

  @RefColumn()
  commentId: number;

  @RefColumn()
  userId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
