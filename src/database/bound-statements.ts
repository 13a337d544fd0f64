import type { DataSource, EntityManager } from 'typeorm';

/**
 * Rows as arrays of values, with the index of each column: one small array per row instead of an object keyed
 * by every column name. `columns` is the same Map for every result of one statement text, so callers can keep
 * what they derive from it.
 */
export interface RowSet {
  readonly columns: ReadonlyMap<string, number>;
  readonly rows: readonly (readonly unknown[])[];
}

/** The part of mysql2's callback pool used here (TypeORM's MysqlDriver keeps one as `pool`). */
interface PreparingPool {
  execute(
    options: { sql: string; values: unknown[]; rowsAsArray: true },
    callback: (error: Error | null, rows: unknown, fields?: { name: string }[]) => void,
  ): void;
}

/** The part of better-sqlite3 used here (TypeORM's driver keeps its one connection as `databaseConnection`). */
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
}
interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  columns(): { name: string }[];
  all(...parameters: unknown[]): unknown[][];
}

/** Statement texts kept prepared on SQLite (the stores' hot reads: a handful of fixed texts). */
const SQLITE_STATEMENTS_KEPT = 64;

/**
 * Hot reads with bound parameters, run the cheapest way each database offers (only stores use it, through
 * RowReader), with rows as arrays.
 *
 * On MySQL/MariaDB a prepared statement on the connection pool: mysql2 prepares each statement text once per
 * connection and keeps it, values travel in the binary protocol, and rows come back without text parsing.
 * TypeORM's `query` instead escapes the values into the SQL text, so the server parses and plans every call
 * anew, and wraps each call in a query runner of its own (at 64 connections, `GET /users/{u}/repos` on MariaDB
 * went from 0.59 to 0.76 of the perf floor's throughput). Inside a transaction (whose connection TypeORM holds)
 * TypeORM's `query` serves.
 *
 * On SQLite a statement prepared once on TypeORM's one connection (so inside and outside its transactions
 * alike) in better-sqlite3's raw mode: an object per row, keyed by some 45 column names, cost as much as the
 * lookup itself (23.8 against 10.4 µs for a repository with its owner), and TypeORM's query runner added its
 * own bookkeeping to every call.
 */
export class BoundStatements {
  private readonly pool?: PreparingPool;
  private readonly sqlite = new Map<string, { statement: SqliteStatement; columns: ReadonlyMap<string, number> }>();
  private readonly mysqlColumns = new Map<string, ReadonlyMap<string, number>>();

  constructor(private readonly dataSource: DataSource) {
    if (dataSource.options.type === 'mysql') this.pool = (dataSource.driver as unknown as { pool?: PreparingPool }).pool;
  }

  async rows(sql: string, parameters: readonly unknown[], tx?: EntityManager): Promise<RowSet> {
    if (this.dataSource.options.type === 'better-sqlite3') return this.sqliteRows(sql, parameters);
    const pool = tx ? undefined : this.pool;
    if (!pool) return fromObjects((await (tx ?? this.dataSource.manager).query(sql, [...parameters])) as Record<string, unknown>[]);
    return new Promise((resolve, reject) => {
      pool.execute({ sql, values: parameters.map(bindable), rowsAsArray: true }, (error, rows, fields) => {
        if (error) return reject(error);
        let columns = this.mysqlColumns.get(sql);
        if (!columns) {
          columns = indexOf((fields ?? []).map((field) => field.name));
          this.mysqlColumns.set(sql, columns);
        }
        resolve({ columns, rows: rows as unknown[][] });
      });
    });
  }

  private sqliteRows(sql: string, parameters: readonly unknown[]): RowSet {
    let prepared = this.sqlite.get(sql);
    if (!prepared) {
      const connection = (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
      const statement = connection.prepare(sql).raw(true);
      prepared = { statement, columns: indexOf(statement.columns().map((column) => column.name)) };
      if (this.sqlite.size >= SQLITE_STATEMENTS_KEPT) this.sqlite.delete(this.sqlite.keys().next().value as string);
      this.sqlite.set(sql, prepared);
    }
    return { columns: prepared.columns, rows: prepared.statement.all(...parameters) };
  }
}

/** The value of column `name` in row `index` (undefined when there is no such row or column). */
export function valueOf(set: RowSet, index: number, name: string): unknown {
  const column = set.columns.get(name);
  return column === undefined ? undefined : set.rows[index]?.[column];
}

function indexOf(names: string[]): ReadonlyMap<string, number> {
  return new Map(names.map((name, index) => [name, index]));
}

/** TypeORM's object rows as a RowSet (columns in the first row's key order). */
function fromObjects(objects: Record<string, unknown>[]): RowSet {
  const names = objects.length > 0 ? Object.keys(objects[0]) : [];
  return { columns: indexOf(names), rows: objects.map((row) => names.map((name) => row[name])) };
}

/**
 * mysql2 sends a JS number as a DOUBLE, which MySQL refuses for LIMIT and OFFSET; an integer goes as its decimal
 * text instead, which the server compares with an integer column through its index like a number.
 */
function bindable(value: unknown): unknown {
  return typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
}
