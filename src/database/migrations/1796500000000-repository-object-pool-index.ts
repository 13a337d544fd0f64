import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

const INDEX = new TableIndex({ name: 'IDX_repository_object_pool', columnNames: ['object_pool'] });

/**
 * The object pools rows name (a start's leftover check, `anvil doctor`) and the members of one pool (a fork's
 * deletion) read `object_pool`, which no index held: each was a scan of every repository (111 ms for 100 000 on
 * SQLite, the event loop held meanwhile, before every start listened). Made only when missing.
 */
export class RepositoryObjectPoolIndex1796500000000 implements MigrationInterface {
  name = 'RepositoryObjectPoolIndex1796500000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('repository');
    if (table && !table.indices.some((existing) => existing.name === INDEX.name)) await queryRunner.createIndex('repository', INDEX);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('repository');
    if (table?.indices.some((existing) => existing.name === INDEX.name)) await queryRunner.dropIndex('repository', INDEX.name!);
  }
}
