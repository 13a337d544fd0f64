import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';

const MYSQL_RETRYABLE = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT']);
const ATTEMPTS = 10;
/**
 * At most this many queued transactions share one SQLite commit, and no more are added once a group has run this
 * long: a slow transaction delays the answers of the group it is in, not of every group after it.
 */
const GROUP_COMMIT_MAX = 128;
const GROUP_COMMIT_MS = 10;

interface QueuedWork {
  work: (tx: EntityManager) => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The one way to run a multi-row write atomically. On MySQL a deadlock is retried, because InnoDB may pick
 * any of two concurrent writers of the same rows as its victim.
 *
 * On SQLite there is a single connection (and one writer anyway), so transactions run one after another, and
 * the ones that queued up meanwhile share one commit (group commit): a COMMIT waits for the disk (an fsync,
 * milliseconds), the work of a star or a follow takes microseconds, so committing each alone would cap every
 * write at a few hundred a second. Each queued transaction runs inside its own SAVEPOINT: one that fails is
 * rolled back to it alone and its caller gets the error; the others are kept. Every caller learns its outcome
 * only after the shared COMMIT, so a resolved `run` is as durable as with a commit of its own; should the
 * COMMIT fail, every caller of the group gets that error and nothing of the group is kept.
 */
@Injectable()
export class Transactions {
  private readonly queued: QueuedWork[] = [];
  private draining = false;
  /** The clock that bounds a group's duration (GROUP_COMMIT_MS); tests give their own, so no test depends on speed. */
  clock: () => number = () => performance.now();

  constructor(private readonly dataSource: DataSource) {}

  run<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    if (this.dataSource.options.type === 'better-sqlite3') {
      return new Promise<T>((resolve, reject) => {
        this.queued.push({ work, resolve: resolve as (value: unknown) => void, reject });
        if (!this.draining) void this.drain();
      });
    }
    return this.withDeadlockRetry(work);
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queued.length > 0) {
        // One turn of the event loop first: the requests that arrived meanwhile get to queue their transactions
        // (their lookups run on promises alone), so that they share this group's commit instead of each
        // waiting for one of their own. Without it, a group would hold little more than the one work that
        // started it.
        await new Promise<void>((resolve) => setImmediate(resolve));
        await this.commitGroup(this.queued.splice(0, GROUP_COMMIT_MAX));
      }
    } finally {
      this.draining = false;
    }
  }

  /** One SQLite transaction for `group`, a savepoint per work; settles every work's promise after the COMMIT. */
  private async commitGroup(group: QueuedWork[]): Promise<void> {
    const runner = this.dataSource.createQueryRunner();
    const outcomes: (() => void)[] = [];
    try {
      await runner.startTransaction();
    } catch (error) {
      for (const item of group) item.reject(error);
      return;
    }
    const started = this.clock();
    for (let index = 0; index < group.length; index++) {
      if (index > 0 && this.clock() - started > GROUP_COMMIT_MS) {
        // The rest goes first into the next group.
        this.queued.unshift(...group.splice(index));
        break;
      }
      const item = group[index];
      await runner.startTransaction();
      try {
        const value = await item.work(runner.manager);
        await runner.commitTransaction();
        outcomes.push(() => item.resolve(value));
      } catch (error) {
        try {
          await runner.rollbackTransaction();
          outcomes.push(() => item.reject(error));
        } catch (rollbackError) {
          // The savepoint is gone (SQLite rolled the whole transaction back, e.g. on a full disk): nothing of
          // the group is kept. This work and those done fail; those not yet run go back to the queue.
          await runner.rollbackTransaction().catch(() => undefined);
          item.reject(error);
          for (const done of group.slice(0, index)) done.reject(rollbackError);
          this.queued.unshift(...group.slice(index + 1));
          await runner.release();
          return;
        }
      }
    }
    try {
      await runner.commitTransaction();
    } catch (error) {
      await runner.rollbackTransaction().catch(() => undefined);
      for (const item of group) item.reject(error);
      await runner.release();
      return;
    }
    await runner.release();
    for (const settle of outcomes) settle();
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

/**
 * Runs one INSERT, UPDATE or DELETE with bound `?` parameters in `tx` and returns how many rows it changed
 * (better-sqlite3 `changes`, mysql2 `affectedRows`). Bound, never inlined: the statement is prepared once and
 * reused for every id, where a query builder would inline numbers and prepare anew per id.
 */
export async function changeRows(tx: EntityManager, sql: string, parameters: unknown[]): Promise<number> {
  if (!tx.queryRunner) throw new Error('changeRows needs the EntityManager of a transaction');
  const result = await tx.queryRunner.query(sql, parameters, true);
  return result.affected ?? 0;
}

/**
 * `INSERT ... VALUES (...)` that adds nothing, without an error, when a unique index already holds the key:
 * `ON CONFLICT DO NOTHING` on SQLite, `INSERT IGNORE` on MySQL (which would also silence other errors, so
 * only for tables whose only constraints are their unique keys). `changeRows` then says 1 (inserted) or 0.
 */
export function insertUnlessPresent(tx: EntityManager, table: string, columns: string[]): string {
  const values = `(${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`;
  return tx.connection.options.type === 'mysql' ? `INSERT IGNORE INTO ${table} ${values}` : `INSERT INTO ${table} ${values} ON CONFLICT DO NOTHING`;
}
