import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { Connection, createConnection } from 'mysql2/promise';

/**
 * Databases for tests on MySQL/MariaDB, reused. Creating one and running every migration is dozens of DDL
 * statements, each synced to disk (seconds on a busy machine, for each of the hundred-odd test apps of a run);
 * emptying a migrated one is one transaction of DELETEs. So a database a test gives back is emptied, checked and
 * kept in a pool, and the next test takes it already migrated.
 *
 * A database goes back to the pool only when it is safe to: no other connection uses it (a second instance a
 * test left running would otherwise write into the next test's data), its schema is exactly the template's
 * (a test that altered a table, or a process killed in a migration, leaves one that is dropped instead), and it
 * is empty after the DELETEs but for the rows the migrations seed, which are copied back from the template.
 * The pool and the template are keyed by the migrations' source, so worktrees and runs of other schemas never
 * share a database.
 */

const POOL_SCHEMA = 'anvil_test_pool';
/** Rows a migration writes and every database starts with: the `migrations` table is kept, others copied back. */
const KEPT_TABLE = 'migrations';
/** Pooled databases of a schema nobody has used for this long are dropped. */
const STALE_SECONDS = 24 * 3600;

interface Server {
  host: string;
  port: number;
  user: string;
  password: string;
  url: URL;
}

function server(): Server {
  const url = new URL(process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306');
  return {
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    url,
  };
}

function connect(target: Server, database?: string): Promise<Connection> {
  return createConnection({ host: target.host, port: target.port, user: target.user, password: target.password, database, multipleStatements: true });
}

/** A digest of every migration's source: databases migrated by other code are never handed out. */
function schemaKey(): string {
  const directory = path.join(__dirname, '..', '..', 'src', 'database', 'migrations');
  const hash = createHash('sha256');
  for (const file of fs.readdirSync(directory).sort())
    hash
      .update(file)
      .update('\0')
      .update(fs.readFileSync(path.join(directory, file)))
      .update('\0');
  return hash.digest('hex').slice(0, 16);
}

function urlOf(target: Server, database: string): string {
  const url = new URL(target.url.toString());
  url.pathname = `/${database}`;
  return url.toString();
}

/** What must match the template for a database to be reused: tables, columns, indexes, triggers. */
async function fingerprint(connection: Connection, database: string): Promise<string> {
  const [columns] = await connection.query(
    'SELECT table_name, column_name, column_type, is_nullable, column_default, extra FROM information_schema.columns WHERE table_schema = ? ORDER BY table_name, ordinal_position',
    [database],
  );
  const [indexes] = await connection.query(
    'SELECT table_name, index_name, seq_in_index, column_name, non_unique FROM information_schema.statistics WHERE table_schema = ? ORDER BY table_name, index_name, seq_in_index',
    [database],
  );
  const [triggers] = await connection.query(
    'SELECT trigger_name, action_statement FROM information_schema.triggers WHERE trigger_schema = ? ORDER BY trigger_name',
    [database],
  );
  // In the order they ran, as a restore compares them (src/backup/restore.ts): a database whose migrations were
  // undone and run again in another order has the template's tables but not its history.
  const [migrations] = await connection.query(`SELECT name FROM \`${database}\`.\`${KEPT_TABLE}\` ORDER BY id`);
  return createHash('sha256')
    .update(JSON.stringify([columns, indexes, triggers, migrations]))
    .digest('hex');
}

async function tablesOf(connection: Connection, database: string): Promise<string[]> {
  const [rows] = await connection.query(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = ? AND table_type = 'BASE TABLE' ORDER BY table_name",
    [database],
  );
  return (rows as { name: string }[]).map((row) => row.name);
}

interface Template {
  name: string;
  fingerprint: string;
  tables: string[];
  seeded: string[];
}

let template: Promise<Template> | undefined;

/** The template database of this schema, migrated once (the migrations' own lease serialises concurrent starts). */
function templateOf(target: Server, key: string): Promise<Template> {
  template ??= (async () => {
    const name = `anvil_tpl_${key}`;
    const admin = await connect(target);
    try {
      await admin.query(`CREATE DATABASE IF NOT EXISTS \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
    } finally {
      await admin.end();
    }
    // Loaded here, not at the top: only MySQL runs need the application's data source.
    const { openDatabase } = await import('../../src/database/data-source');
    const { parseDatabaseUrl } = await import('../../src/config/config');
    const dataSource = await openDatabase({ database: parseDatabaseUrl(urlOf(target, name), '') });
    await dataSource.destroy();
    const connection = await connect(target, name);
    try {
      const tables = await tablesOf(connection, name);
      const seeded: string[] = [];
      for (const table of tables) {
        if (table === KEPT_TABLE) continue;
        const [rows] = await connection.query(`SELECT 1 FROM \`${table}\` LIMIT 1`);
        if ((rows as unknown[]).length > 0) seeded.push(table);
      }
      return { name, fingerprint: await fingerprint(connection, name), tables, seeded };
    } finally {
      await connection.end();
    }
  })();
  template.catch(() => (template = undefined));
  return template;
}

