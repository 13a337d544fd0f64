import { Injectable } from '@nestjs/common';
import { RateLimiterAbstract, RateLimiterMySQL, RateLimiterSQLite } from 'rate-limiter-flexible';
import { DataSource } from 'typeorm';

/** The table of the migration CreateRateLimits1764520000000. */
const TABLE = 'rate_limit';

/**
 * The only door to the `rate_limit` table (RATE_LIMIT_STORE=database): rate-limiter-flexible's own SQLite and
 * MySQL limiters on the application's connection (better-sqlite3's database, mysql2's pool), so every instance
 * on the same database counts against one budget. The table comes from a migration, never from the library.
 */
@Injectable()
export class RateLimitStore {
  constructor(private readonly dataSource: DataSource) {}

  limiter(keyPrefix: string, points: number, duration: number): RateLimiterAbstract {
    // Expired rows are cleared by clearExpired (RateLimits owns the timer, so it stops with the application).
    const common = { keyPrefix, points, duration, tableName: TABLE, tableCreated: true, clearExpiredByTimeout: false };
    const driver = this.dataSource.driver as unknown as { databaseConnection?: unknown; pool?: unknown; database?: string };
    if (this.dataSource.options.type === 'better-sqlite3') {
      return new RateLimiterSQLite({ ...common, storeClient: driver.databaseConnection, storeType: 'better-sqlite3' });
    }
    return new RateLimiterMySQL({ ...common, storeClient: driver.pool, storeType: 'pool', dbName: driver.database });
  }

  /** Deletes counts whose window ended before `beforeMs`. */
  async clearExpired(beforeMs: number): Promise<void> {
    await this.dataSource.query(`DELETE FROM ${TABLE} WHERE expire < ?`, [beforeMs]);
  }
}
