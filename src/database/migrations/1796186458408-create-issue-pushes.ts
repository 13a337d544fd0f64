import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** `issue_push`: branches pushed, waiting to have their commits read for issue references. Reruns do nothing. */
export class CreateIssuePushes1796186458408 implements MigrationInterface {
  name = 'CreateIssuePushes1796186458408';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    if (await queryRunner.hasTable('issue_push')) return;
    await queryRunner.createTable(
      new Table({
        name: 'issue_push',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.ref('pusher_id'),
          k.text('ref', 255),
          k.text('before_sha', 64),
          k.text('after_sha', 64),
          k.counter('attempts'),
          k.time('claimed_until'),
          k.time('created_unix'),
        ],
        indices: [k.index('IDX_issue_push_claimed_until', ['claimed_until'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    if (await queryRunner.hasTable('issue_push')) await queryRunner.dropTable('issue_push');
  }
}
