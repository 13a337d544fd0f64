import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Merges of pull requests: `pull_merge_intent` (a merge whose base branch may have moved but whose pull request
 * is not yet recorded as merged) and `pull_auto_merge` (merges scheduled for when the head's checks pass). Each
 * table is created only when missing, so a rerun does no harm.
 */
export class CreatePullMerges1796186469501 implements MigrationInterface {
  name = 'CreatePullMerges1796186469501';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    if (!(await queryRunner.hasTable('pull_merge_intent'))) {
      await queryRunner.createTable(
        new Table({
          name: 'pull_merge_intent',
          columns: [
            k.id(),
            k.ref('pull_id'),
            k.ref('repo_id'),
            k.ref('merger_id'),
            k.text('style', 32),
            k.text('ref', 255),
            k.text('old_commit_id', 64),
            k.text('new_commit_id', 64),
            k.flag('push_recorded'),
            k.time('created_unix'),
          ],
          indices: [k.index('IDX_pull_merge_intent_pull_id', ['pull_id'], true)],
        }),
      );
    }
    if (!(await queryRunner.hasTable('pull_auto_merge'))) {
      await queryRunner.createTable(
        new Table({
          name: 'pull_auto_merge',
          columns: [
            k.id(),
            k.ref('pull_id'),
            k.ref('doer_id'),
            k.text('merge_style', 32),
            k.longText('message'),
            k.flag('delete_branch_after_merge'),
            k.time('created_unix'),
          ],
          indices: [k.index('IDX_pull_auto_merge_pull_id', ['pull_id'], true)],
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasTable('pull_auto_merge')) await queryRunner.dropTable('pull_auto_merge');
    if (await queryRunner.hasTable('pull_merge_intent')) await queryRunner.dropTable('pull_merge_intent');
  }
}
