import { MigrationInterface, QueryRunner, Table } from 'typeorm';
import { migrationKit } from '../migration-kit';

/**
 * Rate-limit counters shared by every instance on one database (RATE_LIMIT_STORE=database): the table that
 * rate-limiter-flexible's RateLimiterSQLite and RateLimiterMySQL use, in the column order their INSERTs assume
 * (`key`, `points`, `expire` in epoch milliseconds). No entity: only src/http/rate-limit.store.ts reads it,
 * through the library.
 */
export class CreateRateLimits1764520000000 implements MigrationInterface {
  name = 'CreateRateLimits1764520000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    const k = migrationKit(queryRunner);
    await queryRunner.createTable(
      new Table({
        name: 'rate_limit',
        columns: [
          { name: 'key', type: 'varchar', length: '255', isPrimary: true },
          { name: 'points', type: 'integer', default: '0' },
          { ...k.ref('expire'), isNullable: true },
        ],
        indices: [k.index('IDX_rate_limit_expire', ['expire'])],
      }),
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.dropTable('rate_limit');
  }
}
