import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import { Injectable, Logger } from '@nestjs/common';
import { DataSource, EntityManager, QueryRunner } from 'typeorm';
import { TransactionLostError } from '../common/dependency-errors';
import { isRetryableConflict } from './statement-retry';

// One cohesive thing, kept whole though long: the one way writes reach the database, SQLite's group commit and
// MySQL's retried transactions side by side, with the writes of their own that queue like transactions.

/** The after-commit steps of the transaction whose work is running (see `Transactions.afterCommit`). */
const committedHooks = new AsyncLocalStorage<(() => void)[]>();

const ATTEMPTS = 10;
/**
 * At most this many queued transactions share one SQLite commit, and no more are added once a group has run this
 * long: a slow transaction delays the answers of the group it is in, not of every group after it.
 */
const GROUP_COMMIT_MAX = 128;
const GROUP_COMMIT_MS = 10;

interface QueuedWork {
  work: (tx: EntityManager) => Promise<unknown>;
  /** False for bookkeeping (`runBookkeeping`): its commit need not wait for the disk. */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * The one way to run a multi-row write atomically. On MySQL a deadlock is retried (InnoDB may pick either writer),
 * like every abort that `isRetryableConflict` knows.
 *
 * On SQLite there is a single connection (and one writer anyway), so transactions run one after another, and
 * the ones that queued up meanwhile share one commit (group commit): a COMMIT waits for the disk (an fsync,
 * milliseconds), the work of a star or a follow takes microseconds, so committing each alone would cap every
 * write at a few hundred a second. Each queued transaction runs inside its own SAVEPOINT: one that fails is
 * rolled back to it alone and its caller gets the error; the others are kept. Every caller learns its outcome
 * only after the shared COMMIT, so a resolved `run` is as durable as with a commit of its own; should the
 * COMMIT fail, every caller of the group gets that error and nothing of the group is kept. After any failed
 * COMMIT, RELEASE or ROLLBACK the connection's real state (`inTransaction`) is checked and reset, so that no later
 * write is acknowledged inside a transaction that will never commit.
 */
@Injectable()
export class Transactions {
  private readonly logger = new Logger('Transactions');
  private readonly queued: QueuedWork[] = [];
  private draining = false;
  /** True while the connection may not be back at `synchronous = FULL` (after a bookkeeping group). */
  private syncLost = false;
  /** Raised as each write transaction ends (committed or not), before its caller hears: see writeGeneration. */
  private ended = 0;
  /** On SQLite, the after-commit list of the work running now: `write` from inside it runs there. */
  private running: (() => void)[] | undefined;
  /** The clock that bounds a group's duration (GROUP_COMMIT_MS); tests give their own, so no test depends on speed. */
  clock: () => number = () => performance.now();

  constructor(private readonly dataSource: DataSource) {}

  /**
   * Runs `work` in a transaction. The work runs in its caller's async context (on SQLite it is started by the
   * group's drain, on behalf of whoever queued it), and what it registers with `afterCommit` runs once its
   * writes are committed: never for an attempt that was rolled back or retried.
   */
  run<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return this.runWith(work, true);
  }

  /**
   * Runs `work` in a transaction whose writes a failure of the machine (power, kernel) may undo, though never
   * the death of the process: bookkeeping that costs only a repetition when lost, such as a lease or the
   * outcome of a webhook delivery (sent again, with the same UUID). On SQLite a group of such transactions
   * alone commits without waiting for the disk (`synchronous = NORMAL` under WAL), which on SQLite is time the
   * thread answering requests spends blocked; the next durable commit syncs them with it, in order, so
   * nothing committed after them survives without them. A group that holds a durable transaction waits for
   * the disk as always. On MySQL it is `run`. `unseen`: it writes nothing a kept answer shows (a webhook
   * delivery's outcome), so the write generation stays.
   */
  runBookkeeping<T>(work: (tx: EntityManager) => Promise<T>, options: { unseen?: boolean } = {}): Promise<T> {
    return this.runWith(work, false, !options.unseen);
  }

  /**
   * One write of its own, outside any caller's transaction: a last-use time, a claim given back, a record
   * consumed. On SQLite it queues like any transaction: sent straight to the one connection while a group is
   * open, it ran inside that group, was acknowledged before the group's commit, and was undone with the savepoint
   * of a work that failed meanwhile. On MySQL it runs as it is (one statement commits alone). Called from inside
   * the work running now, it runs there, as before (queued, it would wait for the group that waits for it); from
   * a task such a work started and left running, it queues.
   * `bookkeeping`: its commit need not wait for the disk (runBookkeeping).
   */
  write<T>(work: (tx: EntityManager) => Promise<T>, options: { bookkeeping?: boolean; unseen?: boolean } = {}): Promise<T> {
    const inside = this.running !== undefined && committedHooks.getStore() === this.running;
    if (this.dataSource.options.type === 'better-sqlite3' && !inside) return options.bookkeeping ? this.runBookkeeping(work, options) : this.run(work);
    return this.runAlone(work).finally(() => {
      if (!options.unseen) this.ended++;
    });
  }

