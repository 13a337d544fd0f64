import type { DataSource, EntityManager, EntityMetadata, EntityTarget, ObjectLiteral } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import { BoundStatements } from './bound-statements';

/**
 * Hot single-row lookups as plain SQL with bound parameters, for the stores (house style: only stores use it).
 * TypeORM's find builders rebuild the SQL text on every call, and its SQLite driver inlines numeric parameters,
 * so every new id is a new statement to prepare; here the text is built once, the statement is prepared once
 * (TypeORM's SQLite statement cache is keyed by the text) and values are always bound. Rows are hydrated with
 * the entity's own column mapping, value transformers included, so callers get the same entities as from
 * `findOneBy`.
 */
export class RowReader<T extends ObjectLiteral> {
  private readonly metadata: EntityMetadata;
  private readonly columns: readonly ColumnMetadata[];
  private readonly table: string;
  private readonly statements: BoundStatements;

  constructor(
    private readonly dataSource: DataSource,
    entity: EntityTarget<T>,
  ) {
    this.statements = new BoundStatements(dataSource);
    const metadata = dataSource.getMetadata(entity);
    this.metadata = metadata;
    this.columns = metadata.columns;
    this.table = dataSource.driver.escape(metadata.tableName);
  }

  /** `SELECT <every column> FROM <table> [alias] `: the start of a statement, built once by the caller. */
  select(alias?: string): string {
    return `SELECT ${this.columnList(alias)} FROM ${this.table}${alias ? ` ${alias}` : ''} `;
  }

  /** The entity's columns, each as `alias.column AS alias_column` when an alias is given (for joins). */
  columnList(alias?: string): string {
    const escape = (name: string) => this.dataSource.driver.escape(name);
    return this.columns.map((column) => (alias ? `${alias}.${escape(column.databaseName)} AS ${escape(`${alias}_${column.databaseName}`)}` : escape(column.databaseName))).join(', ');
  }

  /** The first row of `sql` (positional `?` parameters) as an entity, or null. */
  async one(sql: string, parameters: unknown[], tx?: EntityManager): Promise<T | null> {
    const rows = await this.rows(sql, parameters, tx);
    return rows.length > 0 ? this.hydrate(rows[0]) : null;
  }

  /** The raw rows of `sql` (positional `?` parameters), bound as BoundStatements runs them; hydrate them after. */
  rows(sql: string, parameters: readonly unknown[], tx?: EntityManager): Promise<Record<string, unknown>[]> {
    return this.statements.rows(sql, parameters, tx);
  }

  /** Builds the entity from a raw row; `alias` names the prefix its columns were selected with. */
  hydrate(row: Record<string, unknown>, alias?: string): T {
    const entity = this.metadata.create() as T;
    const driver = this.dataSource.driver;
    for (const column of this.columns) {
      const value = row[alias ? `${alias}_${column.databaseName}` : column.databaseName];
      (entity as Record<string, unknown>)[column.propertyName] = driver.prepareHydratedValue(value, column);
    }
    return entity;
  }
}
