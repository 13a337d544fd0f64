import * as fs from 'node:fs';
import * as path from 'node:path';
import { DataSource, DataSourceOptions } from 'typeorm';
import type { AppConfig, DatabaseConfig } from '../config/config';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { SnakeNamingStrategy } from './naming-strategy';
import { secureDatabaseFiles } from '../server/data-directory';

export function dataSourceOptions(database: DatabaseConfig): DataSourceOptions {
  const common = {
    entities: ENTITIES,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    namingStrategy: new SnakeNamingStrategy(),
    synchronize: false,
    migrationsRun: false,
    logging: false,
  } as const;
  if (database.type === 'mysql') {
    return {
      ...common,
      type: 'mysql',
      connectorPackage: 'mysql2',
      host: database.host,
      port: database.port,
      username: database.username,
      password: database.password,
      database: database.database,
      charset: 'utf8mb4_bin',
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: false,
      extra: { connectionLimit: 10 },
    };
  }
  return {
    ...common,
    type: 'better-sqlite3',
    database: database.file,
    enableWAL: true,
    prepareDatabase: (db: { pragma(statement: string): unknown }) => {
      db.pragma('foreign_keys = ON');
      db.pragma('busy_timeout = 5000');
    },
  };
}

/**
 * Opens the database and applies pending migrations: the server, the CLI and the tests all start here.
 */
export async function openDatabase(config: Pick<AppConfig, 'database'>): Promise<DataSource> {
  if (config.database.type === 'sqlite' && config.database.file !== ':memory:') {
    fs.mkdirSync(path.dirname(config.database.file), { recursive: true, mode: 0o700 });
  }
  const dataSource = new DataSource(dataSourceOptions(config.database));
  await dataSource.initialize();
  if (config.database.type === 'sqlite' && config.database.file !== ':memory:') secureDatabaseFiles(config.database.file);
  adaptColumnTypes(dataSource);
  await dataSource.runMigrations({ transaction: 'each' });
  return dataSource;
}

/**
 * SQLite spells 64-bit integers `integer` (the only type AUTOINCREMENT accepts); entities say `bigint` for
 * MySQL. Rewriting the built metadata keeps one set of entities and an exact schema comparison on both.
 */
export function adaptColumnTypes(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  for (const entity of dataSource.entityMetadatas) {
    for (const column of entity.columns) {
      if (column.type === 'bigint') column.type = 'integer';
    }
  }
}