  /** `work` on a query runner of its own, outside any transaction of TypeORM's (changeRows needs a runner). */
  private async runAlone<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      return await work(runner.manager);
    } finally {
      await runner.release();
    }
  }

  private runWith<T>(work: (tx: EntityManager) => Promise<T>, durable: boolean, seen = true): Promise<T> {
    let hooks: (() => void)[] = [];
    const tracked = AsyncResource.bind((tx: EntityManager) => {
      const own: (() => void)[] = [];
      hooks = own;
      this.running = own;
      const left = () => {
        if (this.running === own) this.running = undefined;
      };
      try {
        return committedHooks.run(own, () => work(tx)).finally(left);
      } catch (error) {
        left();
        throw error;
      }
    });
    const done =
      this.dataSource.options.type === 'better-sqlite3'
        ? new Promise<T>((resolve, reject) => {
            this.queued.push({ work: tracked, durable, resolve: resolve as (value: unknown) => void, reject });
            if (!this.draining) void this.drain();
          })
        : this.withDeadlockRetry(tracked);
    return done.then(
      (value) => {
        if (seen) this.ended++;
        for (const hook of hooks) {
          try {
            hook();
          } catch (error) {
            this.logger.error(`an after-commit step failed: ${(error as Error).message}`);
          }
        }
        return value;
      },
      (error: unknown) => {
        // A failed commit may still have written (a connection lost after the server committed).
        if (seen) this.ended++;
        throw error;
      },
    );
  }

  /** Equal values: no write of this process ended in between, so a read begun at the first saw them all. */
  get writeGeneration(): number {
    return this.ended;
  }

  /**
   * Registers `hook` to run once the transaction now running commits (a log line that must not tell of a change
   * that was rolled back); outside any transaction it runs at once.
   */
  static afterCommit(hook: () => void): void {
    const hooks = committedHooks.getStore();
    if (hooks) hooks.push(hook);
    else hook();
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
    const connection = sqliteConnection(this.dataSource);
    // Only this method opens transactions on the one SQLite connection, and it closes each; one found open was left
    // by a failure, and the group's writes would join it and never be committed.
    if (connection.inTransaction || runner.isTransactionActive) this.resetConnection(runner, 'a transaction was left open');
    // A group of bookkeeping alone commits without waiting for the disk. The setting changes between
    // transactions only (SQLite refuses it inside one), and goes back to FULL as soon as the group is done.
    const relaxed = group.every((item) => !item.durable);
    try {
      if (this.syncLost || relaxed) connection.exec(`PRAGMA synchronous = ${relaxed ? 'NORMAL' : 'FULL'}`);
      this.syncLost = relaxed;
    } catch (error) {
      // The connection is closed or failing: BEGIN would fail the same way.
      for (const item of group) item.reject(error);
      return;
    }
    try {
      await this.commitGroupIn(runner, connection, group);
    } finally {
      if (relaxed) this.restoreFullSync(connection);
    }
  }

  /** Back to FULL after a bookkeeping group; should that fail, the next group sets it before it begins. */
  private restoreFullSync(connection: ReturnType<typeof sqliteConnection>): void {
    if (!connection.open) return;
    try {
      connection.exec('PRAGMA synchronous = FULL');
      this.syncLost = false;
    } catch (error) {
      this.logger.error(`SQLite synchronous = FULL could not be set again: ${(error as Error).message}`);
    }
  }

  private async commitGroupIn(runner: QueryRunner, connection: ReturnType<typeof sqliteConnection>, group: QueuedWork[]): Promise<void> {
    const outcomes: (() => void)[] = [];
    try {
      await beginImmediate(runner);
    } catch (error) {
      this.resetConnection(runner);
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
      try {
        await runner.startTransaction();
        const value = await item.work(runner.manager);
        // A statement that failed with a full disk or an I/O error may have rolled back the whole transaction; a
        // work that went on after it would have written outside any transaction.
        if (!connection.inTransaction) throw new TransactionLostError();
        await runner.commitTransaction();
        outcomes.push(() => item.resolve(value));
      } catch (error) {
        if (connection.inTransaction && (await this.rollBackSavepoint(runner))) {
          outcomes.push(() => item.reject(error));
          continue;
        }
        // The group's transaction is gone (SQLite rolled it back, e.g. on a full disk): nothing of the group is
        // kept. This work and those done fail with the cause; those not yet run go back to the queue.
        this.resetConnection(runner);
        item.reject(error);
        for (const done of group.slice(0, index)) done.reject(error);
        this.queued.unshift(...group.slice(index + 1));
        return;
      }
    }
    try {
      await runner.commitTransaction();
      if (connection.inTransaction) throw new TransactionLostError();
    } catch (error) {
      // A failed COMMIT has kept nothing: SQLite rolled back already, or the ROLLBACK here does it.
      this.resetConnection(runner);
      for (const item of group) item.reject(error);
      return;
    }
    for (const settle of outcomes) settle();
  }

  private async rollBackSavepoint(runner: QueryRunner): Promise<boolean> {
    try {
      await runner.rollbackTransaction();
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Puts the connection and TypeORM's view of it back to "no transaction": rolls back what SQLite still holds open
   * and clears the query runner's depth, which a failed COMMIT, RELEASE or ROLLBACK leaves as it was (its next
   * "transaction" would otherwise be a SAVEPOINT inside one that is never committed).
   */
  private resetConnection(runner: QueryRunner, reason?: string): void {
    const connection = sqliteConnection(this.dataSource);
    if (reason) this.logger.warn(`SQLite connection reset: ${reason}`);
    if (connection.inTransaction) {
      try {
        connection.exec('ROLLBACK');
      } catch (error) {
        this.logger.error(`SQLite ROLLBACK failed: ${(error as Error).message}`);
      }
    }
    const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number };
    state.isTransactionActive = false;
    state.transactionDepth = 0;
  }

  /**
   * One MySQL transaction. TypeORM's own helper swallows a failed ROLLBACK and hands the connection back to the
   * pool, where it may still be inside the transaction; here such a connection is destroyed instead (the server
   * rolls back what it held), so no later caller's writes join a transaction that is never committed.
   */
  private async mysqlTransaction<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    const runner = this.dataSource.createQueryRunner();
    try {
      // READ COMMITTED: InnoDB then takes no gap locks for ordinary reads and writes, the main source of
      // deadlocks between concurrent inserts of neighbouring rows.
      await runner.startTransaction('READ COMMITTED');
      const value = await work(runner.manager);
      await runner.commitTransaction();
      return value;
    } catch (error) {
      if (runner.isTransactionActive && !(await this.rollBackSavepoint(runner))) destroyConnection(runner);
      throw error;
    } finally {
      await runner.release();
    }
  }

  private async withDeadlockRetry<T>(work: (tx: EntityManager) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.mysqlTransaction(work);
      } catch (error) {
        if (attempt >= ATTEMPTS || !isRetryableConflict(error)) throw error;
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 10 * 2 ** Math.min(attempt, 6)));
      }
    }
  }
}

