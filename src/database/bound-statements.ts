import { LRUCache } from 'lru-cache';
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
  execute(options: { sql: string; values: unknown[]; rowsAsArray: true }, callback: (error: Error | null, rows: unknown, fields?: { name: string }[]) => void): void;
}

/** The part of better-sqlite3 used here (TypeORM's driver keeps its one connection as `databaseConnection`). */
interface SqliteConnection {
  prepare(sql: string): SqliteStatement;
  /** Inside BEGIN … COMMIT/ROLLBACK (better-sqlite3: not in autocommit mode). */
  readonly inTransaction: boolean;
}
interface SqliteStatement {
  raw(toggle: boolean): SqliteStatement;
  columns(): { name: string }[];
  all(...parameters: unknown[]): unknown[][];
}

/** Statement texts kept prepared on SQLite (the stores' hot reads: a handful of fixed texts). */
const SQLITE_STATEMENTS_KEPT = 64;
/** Answers kept per lookup statement on SQLite (`lookup`): a row with its owner is a few hundred bytes. */
export const SQLITE_LOOKUPS_KEPT = 2_048;

/**
 * The answers of lookups on one SQLite connection, kept until the database changes. What has changed is one pair
 * of numbers, read in about 2 µs: `total_changes()` counts the rows this connection has inserted, updated or
 * deleted (in any transaction, committed or rolled back), and `data_version` moves when another connection
 * commits (the CLI, another process on the same file). While the pair stays the same, so does every row.
 */
class SqliteLookups {
  private readonly generation: SqliteStatement;
  private stamp: string | undefined;
  private readonly kept = new Map<string, LRUCache<string, RowSet>>();

  constructor(connection: SqliteConnection) {
    this.generation = connection.prepare('SELECT total_changes(), data_version FROM pragma_data_version').raw(true);
  }

  /** Forgets every answer when the database has changed since the last call. */
  refresh(): void {
    const [changes, version] = this.generation.all()[0];
    const stamp = `${String(changes)}:${String(version)}`;
    if (stamp === this.stamp) return;
    this.stamp = stamp;
    this.kept.clear();
  }

  get(sql: string, key: string): RowSet | undefined {
    return this.kept.get(sql)?.get(key);
  }

  set(sql: string, key: string, set: RowSet): void {
    let answers = this.kept.get(sql);
    if (!answers) {
      answers = new LRUCache<string, RowSet>({ max: SQLITE_LOOKUPS_KEPT });
      this.kept.set(sql, answers);
    }
    answers.set(key, set);
  }
}

/** One SqliteLookups per connection, shared by every store's BoundStatements. */
const sqliteLookups = new WeakMap<SqliteConnection, SqliteLookups>();

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

  /**
   * `rows` for the lookups made on most requests (a token with its owner, a user by name, a repository by its
   * names), outside any transaction. On SQLite their answers are kept (SqliteLookups) until anything in the
   * database changes, so a revoked token, a renamed user or a deleted repository counts at the next request as
   * before, with no staleness window. A 2 µs check instead of 15-30 µs for a join of two rows of 40 columns;
   * the rows are arrays no caller changes (RowReader builds a new entity from them each time). Inside a
   * transaction (another request's, on the one connection) the database is asked: what it sees there may yet
   * be rolled back. On MySQL/MariaDB there is no such cheap and exact signal: the database is asked.
   */
  async lookup(sql: string, parameters: readonly unknown[]): Promise<RowSet> {
    if (this.dataSource.options.type !== 'better-sqlite3') return this.rows(sql, parameters);
    const connection = this.sqliteConnection();
    if (connection.inTransaction) return this.sqliteRows(sql, parameters);
    let lookups = sqliteLookups.get(connection);
    if (!lookups) {
      lookups = new SqliteLookups(connection);
      sqliteLookups.set(connection, lookups);
    }
    lookups.refresh();
    // The parameters' types are part of the key: SQLite compares 1 and '1' differently in some columns.
    const key = JSON.stringify(parameters);
    const kept = lookups.get(sql, key);
    if (kept) return kept;
    const set = this.sqliteRows(sql, parameters);
    lookups.set(sql, key, set);
    return set;
  }

  private sqliteConnection(): SqliteConnection {
    return (this.dataSource.driver as unknown as { databaseConnection: SqliteConnection }).databaseConnection;
  }

  private sqliteRows(sql: string, parameters: readonly unknown[]): RowSet {
    let prepared = this.sqlite.get(sql);
    if (!prepared) {
      const connection = this.sqliteConnection();
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
