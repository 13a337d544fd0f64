import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

const MYSQL_RETRYABLE = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const ATTEMPTS = 10;

/**
 * The one way to run a multi-row write atomically. On SQLite there is a single connection, so transactions
 * are queued one after another (SQLite has one writer anyway); on MySQL a deadlock is retried, because
 * InnoDB may pick any of two concurrent writers of the same rows as its victim.
 */
@Injectable()
export class Transactions {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    if (this.dataSource.options.type === 'better-sqlite3') {
      const result = this.queue.then(() => this.dataSource.transaction(work));
      this.queue = result.catch(() => undefined);
      return result;
    }
    return this.withDeadlockRetry(work);
  }

  private async withDeadlockRetry<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        // READ COMMITTED: InnoDB then takes no gap locks for ordinary reads and writes, the main source of
        // deadlocks between concurrent inserts of neighbouring rows.
        return await this.dataSource.transaction('READ COMMITTED', work);
      } catch (error) {
        const code = (error as { code?: string; driverError?: { code?: string } }).driverError?.code ?? (error as { code?: string }).code;
        if (attempt >= ATTEMPTS || !code || !MYSQL_RETRYABLE.has(code)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** Math.min(attempt, 6)));
      }
    }
  }
}

/** True when a write failed on a unique index: the row is already there (a lost race, or a duplicate). */
export function isUniqueViolation(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code;
  return code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}