/**
 * Opens the group's transaction with BEGIN IMMEDIATE: the write lock is taken at once, waiting (busy_timeout) while
 * another process (a second instance, the CLI) writes. A deferred BEGIN would read first and then fail at its first
 * write with SQLITE_BUSY, without waiting, whenever another process had committed since the read.
 */
async function beginImmediate(runner: QueryRunner): Promise<void> {
  const ownQuery = Object.prototype.hasOwnProperty.call(runner, 'query') ? runner.query : undefined;
  const query = runner.query.bind(runner) as (sql: string, ...rest: unknown[]) => Promise<unknown>;
  runner.query = ((sql: string, ...rest: unknown[]) =>
    query(sql === 'BEGIN TRANSACTION' ? 'BEGIN IMMEDIATE TRANSACTION' : sql, ...rest)) as QueryRunner['query'];
  try {
    await runner.startTransaction();
  } finally {
    // SQLite's driver shares one query runner: the rewrite must not outlive this BEGIN.
    if (ownQuery) runner.query = ownQuery;
    else delete (runner as { query?: unknown }).query;
  }
}

function sqliteConnection(dataSource: DataSource): { open: boolean; inTransaction: boolean; exec(sql: string): unknown } {
  return (dataSource.driver as unknown as { databaseConnection: { open: boolean; inTransaction: boolean; exec(sql: string): unknown } }).databaseConnection;
}

/** Closes a MySQL connection whose transaction state is unknown, and takes it out of the pool. */
function destroyConnection(runner: QueryRunner): void {
  const connection = (runner as unknown as { databaseConnection?: { destroy?: () => void } }).databaseConnection;
  connection?.destroy?.();
  const state = runner as unknown as { isTransactionActive: boolean; transactionDepth: number; databaseConnection?: unknown };
  state.isTransactionActive = false;
  state.transactionDepth = 0;
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
