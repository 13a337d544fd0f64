import { Entity, Index } from 'typeorm';
import { IdColumn, RefColumn, UnixTimeColumn } from '../database/columns';

/**
 * `userId` follows `followId` (a user or an organisation), as in Forgejo's `follow` table. The unique index
 * makes following idempotent under concurrency; the second one serves followers lists and the "follows the
 * viewer" part of the list visibility rule (user-visibility.condition.ts).
 */
@Entity('follow')
@Index('IDX_follow_user_id_follow_id', ['userId', 'followId'], { unique: true })
@Index('IDX_follow_follow_id_user_id', ['followId', 'userId'])
export class FollowEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  userId: number;

  @RefColumn()
  followId: number;

  @UnixTimeColumn()
  createdUnix: number;
}
