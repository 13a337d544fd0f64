import type { DataSource } from 'typeorm';
import type { DatabaseTimeouts } from '../config/config';

/** No pooled MySQL connection came free within DATABASE_ACQUIRE_TIMEOUT. */
export class DatabaseAcquireTimeoutError extends Error {
  readonly code = 'ANVIL_DATABASE_ACQUIRE_TIMEOUT';
  constructor(milliseconds: number) {
    super(`no database connection became free within ${milliseconds} ms`);
  }
}

interface PooledConnection {
  query(...args: unknown[]): unknown;
  release(): void;
  destroy(): void;
}

const WRAPPED = Symbol('anvil:query-timeout');

/**
 * Bounds the two waits mysql2 leaves open: for a pooled connection (its pool queues without a limit) and for a
 * query's answer (a hung server never sends one). A connection whose query timed out is destroyed, not handed
 * back: its answer may still come and would be read as the next query's. Applied after the migrations, which
 * may legitimately run longer than any request's query.
 */
export function applyDatabaseTimeouts(dataSource: DataSource, timeouts: DatabaseTimeouts): void {
  if (dataSource.options.type !== 'mysql') return;
  const driver = dataSource.driver as unknown as Record<string, unknown>;
  for (const name of ['obtainMasterConnection', 'obtainSlaveConnection']) {
    const obtain = driver[name] as (() => Promise<PooledConnection>) | undefined;
    if (typeof obtain !== 'function') continue;
    driver[name] = () => withQueryTimeout(acquire(obtain.call(driver), timeouts.acquireMs), timeouts.queryMs);
  }
}

function acquire(pending: Promise<PooledConnection>, milliseconds: number): Promise<PooledConnection> {
  return new Promise((resolve, reject) => {
    let expired = false;
    const timer = setTimeout(() => {
      expired = true;
      reject(new DatabaseAcquireTimeoutError(milliseconds));
    }, milliseconds);
    pending.then(
      (connection) => {
        clearTimeout(timer);
        // Came too late for its caller: back to the pool for the next one.
        if (expired) connection.release();
        else resolve(connection);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (!expired) reject(error);
      },
    );
  });
}

async function withQueryTimeout(pending: Promise<PooledConnection>, milliseconds: number): Promise<PooledConnection> {
  const connection = await pending;
  const marked = connection as PooledConnection & { [WRAPPED]?: true };
  if (marked[WRAPPED]) return connection;
  marked[WRAPPED] = true;
  const query = connection.query.bind(connection);
  connection.query = (...args: unknown[]) => {
    const [statement] = args;
    if (typeof statement === 'string') args[0] = { sql: statement, timeout: milliseconds };
    else if (statement && Object.getPrototypeOf(statement) === Object.prototype && (statement as { timeout?: number }).timeout === undefined) {
      args[0] = { ...(statement as object), timeout: milliseconds };
    }
    const last = args.length - 1;
    const callback = args[last];
    if (typeof callback === 'function') {
      args[last] = (error: { code?: string } | null, ...rest: unknown[]) => {
        if (error?.code === 'PROTOCOL_SEQUENCE_TIMEOUT') connection.destroy();
        (callback as (...values: unknown[]) => void)(error, ...rest);
      };
    }
    return query(...args);
  };
  return connection;
}
