import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/** Dependencies between issues. A rerun finds the table and does nothing. */
export class CreateIssueDependencies1796188422660 implements MigrationInterface {
  name = 'CreateIssueDependencies1796188422660';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    if (await queryRunner.hasTable('issue_dependency')) return;
    await queryRunner.createTable(
      new Table({
        name: 'issue_dependency',
        columns: [k.id(), k.ref('issue_id'), k.ref('dependency_id'), k.time('created_unix')],
        indices: [
          k.index('IDX_issue_dependency_issue_id_dependency_id', ['issue_id', 'dependency_id'], true),
          k.index('IDX_issue_dependency_dependency_id', ['dependency_id']),
        ],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('issue_dependency');
  }
}
