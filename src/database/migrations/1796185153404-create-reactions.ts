import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Reactions to issues and comments, one of a kind per user. A rerun finds the table and does nothing. */
export class CreateReactions1796185153404 implements MigrationInterface {
  name = 'CreateReactions1796185153404';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    if (await queryRunner.hasTable('reaction')) return;
    await queryRunner.createTable(
      new Table({
        name: 'reaction',
        columns: [k.id(), k.text('type', 64), k.ref('issue_id'), k.ref('comment_id'), k.ref('user_id'), k.time('created_unix')],
        indices: [
          k.index('IDX_reaction_issue_id_comment_id_user_id_type', ['issue_id', 'comment_id', 'user_id', 'type'], true),
          k.index('IDX_reaction_comment_id', ['comment_id']),
          k.index('IDX_reaction_user_id', ['user_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('reaction');
  }
}
