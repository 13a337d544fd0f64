import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

const REVIEWER_TEAM_INDEX = 'IDX_review_reviewer_team_id';

/**
 * Review requests of teams: `comment.assignee_team_id`, the team a `review_request` timeline entry names, and an
 * index on `review.reviewer_team_id`, by which a deleted team's requests go. The column is added with plain ALTER
 * TABLE (TypeORM's SQLite addColumn rebuilds the table); each change only when missing, so a rerun does no harm.
 */
export class TeamReviewRequests1796268047812 implements MigrationInterface {
  name = 'TeamReviewRequests1796268047812';

  async up(queryRunner: QueryRunner): Promise<void> {
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    if (!(await queryRunner.hasColumn('comment', 'assignee_team_id'))) {
      await queryRunner.query(`ALTER TABLE comment ADD COLUMN assignee_team_id ${sqlite ? 'integer NOT NULL DEFAULT (0)' : 'bigint NOT NULL DEFAULT 0'}`);
    }
    const review = await queryRunner.getTable('review');
    if (review && !review.indices.some((index) => index.name === REVIEWER_TEAM_INDEX)) {
      await queryRunner.createIndex('review', new TableIndex({ name: REVIEWER_TEAM_INDEX, columnNames: ['reviewer_team_id'] }));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const review = await queryRunner.getTable('review');
    if (review?.indices.some((index) => index.name === REVIEWER_TEAM_INDEX)) await queryRunner.dropIndex('review', REVIEWER_TEAM_INDEX);
    if (await queryRunner.hasColumn('comment', 'assignee_team_id')) await queryRunner.query('ALTER TABLE comment DROP COLUMN assignee_team_id');
  }
}
