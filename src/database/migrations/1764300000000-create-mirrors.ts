import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Pull-mirror records: interval, schedule, sealed credentials and the sync claim (docs/mirrors.md). */
export class CreateMirrors1764300000000 implements MigrationInterface {
  name = 'CreateMirrors1764300000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'mirror',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.time('interval_seconds'),
          k.time('next_update_unix'),
          k.longText('credentials'),
          k.text('claimed_by', 64),
          k.time('claim_expires_unix'),
        ],
        indices: [k.index('IDX_mirror_repo_id', ['repo_id'], true), k.index('IDX_mirror_next_update_unix', ['next_update_unix'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('mirror');
  }
}
