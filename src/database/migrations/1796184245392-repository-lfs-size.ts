import { MigrationInterface, QueryRunner, TableIndex } from 'typeorm';

/**
 * `lfs_size` on `repository`: the bytes of the LFS objects the repository holds, so that a repository's size is
 * its git directory plus its LFS objects and search can sort by either. Filled from the rows already there.
 * Added with plain ALTER TABLE (TypeORM's SQLite addColumn rebuilds the table and drops its triggers); every
 * step runs only when its result is missing, so that a run interrupted halfway can run again.
 */
export class RepositoryLfsSize1796184245392 implements MigrationInterface {
  name = 'RepositoryLfsSize1796184245392';

  async up(queryRunner: QueryRunner): Promise<void> {
    const type = queryRunner.connection.options.type === 'better-sqlite3' ? 'integer NOT NULL DEFAULT (0)' : 'bigint NOT NULL DEFAULT 0';
    if (!(await queryRunner.hasColumn('repository', 'lfs_size'))) {
      await queryRunner.query(`ALTER TABLE repository ADD COLUMN lfs_size ${type}`);
      await queryRunner.query(
        'UPDATE repository SET lfs_size = COALESCE((SELECT SUM(o.size) FROM lfs_meta_object o WHERE o.repository_id = repository.id), 0) ' +
          'WHERE id IN (SELECT repository_id FROM lfs_meta_object)',
      );
    }
    const table = await queryRunner.getTable('repository');
    if (!table?.indices.some((existing) => existing.name === 'IDX_repository_lfs_size')) {
      await queryRunner.createIndex('repository', new TableIndex({ name: 'IDX_repository_lfs_size', columnNames: ['lfs_size'] }));
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    const table = await queryRunner.getTable('repository');
    if (table?.indices.some((existing) => existing.name === 'IDX_repository_lfs_size')) await queryRunner.dropIndex('repository', 'IDX_repository_lfs_size');
    if (await queryRunner.hasColumn('repository', 'lfs_size')) await queryRunner.query('ALTER TABLE repository DROP COLUMN lfs_size');
  }
}
