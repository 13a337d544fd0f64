import { QueryRunner, TableColumnOptions, TableIndexOptions } from 'typeorm';

/**
 * Column builders for migrations, mirroring the entity helpers in columns.ts so that the schema the
 * migrations create is exactly the one the entities describe, on SQLite and on MySQL.
 */
export function migrationKit(queryRunner: QueryRunner) {
  const sqlite = queryRunner.connection.options.type === 'better-sqlite3';
  const bigint = sqlite ? 'integer' : 'bigint';
  const bool = (value: boolean) => (value ? '1' : '0');
  return {
    id: (): TableColumnOptions => ({
      name: 'id',
      type: bigint,
      isPrimary: true,
      isGenerated: true,
      generationStrategy: 'increment',
    }),
    ref: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({ name, type: bigint, ...extra }),
    time: (name: string): TableColumnOptions => ({ name, type: bigint, default: '0' }),
    counter: (name: string): TableColumnOptions => ({ name, type: 'integer', default: '0' }),
    flag: (name: string, value = false): TableColumnOptions => ({ name, type: 'boolean', default: bool(value) }),
    text: (name: string, length: number, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({
      name,
      type: 'varchar',
      length: String(length),
      default: "''",
      ...extra,
    }),
    longText: (name: string, extra: Partial<TableColumnOptions> = {}): TableColumnOptions => ({ name, type: 'text', ...extra }),
    index: (name: string, columnNames: string[], isUnique = false): TableIndexOptions => ({ name, columnNames, isUnique }),
  };
}
