import { DataSource, MigrationExecutor, QueryRunner } from 'typeorm';
import { Leases } from './leases';

/** The lease every process takes to change the schema. */
const MIGRATION_LEASE = 'schema-migrations';

/**
 * Errors of a DDL or seed statement that say its work is already there. MySQL commits every DDL statement at
 * once, so a migration cut off part-way (its process killed) leaves some of its tables, indexes and triggers
 * behind without a row in `migrations`; it runs again from the start on the next start-up, and these
 * statements then meet their own earlier work. Only migrations change the schema, and they run one at a time
 * (under the lease), so an object that is already there was made by the unfinished run of the same migration.
 */
const ALREADY_DONE = new Set([
  'ER_TABLE_EXISTS_ERROR', // CREATE TABLE
  'ER_DUP_KEYNAME', // CREATE INDEX, ADD INDEX
  'ER_DUP_FIELDNAME', // ADD COLUMN
  'ER_MULTIPLE_PRI_KEY', // ADD PRIMARY KEY
  'ER_FK_DUP_NAME', // ADD CONSTRAINT ... FOREIGN KEY
  'ER_TRG_ALREADY_EXISTS', // CREATE TRIGGER
  'ER_SP_ALREADY_EXISTS', // CREATE PROCEDURE
  'ER_BAD_TABLE_ERROR', // DROP TABLE of a table already dropped
  'ER_CANT_DROP_FIELD_OR_KEY', // DROP COLUMN, DROP INDEX already done
  'ER_TRG_DOES_NOT_EXIST', // DROP TRIGGER
  'ER_SP_DOES_NOT_EXIST', // DROP PROCEDURE
]);

/** Without SUPER, MySQL and Galera refuse triggers and procedures unless the server trusts their creators. */
const NEEDS_TRUSTED_CREATORS = new Set(['ER_BINLOG_CREATE_ROUTINE_NEED_SUPER', 'ER_BINLOG_UNSAFE_ROUTINE']);

/** A migration stopped on a database setting the operator must change; the message says which. */
export class DatabaseSettingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'DatabaseSettingError';
  }
}

/**
 * Applies the pending migrations, one process at a time: every instance starting against the same database
 * (on any Galera node) takes the same lease first, and the ones that waited find nothing left to do. A start
 * with nothing pending takes no lease at all. Also creates the lease table, which other cross-process work uses.
 */
export async function runSchemaMigrations(dataSource: DataSource): Promise<void> {
  await adoptBinaryCollation(dataSource);
  const leases = new Leases(dataSource);
  await leases.prepare();
  if (!(await hasPendingMigrations(dataSource))) return;
  // A long migration (a backfill over many rows) keeps its lease by renewing it; a killed one lets it lapse.
  await leases.run(MIGRATION_LEASE, async () => {
    // SQLite's driver hands out one shared query runner: the tolerance must end with the migrations.
    const runner = dataSource.createQueryRunner();
    const restore = tolerateFinishedWork(runner);
    try {
      const executor = new MigrationExecutor(dataSource, runner);
      executor.transaction = 'each';
      await executor.executePendingMigrations();
    } finally {
      restore();
      await runner.release();
    }
  });
}

/**
 * On MySQL/MariaDB, a database without tables yet is given `utf8mb4` with `utf8mb4_bin` before the first table
 * is made, so that every table inherits it and text compares as on SQLite: byte for byte. Under a server's
 * default (`utf8mb4_general_ci` and the like) `Main` and `main`, or `résumé` and `resume`, compare equal, in
 * lookups and in unique indexes (a user's search grams `jur` and `jür` met as duplicates so). A database that
 * has tables keeps its collation (converting one is the operator's step: README, MariaDB or MySQL). Several first
 * starts at once all issue the same statement, which is idempotent.
 */
