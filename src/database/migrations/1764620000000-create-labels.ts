import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Labels of repositories and organisations, names unique per owner. */
export class CreateLabels1764620000000 implements MigrationInterface {
  name = 'CreateLabels1764620000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'label',
        columns: [
          k.id(),
          k.ref('repo_id'),
          k.ref('org_id'),
          k.text('name', 255),
          k.text('color', 7),
          k.text('description', 2048),
          k.flag('exclusive'),
          k.time('archived_unix'),
          k.time('created_unix'),
          k.time('updated_unix'),
        ],
        indices: [k.index('IDX_label_repo_id_org_id_name', ['repo_id', 'org_id', 'name'], true), k.index('IDX_label_org_id', ['org_id'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('label');
  }
}
