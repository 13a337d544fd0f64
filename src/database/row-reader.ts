import type { DataSource, EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { BoundStatements, RowSet } from './bound-statements';

/**
 * Column types whose values JSON carries unchanged: integers, booleans (0/1) and text of at most 64 KB (`text`
 * on MySQL), whose JSON (six bytes at most for one) stays far below `max_allowed_packet`. Not `mediumtext` (an
 * issue's body, up to 4 MiB): escaped, it could outgrow that, and MariaDB would answer NULL for the whole row.
 */
const PACKABLE_TYPES = new Set(['bigint', 'integer', 'int', 'boolean', 'varchar', 'text']);

/**
 * Hot single-row lookups as plain SQL with bound parameters, for the stores (house style: only stores use it).
 * TypeORM's find builders rebuild the SQL text on every call, and its SQLite driver inlines numeric parameters,
 * so every new id is a new statement to prepare; here the text is built once, the statement is prepared once
 * (BoundStatements) and values are always bound. Rows come as arrays and are hydrated with
 * the entity's own column mapping, value transformers included, so callers get the same entities as from
 * `findOneBy`.
 *
 * On MySQL/MariaDB an entity's columns travel packed into one `JSON_ARRAY` column: the server sends a column
 * definition with every execution of a prepared statement, and mysql2 parses each one into an object, so a
 * repository with its owner (81 columns) cost 110-145 µs of the API's thread per read, against 68-76 µs packed
 * (mariadbd's own time 78 against 90 µs; 64 callers, a pool of 10). Only entities whose every column is an
 * integer, a boolean or short text are packed (PACKABLE_TYPES); SQLite returns rows as arrays already.
 */
export class RowReader<T extends ObjectLiteral> {
  private readonly metadata: EntityMetadata;
  private readonly columns: readonly ColumnMetadata[];
  private readonly table: string;
  private readonly statements: BoundStatements;
  /** Column positions by statement (its columns Map) and alias. */
  private readonly known = new WeakMap<ReadonlyMap<string, number>, Map<string, readonly number[]>>();
  /** `select()`'s text by alias, built once. */
  private readonly selects = new Map<string, string>();
  /** Whether the entity's columns are selected as one JSON array (MySQL/MariaDB; see above). */
  private readonly packed: boolean;

  constructor(
    private readonly dataSource: DataSource,
    entity: EntityTarget<T>,
  ) {
    this.statements = new BoundStatements(dataSource);
    const metadata = dataSource.getMetadata(entity);
    this.metadata = metadata;
    this.columns = metadata.columns;
    this.table = dataSource.driver.escape(metadata.tableName);
    this.packed = dataSource.options.type === 'mysql' && this.columns.every((column) => PACKABLE_TYPES.has(String(column.type)));
  }

  /** `SELECT <every column> FROM <table> [alias] `: the start of a statement, built once by the caller. */
  select(alias?: string): string {
    let text = this.selects.get(alias ?? '');
    if (text === undefined) {
      text = `SELECT ${this.columnList(alias)} FROM ${this.table}${alias ? ` ${alias}` : ''} `;
      this.selects.set(alias ?? '', text);
    }
    return text;
  }

  /**
   * The entity's columns, each as `alias.column AS alias_column` when an alias is given (for joins); when packed,
   * one `JSON_ARRAY(…) AS alias__row` of them in the entity's column order. Name no column of this list in the
   * rest of the statement by its `alias_column` name: select it again under a name of its own.
   */
  columnList(alias?: string): string {
    const escape = (name: string) => this.dataSource.driver.escape(name);
    if (this.packed) {
      const values = this.columns.map((column) => (alias ? `${alias}.${escape(column.databaseName)}` : escape(column.databaseName)));
      return `JSON_ARRAY(${values.join(', ')}) AS ${escape(packedName(alias))}`;
    }
    return this.columns
      .map((column) => (alias ? `${alias}.${escape(column.databaseName)} AS ${escape(`${alias}_${column.databaseName}`)}` : escape(column.databaseName)))
      .join(', ');
  }

  /** Every row of `sql` (positional `?` parameters) as entities. */
  async all(sql: string, parameters: readonly unknown[], tx?: EntityManager): Promise<T[]> {
    const set = await this.rows(sql, parameters, tx);
    return set.rows.map((_, index) => this.hydrate(set, index));
  }

  /** The first row of `sql` (positional `?` parameters) as an entity, or null. */
  async one(sql: string, parameters: unknown[], tx?: EntityManager): Promise<T | null> {
    const set = await this.rows(sql, parameters, tx);
    return set.rows.length > 0 ? this.hydrate(set, 0) : null;
  }

  /** The rows of `sql` (positional `?` parameters), bound as BoundStatements runs them; hydrate them after. */
  rows(sql: string, parameters: readonly unknown[], tx?: EntityManager): Promise<RowSet> {
    return this.statements.rows(sql, parameters, tx);
  }

  /** Builds the entity from row `index` of `set`; `alias` names the prefix its columns were selected with. */
  hydrate(set: RowSet, index: number, alias?: string): T {
    const positions = this.positions(set.columns, alias);
    let row = set.rows[index];
    const packedAt = this.packed ? set.columns.get(packedName(alias)) : undefined;
    if (packedAt !== undefined) row = unpacked(row[packedAt]);
    const entity = this.metadata.create() as T;
    const driver = this.dataSource.driver;
    for (let column = 0; column < this.columns.length; column++) {
      const position = positions[column];
      (entity as Record<string, unknown>)[this.columns[column].propertyName] = driver.prepareHydratedValue(
        position < 0 ? undefined : row[position],
        this.columns[column],
      );
    }
    return entity;
  }

  /** Where each of the entity's columns is in rows of `columns` (-1: not selected), worked out once per statement. */
  private positions(columns: ReadonlyMap<string, number>, alias = ''): readonly number[] {
    let byAlias = this.known.get(columns);
    if (!byAlias) {
      byAlias = new Map();
      this.known.set(columns, byAlias);
    }
    let positions = byAlias.get(alias);
    if (!positions && this.packed && columns.has(packedName(alias))) {
      positions = this.columns.map((_, index) => index);
      byAlias.set(alias, positions);
    }
    if (!positions) {
      positions = this.columns.map((column) => columns.get(alias ? `${alias}_${column.databaseName}` : column.databaseName) ?? -1);
      byAlias.set(alias, positions);
    }
    return positions;
  }
}

/** The name of the one packed column of `alias`'s entity. */
function packedName(alias = ''): string {
  return `${alias}__row`;
}

/** A packed row's values: mysql2 parses a JSON column itself where the server marks it as JSON, else it is text. */
function unpacked(value: unknown): readonly unknown[] {
  const values = typeof value === 'string' ? (JSON.parse(value) as unknown) : value;
  if (!Array.isArray(values)) throw new Error('a packed row is not a JSON array');
  return values;
}

/**
 * `IN (?, …)` for a list of values, with the values to bind: the list is padded to the next power of two by
 * repeating its last value (which changes no IN test), so that a few statement texts, each prepared once, serve
 * every length of list. `values` must not be empty.
 */
export function inList(values: readonly unknown[]): [string, unknown[]] {
  let size = 1;
  while (size < values.length) size *= 2;
  const bound = [...values];
  while (bound.length < size) bound.push(values[values.length - 1]);
  return [`IN (${bound.map(() => '?').join(', ')})`, bound];
}
