import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `comment.review_id`: the review a `review`, `review_request` or `dismiss_review` timeline entry names. Added
 * with plain ALTER TABLE (TypeORM's SQLite addColumn rebuilds the table), only when missing, so a rerun does no harm.
 */
export class CommentReviewId1796199264777 implements MigrationInterface {
  name = 'CommentReviewId1796199264777';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    if (!(await queryRunner.hasColumn('comment', 'review_id'))) {
      await queryRunner.query(`ALTER TABLE comment ADD COLUMN review_id ${sqlite ? 'integer NOT NULL DEFAULT (0)' : 'bigint NOT NULL DEFAULT 0'}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasColumn('comment', 'review_id')) await queryRunner.query('ALTER TABLE comment DROP COLUMN review_id');
  }
}
