import { EventEmitter } from 'node:events';
import type { DataSource } from 'typeorm';

/** One database server of DATABASE_URL. */
export interface DatabaseHost {
  host: string;
  port: number;
}

/**
 * `wsrep_sync_wait` for every connection: on Galera a statement first waits until its node has applied every
 * write the cluster had committed when it arrived (1 reads and transaction starts, 2 updates and deletes, 4
 * inserts), so a write acknowledged through one node is seen by the next request on any other. Elsewhere the
 * variable does nothing (MariaDB without Galera) or does not exist (MySQL), and the error is ignored.
 */
const CAUSAL_READS = 'SET SESSION wsrep_sync_wait = 7';

/** A host that refused a connection is passed over for this long before it is tried again. */
const HOST_RETRY_MS = 2_000;

/** Errors that say the host, not the statement, is the trouble: its next candidate is tried instead. */
const HOST_DOWN = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'PROTOCOL_CONNECTION_LOST',
  'ER_UNKNOWN_COM_ERROR',
  'ER_SERVER_SHUTDOWN',
]);

type Callback = (error: Error | null, connection?: PoolConnection) => void;

interface PoolConnection {
  query(sql: string, callback: (error: Error | null, rows?: unknown) => void): void;
  query(...args: unknown[]): unknown;
  execute(...args: unknown[]): unknown;
  release(): void;
  destroy(): void;
  [key: symbol]: unknown;
}

interface Pool extends EventEmitter {
  getConnection(callback: Callback): void;
  end(callback?: (error?: Error | null) => void): void;
  _allConnections?: { length: number };
  _freeConnections?: { length: number };
  _connectionQueue?: { length: number };
}

interface Mysql2 {
  createPool(options: Record<string, unknown>): Pool;
}

const FRESH = Symbol('fresh connection');

/**
 * Before `dataSource.initialize()`: every pooled MySQL connection asks for causal reads, and with several
 * hosts in DATABASE_URL, TypeORM's pool becomes one that fails over between them (FailoverPool).
 */
export function adaptMysqlPool(dataSource: DataSource, hosts: DatabaseHost[]): void {
  if (dataSource.options.type !== 'mysql') return;
  const driver = dataSource.driver as unknown as { mysql: Mysql2 };
  const mysql = driver.mysql;
  const createPool = (options: Record<string, unknown>): Pool => {
    const pool = mysql.createPool(options);
    pool.on('connection', (connection: PoolConnection) => {
      connection[FRESH] = true;
      connection.query(CAUSAL_READS, () => undefined);
    });
    return pool;
  };
  driver.mysql = Object.create(mysql as object, {
    createPool: {
      value: (options: Record<string, unknown>) =>
        hosts.length > 1 ? new FailoverPool(hosts.map((host) => createPool({ ...options, ...host }))) : createPool(options),
    },
  }) as Mysql2;
}

/**
 * A pool over several database servers (the nodes of a Galera cluster) with mysql2's callback interface, which
 * TypeORM and the stores use: connections come from the first host that answers, in DATABASE_URL's order. A
 * new connection is tried with one statement first, so a node that accepts connections but is not part of the
 * cluster's primary component (Galera answers "WSREP has not yet prepared node") is passed over as well. A host
 * found down is skipped for HOST_RETRY_MS, so requests move to a live node within the first failed attempts;
 * statements in flight on a connection to the dead node fail (and the request answers 503).
 */
export class FailoverPool extends EventEmitter {
  private readonly downUntil: number[];

  constructor(private readonly pools: Pool[]) {
    super();
    this.downUntil = pools.map(() => 0);
  }

  getConnection(callback: Callback): void {
    const now = performance.now();
    const order = this.pools.map((_, index) => index);
    // Live hosts in their order first, then those recently found down (they may be back).
    order.sort((a, b) => Number(this.downUntil[a] > now) - Number(this.downUntil[b] > now) || a - b);
    this.tryHost(order, 0, callback, undefined);
  }

  private tryHost(order: number[], position: number, callback: Callback, lastError: Error | undefined): void {
    if (position >= order.length) return callback(lastError ?? new Error('no database host answers'));
    const index = order[position];
    this.pools[index].getConnection((error, connection) => {
      if (error || !connection) {
        if (error && !isHostDown(error)) return callback(error);
        this.downUntil[index] = performance.now() + HOST_RETRY_MS;
        return this.tryHost(order, position + 1, callback, error ?? undefined);
      }
      if (!connection[FRESH]) return callback(null, connection);
      connection[FRESH] = false;
      connection.query('SELECT 1', (probeError) => {
        if (!probeError) {
          this.downUntil[index] = 0;
          return callback(null, connection);
        }
        connection.destroy();
        if (!isHostDown(probeError)) return callback(probeError);
        this.downUntil[index] = performance.now() + HOST_RETRY_MS;
        this.tryHost(order, position + 1, callback, probeError);
      });
    });
  }

  query(...args: unknown[]): void {
    this.withConnection(args, 'query');
  }

  execute(...args: unknown[]): void {
    this.withConnection(args, 'execute');
  }

  /** As mysql2's pool: one statement on a connection of its own, given back afterwards. */
  private withConnection(args: unknown[], method: 'query' | 'execute'): void {
    const callback = typeof args[args.length - 1] === 'function' ? (args.pop() as (error: Error | null, ...rest: unknown[]) => void) : () => undefined;
    this.getConnection((error, connection) => {
      if (error || !connection) return callback(error ?? new Error('no database connection'));
      (connection[method] as (...a: unknown[]) => unknown)(...args, (statementError: Error | null, ...rest: unknown[]) => {
        connection.release();
        callback(statementError, ...rest);
      });
    });
  }

  end(callback?: (error?: Error | null) => void): void {
    let left = this.pools.length;
    let first: Error | null = null;
    for (const pool of this.pools) {
      pool.end((error) => {
        first ??= error ?? null;
        if (--left === 0) callback?.(first);
      });
    }
  }

  // The pool's counts, summed over hosts, where metrics read them on a single mysql2 pool.
  get _allConnections(): { length: number } {
    return { length: this.pools.reduce((sum, pool) => sum + (pool._allConnections?.length ?? 0), 0) };
  }
  get _freeConnections(): { length: number } {
    return { length: this.pools.reduce((sum, pool) => sum + (pool._freeConnections?.length ?? 0), 0) };
  }
  get _connectionQueue(): { length: number } {
    return { length: this.pools.reduce((sum, pool) => sum + (pool._connectionQueue?.length ?? 0), 0) };
  }
}

function isHostDown(error: Error): boolean {
  const code = (error as { code?: string }).code;
  return (code !== undefined && HOST_DOWN.has(code)) || (error as { fatal?: boolean }).fatal === true;
}
