import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Issue bodies, comments and webhook payloads become `mediumtext` on MySQL (16 MiB; `text` stops at 64 KiB, below
 * what an issue body may hold and what a payload carrying one needs). SQLite's `text` has no such bound: nothing
 * changes there. A column already `mediumtext` is left alone, so a rerun does nothing.
 */
export class MediumTextBodies1796186458410 implements MigrationInterface {
  name = 'MediumTextBodies1796186458410';

  async up(queryRunner: QueryRunner): Promise<void> {
    if (queryRunner.connection.options.type === 'better-sqlite3') return;
    for (const [table, column] of [
      ['issue', 'body'],
      ['comment', 'body'],
      ['webhook_event', 'payload'],
    ]) {
      const [row] = await queryRunner.query(
        'SELECT DATA_TYPE AS type FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = ? AND COLUMN_NAME = ?',
        [table, column],
      );
      if (row && String(row.type).toLowerCase() !== 'mediumtext') await queryRunner.query(`ALTER TABLE \`${table}\` MODIFY \`${column}\` mediumtext NOT NULL`);
    }
  }

  async down(): Promise<void> {
    // Going back to text could cut stored bodies: left as it is.
  }
}