async function preparePool(admin: Connection, key: string): Promise<void> {
  await admin.query(`CREATE DATABASE IF NOT EXISTS \`${POOL_SCHEMA}\``);
  await admin.query(
    `CREATE TABLE IF NOT EXISTS \`${POOL_SCHEMA}\`.free (name VARCHAR(64) PRIMARY KEY, schema_key CHAR(16) NOT NULL, returned_unix BIGINT NOT NULL, KEY by_key (schema_key))`,
  );
  const [stale] = await admin.query(`SELECT name FROM \`${POOL_SCHEMA}\`.free WHERE schema_key <> ? AND returned_unix < ?`, [
    key,
    Math.floor(Date.now() / 1000) - STALE_SECONDS,
  ]);
  for (const { name } of stale as { name: string }[]) {
    const [taken] = await admin.query(`DELETE FROM \`${POOL_SCHEMA}\`.free WHERE name = ?`, [name]);
    if ((taken as { affectedRows: number }).affectedRows === 1) await admin.query(`DROP DATABASE IF EXISTS \`${name}\``);
  }
}

/** Takes a pooled database of this schema, or null when none is free. */
async function take(admin: Connection, key: string): Promise<string | null> {
  for (;;) {
    const [rows] = await admin.query(`SELECT name FROM \`${POOL_SCHEMA}\`.free WHERE schema_key = ? LIMIT 1`, [key]);
    const found = (rows as { name: string }[])[0];
    if (!found) return null;
    // Whoever deletes the row owns the database; another taker moves on to the next one.
    const [taken] = await admin.query(`DELETE FROM \`${POOL_SCHEMA}\`.free WHERE name = ?`, [found.name]);
    if ((taken as { affectedRows: number }).affectedRows !== 1) continue;
    // A pooled name whose database is gone (an operator's cleanup) is forgotten, never handed out.
    const [schemas] = await admin.query('SELECT 1 FROM information_schema.schemata WHERE schema_name = ?', [found.name]);
    if ((schemas as unknown[]).length === 1) return found.name;
  }
}

/** Empties `name` back to the template's rows; false when it is not fit to be reused. */
async function reset(target: Server, name: string, tpl: Template): Promise<boolean> {
  const connection = await connect(target, name);
  try {
    const [others] = await connection.query('SELECT COUNT(*) AS n FROM information_schema.processlist WHERE db = ? AND id <> CONNECTION_ID()', [name]);
    if (Number((others as { n: number }[])[0].n) > 0) return false;
    if ((await fingerprint(connection, name)) !== tpl.fingerprint) return false;
    const emptied = tpl.tables.filter((table) => table !== KEPT_TABLE);
    // Twice: a trigger of a DELETE may write to a table already emptied.
    const deletes = emptied.map((table) => `DELETE FROM \`${table}\`;`).join('');
    const seeds = tpl.seeded.map((table) => `INSERT INTO \`${table}\` SELECT * FROM \`${tpl.name}\`.\`${table}\`;`).join('');
    await connection.query(`SET FOREIGN_KEY_CHECKS = 0; START TRANSACTION; ${deletes}${deletes}${seeds}COMMIT; SET FOREIGN_KEY_CHECKS = 1;`);
    const counts = emptied.map((table) => `SELECT COUNT(*) AS n FROM \`${table}\`${tpl.seeded.includes(table) ? ' WHERE 0' : ''}`).join(' UNION ALL ');
    const [rows] = await connection.query(counts);
    return (rows as { n: number }[]).every((row) => Number(row.n) === 0);
  } finally {
    await connection.end();
  }
}

/**
 * A migrated (or, the first times, empty) database for one test; `drop` gives it back. `fresh` asks for one
 * never used, without even the migrations (a restore, say, must load into the schema it creates itself); it is
 * dropped afterwards.
 */
export async function createMysqlDatabase(options: { fresh?: boolean; collation?: string } = {}): Promise<{ url: string; drop(): Promise<void> }> {
  const target = server();
  const key = schemaKey();
  const admin = await connect(target);
  // A database of another collation (an operator's plain CREATE DATABASE) is always a new one.
  const fresh = options.fresh || options.collation !== undefined;
  let name: string | null;
  try {
    await preparePool(admin, key);
    name = fresh ? null : await take(admin, key);
    if (!name) {
      name = `anvil_test_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
      await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE ${options.collation ?? 'utf8mb4_bin'}`);
    }
  } finally {
    await admin.end();
  }
  const database = name;
  // Given back once, however often a test's teardown asks: a second give-back after the database went to the
  // pool would find the next test's connections on it and drop that test's database (or, run alongside the
  // first, pool a database it drops).
  let dropped: Promise<void> | undefined;
  return {
    url: urlOf(target, database),
    drop: () => (dropped ??= giveBack()),
  };

  async function giveBack(): Promise<void> {
    const tpl = fresh ? null : await templateOf(target, key).catch(() => null);
    const reusable = tpl !== null && (await reset(target, database, tpl).catch(() => false));
    const connection = await connect(target);
    try {
      if (reusable)
        await connection.query(`INSERT INTO \`${POOL_SCHEMA}\`.free (name, schema_key, returned_unix) VALUES (?, ?, ?)`, [
          database,
          key,
          Math.floor(Date.now() / 1000),
        ]);
      else await connection.query(`DROP DATABASE IF EXISTS \`${database}\``);
    } finally {
      await connection.end();
    }
  }
}