async function adoptBinaryCollation(dataSource: DataSource): Promise<void> {
  if (dataSource.options.type !== 'mysql') return;
  // The tables counted by the constant DATABASE(), so the server lists this database alone, not every one it holds.
  const [schema] = (await dataSource.query(
    'SELECT SCHEMA_NAME AS name, DEFAULT_CHARACTER_SET_NAME AS charset, DEFAULT_COLLATION_NAME AS collation, ' +
      '(SELECT COUNT(*) FROM information_schema.TABLES t WHERE t.TABLE_SCHEMA = DATABASE()) AS tables ' +
      'FROM information_schema.SCHEMATA s WHERE s.SCHEMA_NAME = DATABASE()',
  )) as { name: string; charset: string; collation: string; tables: number | string }[];
  if (!schema || Number(schema.tables) > 0 || (schema.charset === 'utf8mb4' && schema.collation === 'utf8mb4_bin')) return;
  // A user without ALTER on the database starts as before, on the collation it was given.
  await dataSource.query(`ALTER DATABASE ${dataSource.driver.escape(schema.name)} CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`).catch(() => undefined);
}

async function hasPendingMigrations(dataSource: DataSource): Promise<boolean> {
  const runner = dataSource.createQueryRunner();
  try {
    if (!(await runner.hasTable(dataSource.options.migrationsTableName ?? 'migrations'))) return true;
    const executor = new MigrationExecutor(dataSource, runner);
    return (await executor.getPendingMigrations()).length > 0;
  } finally {
    await runner.release();
  }
}

/**
 * SQLite says the same in its messages (its DDL is transactional, so a cut-off migration leaves nothing behind;
 * this serves when a database was restored or repaired by hand between the two).
 */
const SQLITE_ALREADY_DONE = /already exists|duplicate column name/i;
const SQLITE_ALREADY_DROPPED = /^no such (table|index|trigger|column)/i;

/**
 * Makes the statements of a migration re-runnable: one whose work is already there (ALREADY_DONE, or a seed
 * INSERT meeting the rows it wrote) counts as done. Triggers refused for want of a privilege stop the start
 * with the setting to change. Returns the function that puts the runner's own `query` back.
 */
export function tolerateFinishedWork(runner: QueryRunner): () => void {
  const ownQuery = Object.prototype.hasOwnProperty.call(runner, 'query') ? runner.query : undefined;
  const query = runner.query.bind(runner) as (sql: string, parameters?: unknown[], structured?: boolean) => Promise<unknown>;
  runner.query = (async (sql: string, parameters?: unknown[], structured?: boolean) => {
    try {
      return await query(sql, parameters, structured);
    } catch (error) {
      if (alreadyDone(error, sql)) return structured ? { records: [], raw: [], affected: 0 } : [];
      const code = errorCode(error);
      if (code && NEEDS_TRUSTED_CREATORS.has(code)) {
        throw new DatabaseSettingError(
          'the database refuses to create triggers for this user: set log_bin_trust_function_creators=1 on the server (every Galera node), or grant the user SUPER',
          { cause: error },
        );
      }
      throw error;
    }
  }) as QueryRunner['query'];
  return () => {
    if (ownQuery) runner.query = ownQuery;
    else delete (runner as { query?: unknown }).query;
  };
}

function alreadyDone(error: unknown, sql: string): boolean {
  const code = errorCode(error);
  const statement = sql.trimStart().slice(0, 12).toUpperCase();
  if (code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') return statement.startsWith('INSERT');
  if (code && ALREADY_DONE.has(code)) return true;
  if (code !== 'SQLITE_ERROR') return false;
  const message = (error as { message?: string }).message ?? '';
  if (statement.startsWith('CREATE') || statement.startsWith('ALTER')) return SQLITE_ALREADY_DONE.test(message);
  if (statement.startsWith('DROP')) return SQLITE_ALREADY_DROPPED.test(message.replace(/^.*?: /, ''));
  return false;
}

function errorCode(error: unknown): string | undefined {
  const e = error as { code?: string; driverError?: { code?: string } };
  return e.driverError?.code ?? e.code;
}
