import type { DataSource, EntityManager } from 'typeorm';

type Row = Record<string, unknown>;

/** The part of mysql2's callback pool used here (TypeORM's MysqlDriver keeps one as `pool`). */
interface PreparingPool {
  execute(sql: string, values: unknown[], callback: (error: Error | null, rows: unknown) => void): void;
}

/**
 * Hot reads with bound parameters, run the cheapest way each database offers (only stores use it, through
 * RowReader). On MySQL/MariaDB a prepared statement on the connection pool: mysql2 prepares each statement text
 * once per connection and keeps it, values travel in the binary protocol, and rows come back without text
 * parsing. TypeORM's `query` instead escapes the values into the SQL text, so the server parses and plans every
 * call anew, and wraps each call in a query runner of its own (at 64 connections, `GET /users/{u}/repos` on
 * MariaDB went from 0.59 to 0.76 of the perf floor's throughput). On SQLite, and inside a transaction (whose
 * connection TypeORM holds), TypeORM's `query` serves: its SQLite driver already caches prepared statements by
 * their text.
 */
export class BoundStatements {
  private readonly pool?: PreparingPool;

  constructor(private readonly dataSource: DataSource) {
    if (dataSource.options.type === 'mysql') this.pool = (dataSource.driver as unknown as { pool?: PreparingPool }).pool;
  }

  rows(sql: string, parameters: readonly unknown[], tx?: EntityManager): Promise<Row[]> {
    const pool = tx ? undefined : this.pool;
    if (!pool) return (tx ?? this.dataSource.manager).query(sql, [...parameters]) as Promise<Row[]>;
    return new Promise((resolve, reject) => {
      pool.execute(sql, parameters.map(bindable), (error, rows) => (error ? reject(error) : resolve(rows as Row[])));
    });
  }
}

/**
 * mysql2 sends a JS number as a DOUBLE, which MySQL refuses for LIMIT and OFFSET; an integer goes as its decimal
 * text instead, which the server compares with an integer column through its index like a number.
 */
function bindable(value: unknown): unknown {
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
}
