import type { DataSource } from 'typeorm';
import type { DatabaseTimeouts } from '../config/slices';

/** No pooled MySQL connection came free within DATABASE_ACQUIRE_TIMEOUT. */
export class DatabaseAcquireTimeoutError extends Error {
  readonly code = 'ANVIL_DATABASE_ACQUIRE_TIMEOUT';
  constructor(milliseconds: number) {
    super(`no database connection became free within ${milliseconds} ms`);
  }
}

interface PooledConnection {
  query(...args: unknown[]): unknown;
  execute(...args: unknown[]): unknown;
  release(): void;
  destroy(): void;
}

type Callback = (error: Error | null, connection?: PooledConnection) => void;

interface Pool {
  getConnection(callback: Callback): void;
}

const WRAPPED = Symbol('anvil:query-timeout');

/**
 * Bounds the two waits mysql2 leaves open: for a pooled connection (its pool queues without a limit, and a new
 * connection to a hung server waits for its handshake) and for an answer to a statement (a hung server never
 * sends one). A connection whose statement timed out is destroyed, not handed back: its answer may still come
 * and would be read as the next statement's. On the pool itself, so TypeORM's queries and the stores' prepared
 * statements (bound-statements.ts) are both bounded. Applied after the migrations, which may legitimately run
 * longer than any request's statement.
 */
export function applyDatabaseTimeouts(dataSource: DataSource, timeouts: DatabaseTimeouts): void {
  if (dataSource.options.type !== 'mysql') return;
  const pool = (dataSource.driver as unknown as { pool?: Pool }).pool;
  if (!pool) return;
  const getConnection = pool.getConnection.bind(pool);
  pool.getConnection = (callback: Callback) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      callback(new DatabaseAcquireTimeoutError(timeouts.acquireMs));
    }, timeouts.acquireMs);
    getConnection((error, connection) => {
      clearTimeout(timer);
      if (expired) {
        // Came too late for its caller: back to the pool for the next one.
        connection?.release();
        return;
      }
      if (error || !connection) return callback(error);
      callback(null, withStatementTimeout(connection, timeouts.queryMs));
    });
  };
}

/** A statement without an answer within DATABASE_QUERY_TIMEOUT (mysql2's code for its own query timeout). */
export class DatabaseQueryTimeoutError extends Error {
  readonly code = 'PROTOCOL_SEQUENCE_TIMEOUT';
  constructor(milliseconds: number) {
    super(`the database did not answer within ${milliseconds} ms`);
  }
}

/**
 * Times each statement from the call (mysql2's own `timeout` starts only when the command reaches the server and
 * does not cover the PREPARE of `execute`); at the limit the connection is destroyed and the caller told once.
 */
function withStatementTimeout(connection: PooledConnection, milliseconds: number): PooledConnection {
  const marked = connection as PooledConnection & { [WRAPPED]?: true };
  if (marked[WRAPPED]) return connection;
  marked[WRAPPED] = true;
  for (const method of ['query', 'execute'] as const) {
    const original = connection[method].bind(connection);
    connection[method] = (...args: unknown[]) => {
      const last = args.length - 1;
      const callback = args[last];
      if (typeof callback !== 'function') return original(...args);
      let answered = false;
      const timer = setTimeout(() => {
        answered = true;
        connection.destroy();
        (callback as (error: Error) => void)(new DatabaseQueryTimeoutError(milliseconds));
      }, milliseconds);
      args[last] = (...results: unknown[]) => {
        clearTimeout(timer);
        if (answered) return;
        answered = true;
        (callback as (...values: unknown[]) => void)(...results);
      };
      return original(...args);
    };
  }
  return connection;
}
