import { Entity, Index, PrimaryColumn } from 'typeorm';
import { bigintAsNumber, LongTextColumn } from '../database/columns';

/**
 * One row per distinct gram of an individual user's login, full name and e-mail (user-search.grams.ts
 * explains the scheme). The primary key `(gram, user_id)` is the index every search lookup uses.
 */
@Entity('user_search_gram')
@Index('IDX_user_search_gram_user_id', ['userId'])
export class UserSearchGramEntity {
  @PrimaryColumn({ type: 'varchar', length: 3 })
  gram: string;

  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber })
  userId: number;
}

/**
 * The lowered search texts of an individual user, for the exact substring check on the gram candidates.
 * Lowered in JavaScript, because SQLite's LOWER() and LIKE fold ASCII only.
 */
@Entity('user_search_text')
export class UserSearchTextEntity {
  @PrimaryColumn({ type: 'bigint', transformer: bigintAsNumber })
  userId: number;

  @LongTextColumn()
  fullName: string;

  @LongTextColumn()
  email: string;
}
