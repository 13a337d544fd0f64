import { MigrationInterface, QueryRunner, Table, TableIndex } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Forks: `is_fork`, `fork_id` (the source, 0 when none), `num_forks` and `object_pool` (the fork network's shared
 * object store, docs/forks.md) on `repository`, and `repository_fork`, whose unique (owner_id, source_id) lets one
 * owner hold one fork of a source. `is_fork` changes only on insert and on a source's deletion, both of which
 * raise the search generation already. Columns are added with plain ALTER TABLE (TypeORM's SQLite addColumn
 * rebuilds the table and drops its triggers); every step runs only when its result is missing, so that a run
 * interrupted halfway can run again.
 */
export class RepositoryForks1796174710906 implements MigrationInterface {
  name = 'RepositoryForks1796174710906';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
    const columns: [string, string][] = sqlite
      ? [
          ['is_fork', 'boolean NOT NULL DEFAULT (0)'],
          ['fork_id', 'integer NOT NULL DEFAULT (0)'],
          ['num_forks', 'integer NOT NULL DEFAULT (0)'],
          ['object_pool', "varchar(64) NOT NULL DEFAULT ('')"],
        ]
      : [
          ['is_fork', 'tinyint NOT NULL DEFAULT 0'],
          ['fork_id', 'bigint NOT NULL DEFAULT 0'],
          ['num_forks', 'int NOT NULL DEFAULT 0'],
          ['object_pool', "varchar(64) NOT NULL DEFAULT ''"],
        ];
    for (const [name, definition] of columns) {
      if (!(await queryRunner.hasColumn('repository', name))) await queryRunner.query(`ALTER TABLE repository ADD COLUMN ${name} ${definition}`);
    }
    const table = await queryRunner.getTable('repository');
    if (!table?.indices.some((existing) => existing.name === 'IDX_repository_fork_id')) {
      await queryRunner.createIndex('repository', new TableIndex({ name: 'IDX_repository_fork_id', columnNames: ['fork_id'] }));
    }
    if (!(await queryRunner.hasTable('repository_fork'))) {
      await queryRunner.createTable(
        new Table({
          name: 'repository_fork',
          columns: [k.id(), k.ref('owner_id'), k.ref('source_id'), k.ref('repo_id')],
          indices: [
            k.index('IDX_repository_fork_owner_id_source_id', ['owner_id', 'source_id'], true),
            k.index('IDX_repository_fork_source_id', ['source_id']),
            k.index('IDX_repository_fork_repo_id', ['repo_id'], true),
          ],
        }),
      );
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('repository_fork', true);
    await queryRunner.dropIndex('repository', 'IDX_repository_fork_id');
    for (const name of ['object_pool', 'num_forks', 'fork_id', 'is_fork']) await queryRunner.query(`ALTER TABLE repository DROP COLUMN ${name}`);
  }
}
