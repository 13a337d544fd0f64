import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * `issue_mention`: the users an issue or its comments mention. The mentions recorded so far (`@name` entries of
 * the word index, matched to accounts by lower-cased name) are copied in once; a rerun does nothing.
 */
export class CreateIssueMentions1796186458409 implements MigrationInterface {
  name = 'CreateIssueMentions1796186458409';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    if (await queryRunner.hasTable('issue_mention')) return;
    await queryRunner.createTable(
      new Table({
        name: 'issue_mention',
        columns: [k.id(), k.ref('issue_id'), k.ref('repo_id'), k.ref('user_id')],
        indices: [k.index('IDX_issue_mention_issue_id_user_id', ['issue_id', 'user_id'], true), k.index('IDX_issue_mention_user_id', ['user_id'])],
      }),
    );
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const mention = sqlite ? "'@' || u.lower_name" : "CONCAT('@', u.lower_name)";
    await queryRunner.query(
      `INSERT INTO issue_mention (issue_id, repo_id, user_id) SELECT DISTINCT w.issue_id, w.repo_id, u.id FROM issue_word w INNER JOIN \`user\` u ON w.word = ${mention} AND u.type = 0`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasTable('issue_mention')) await queryRunner.dropTable('issue_mention');
  }
}
