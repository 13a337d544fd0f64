import * as fs from 'node:fs';
import * as path from 'node:path';
import { DataSource, DataSourceOptions, ObjectLiteral } from 'typeorm';
import type { AppConfig } from '../config/config';
import type { DatabaseConfig, DatabaseTimeouts } from '../config/slices';
import { applyDatabaseTimeouts } from './database-timeouts';
import { ENTITIES } from './entities';
import { MIGRATIONS } from './migrations';
import { SnakeNamingStrategy } from './naming-strategy';
import { adaptMysqlPool } from './mysql-pool';
import { runSchemaMigrations } from './schema-migrations';
import { retrySingleStatements } from './statement-retry';

export function dataSourceOptions(database: DatabaseConfig, timeouts?: DatabaseTimeouts): DataSourceOptions {
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
      ...(database.socketPath ? { socketPath: database.socketPath } : {}),
      username: database.username,
      password: database.password,
      database: database.database,
      charset: 'utf8mb4_bin',
      timezone: 'Z',
      supportBigNumbers: true,
      bigNumberStrings: false,
      extra: { connectionLimit: 10 },
      ...(timeouts ? { connectTimeout: timeouts.connectMs } : {}),
    };
  }
  return {
    ...common,
    type: 'better-sqlite3',
    database: database.file,
    enableWAL: true,
    prepareDatabase: (db: { pragma(statement: string): unknown }) => {
      db.pragma('foreign_keys = ON');
      // better-sqlite3 builds SQLite to default to NORMAL under WAL: a commit then survives the process dying but
      // not the machine (power, kernel). FULL syncs the log at every COMMIT, so what was answered stays written;
      // the group commit of Transactions shares that sync among the writes that queued meanwhile.
      db.pragma('synchronous = FULL');
      db.pragma('busy_timeout = 5000');
    },
  };
}

/**
 * Opens the database and applies pending migrations: the server, the CLI and the tests all start here.
 */
export async function openDatabase(config: Pick<AppConfig, 'database'> & Partial<Pick<AppConfig, 'databaseTimeouts'>>): Promise<DataSource> {
  if (config.database.type === 'sqlite' && config.database.file !== ':memory:') {
    fs.mkdirSync(path.dirname(config.database.file), { recursive: true, mode: 0o700 });
  }
  const dataSource = await connect(config.database, dataSourceOptions(config.database, config.databaseTimeouts));
  if (config.database.type === 'sqlite' && config.database.file !== ':memory:') secureDatabaseFiles(config.database.file);
  // One process at a time, whichever instance or database node it runs on (schema-migrations.ts).
  await runSchemaMigrations(dataSource);
  if (config.databaseTimeouts) applyDatabaseTimeouts(dataSource, config.databaseTimeouts);
  return dataSource;
}

/**
 * One more connection (on MySQL, a pool of at most `poolSize`) to a database the server has opened and
 * migrated, for a thread of its own that works on `entities` alone.
 */
export async function connectDatabase(
  config: Pick<AppConfig, 'database'> & Partial<Pick<AppConfig, 'databaseTimeouts'>>,
  entities: DataSourceOptions['entities'],
  poolSize: number,
): Promise<DataSource> {
  const options = dataSourceOptions(config.database, config.databaseTimeouts);
  const dataSource = await connect(config.database, {
    ...options,
    entities,
    migrations: [],
    ...(options.type === 'mysql' ? { extra: { connectionLimit: poolSize } } : {}),
  } as DataSourceOptions);
  if (config.databaseTimeouts) applyDatabaseTimeouts(dataSource, config.databaseTimeouts);
  return dataSource;
}

async function connect(database: DatabaseConfig, options: DataSourceOptions): Promise<DataSource> {
  const dataSource = new DataSource(options);
  if (database.type === 'mysql') adaptMysqlPool(dataSource, database.hosts);
  // Accepted while the entities are checked, then spelled `text` (adaptColumnTypes).
  else dataSource.driver.supportedDataTypes.push('mediumtext');
  await dataSource.initialize();
  retrySingleStatements(dataSource);
  adaptColumnTypes(dataSource);
  bindIntegerParameters(dataSource);
  return dataSource;
}

/**
 * TypeORM's SQLite driver writes a number parameter into the SQL text instead of binding it, so a statement
 * keyed by id (`WHERE id = :id`) is a new statement for every id: prepared again each time, and it pushes the
 * others out of the statement cache. Integers are handed to it as BigInt, which it binds as `?` like any other
 * value (better-sqlite3 binds a BigInt as an INTEGER); everything else is unchanged.
 */
export function bindIntegerParameters(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  const driver = dataSource.driver;
  const escape = driver.escapeQueryWithParameters.bind(driver);
  driver.escapeQueryWithParameters = (sql, parameters, nativeParameters) => escape(sql, integersAsBigInt(parameters), nativeParameters);
}

function integersAsBigInt(parameters: ObjectLiteral): ObjectLiteral {
  let bound: ObjectLiteral | undefined;
  for (const [key, value] of Object.entries(parameters ?? {})) {
    if (typeof value === 'number' && Number.isSafeInteger(value)) (bound ??= { ...parameters })[key] = BigInt(value);
  }
  return bound ?? parameters;
}

/**
 * SQLite spells 64-bit integers `integer` (the only type AUTOINCREMENT accepts); entities say `bigint` for
 * MySQL. Likewise `mediumtext` (MySQL's text of up to 16 MiB) is plain `text` on SQLite. Rewriting the built metadata keeps one set of entities and an exact schema comparison on both.
 */
export function adaptColumnTypes(dataSource: DataSource): void {
  if (dataSource.options.type !== 'better-sqlite3') return;
  for (const entity of dataSource.entityMetadatas) {
    for (const column of entity.columns) {
      if (column.type === 'bigint') column.type = 'integer';
      if (column.type === 'mediumtext') column.type = 'text';
    }
  }
}

/** The SQLite database and its journal files: owner read/write only, whatever created them before. */
function secureDatabaseFiles(file: string): void {
  for (const candidate of [file, `${file}-wal`, `${file}-shm`, `${file}-journal`]) {
    if (fs.existsSync(candidate)) fs.chmodSync(candidate, 0o600);
  }
}
