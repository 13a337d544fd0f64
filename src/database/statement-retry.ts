import { Logger } from '@nestjs/common';
import type { DataSource, QueryRunner } from 'typeorm';

/**
 * A statement the server aborted as a whole and may simply run again: a deadlock victim or a Galera
 * certification failure (both 1213), or a lock wait that timed out (1205). Outside a transaction (autocommit)
 * nothing of it was kept, so running it again is safe; inside one the whole transaction is gone, and only its
 * runner (Transactions) may start it again.
 *
 * Also a table's triggers that the server failed to load (1710, 1711): every trigger is made by a migration and
 * runs in every other statement, yet a Galera node under concurrent writes to the same rows, while an instance
 * restarted, answered "Unknown trigger has an error in its body: 'Query was empty'" for a few hundred
 * milliseconds. The statement failed while opening its tables, before it changed a row.
 */
const RETRYABLE_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'ER_ERROR_IN_TRIGGER_BODY', 'ER_ERROR_IN_UNKNOWN_TRIGGER_BODY']);
const RETRYABLE_ERRNOS = new Set([1213, 1205, 1710, 1711]);
const ATTEMPTS = 8;

const logger = new Logger('Statements');

export function isRetryableConflict(error: unknown): boolean {
  const e = error as { code?: string; errno?: number; driverError?: { code?: string; errno?: number } } | null;
  if (!e) return false;
  const code = e.driverError?.code ?? e.code;
  const errno = e.driverError?.errno ?? e.errno;
  return (code !== undefined && RETRYABLE_CODES.has(code)) || (errno !== undefined && RETRYABLE_ERRNOS.has(errno));
}

/**
 * Every statement run outside a transaction on MySQL (an upsert of a counter, a lease, a claim, a single
 * UPDATE of a store) is tried again when the server aborted it for a conflict: on Galera another node's
 * concurrent write makes it fail certification with 1213 however short it is. A statement that still fails
 * after the last attempt is logged and its error thrown to the caller, never swallowed.
 */
export function retrySingleStatements(dataSource: DataSource): void {
  if (dataSource.options.type !== 'mysql') return;
  const driver = dataSource.driver as unknown as { createQueryRunner(mode: string): QueryRunner };
  const create = driver.createQueryRunner.bind(driver);
  driver.createQueryRunner = (mode: string) => withStatementRetry(create(mode));
}

/** `runner`, whose `query` runs a statement outside a transaction again after a conflict (see above). */
export function withStatementRetry(runner: QueryRunner, pause: (attempt: number) => Promise<void> = backOff): QueryRunner {
  const query = runner.query.bind(runner) as (...args: unknown[]) => Promise<unknown>;
  runner.query = (async (...args: unknown[]) => {
    for (let attempt = 1; ; attempt++) {
      const alone = !runner.isTransactionActive;
      try {
        return await query(...args);
      } catch (error) {
        if (!alone || !isRetryableConflict(error)) throw error;
        if (attempt >= ATTEMPTS) {
          logger.error(`a statement still conflicted after ${attempt} attempts: ${(error as Error).message}`);
          throw error;
        }
        logger.verbose(`a statement conflicted (attempt ${attempt}), trying again: ${(error as Error).message}`);
        await pause(attempt);
      }
    }
  }) as QueryRunner['query'];
  return runner;
}

function backOff(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** Math.min(attempt, 6)));
}
