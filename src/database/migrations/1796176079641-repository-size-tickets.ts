import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The numbers that order a repository's size measurements (repository.entity.ts): a measurement taken before
 * another instance's push but written after it no longer replaces the newer one. Added with plain ALTER TABLE:
 * TypeORM's SQLite addColumn rebuilds the table, which would drop the triggers other migrations put on it.
 */
export class RepositorySizeTickets1796176079641 implements MigrationInterface {
  name = 'RepositorySizeTickets1796176079641';

  async up(queryRunner: QueryRunner): Promise<void> {
    const type = queryRunner.connection.options.type === 'better-sqlite3' ? 'integer NOT NULL DEFAULT (0)' : 'bigint NOT NULL DEFAULT 0';
    for (const name of ['git_size_ticket', 'git_size_stored_ticket']) {
      if (!(await queryRunner.hasColumn('repository', name))) await queryRunner.query(`ALTER TABLE repository ADD COLUMN ${name} ${type}`);
    }
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    for (const name of ['git_size_stored_ticket', 'git_size_ticket']) {
      if (await queryRunner.hasColumn('repository', name)) await queryRunner.query(`ALTER TABLE repository DROP COLUMN ${name}`);
    }
  }
}
