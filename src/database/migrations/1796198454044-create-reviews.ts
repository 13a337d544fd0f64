import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Reviews of pull requests (`review`: reviews and review requests) and their line comments (`review_comment`).
 * Each table is created only when missing, so a rerun does no harm.
 */
export class CreateReviews1796198454044 implements MigrationInterface {
  name = 'CreateReviews1796198454044';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const medium = (name: string) => k.longText(name, queryRunner.connection.options.type === 'better-sqlite3' ? {} : { type: 'mediumtext' });
    if (!(await queryRunner.hasTable('review'))) {
      await queryRunner.createTable(
        new Table({
          name: 'review',
          columns: [
            k.id(),
            k.counter('type'),
            k.ref('reviewer_id'),
            k.ref('reviewer_team_id', { default: '0' }),
            k.ref('issue_id'),
            k.ref('repo_id'),
            medium('content'),
            k.flag('official'),
            k.text('commit_id', 64),
            k.flag('stale'),
            k.flag('dismissed'),
            k.time('created_unix'),
            k.time('updated_unix'),
          ],
          indices: [
            k.index('IDX_review_issue_id', ['issue_id', 'id']),
            k.index('IDX_review_repo_id', ['repo_id']),
            k.index('IDX_review_reviewer_id', ['reviewer_id']),
          ],
        }),
      );
    }
    if (!(await queryRunner.hasTable('review_comment'))) {
      await queryRunner.createTable(
        new Table({
          name: 'review_comment',
          columns: [
            k.id(),
            k.ref('review_id'),
            k.ref('issue_id'),
            k.ref('repo_id'),
            k.ref('poster_id'),
            k.text('path', 1024),
            { name: 'line', type: 'integer', default: '0' },
            k.text('commit_sha', 64),
            medium('patch'),
            medium('body'),
            k.ref('resolver_id', { default: '0' }),
            k.flag('invalidated'),
            k.time('created_unix'),
            k.time('updated_unix'),
          ],
          indices: [
            k.index('IDX_review_comment_review_id', ['review_id', 'id']),
            k.index('IDX_review_comment_issue_id', ['issue_id']),
            k.index('IDX_review_comment_repo_id', ['repo_id']),
          ],
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('review_comment', true);
    await queryRunner.dropTable('review', true);
  }
}
