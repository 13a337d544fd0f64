import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createReadStream } from 'node:fs';
import * as readline from 'node:readline';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { DataSource } from 'typeorm';
import { LFS_JWT_SECRET_FILE } from '../lfs/lfs-tokens';
import { BackupConfig, BLOB_AREAS, DumpManifest, exists, MANIFEST, MYSQL_ROWS, SQLITE_FILE } from './backup';

// `anvil restore`: an archive of backup.ts unpacked into an empty DATA_DIR, and its rows into an empty database.

const run = promisify(execFile);

/**
 * `anvil restore`, first part: the archive unpacked into an empty DATA_DIR (repositories, files, keys and, for
 * SQLite, the database file). Returns the manifest and, for MySQL, the rows file to load once the schema exists.
 */
export async function unpack(config: BackupConfig, archive: string): Promise<{ manifest: DumpManifest; rowsFile: string | null }> {
  const dataDir = path.resolve(config.dataDir);
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  const present = (await fs.readdir(dataDir)).filter((name) => name !== 'lost+found');
  if (present.length > 0) throw new Error(`DATA_DIR ${dataDir} is not empty (${present.slice(0, 3).join(', ')}): restore needs an empty one`);
  const staging = path.join(dataDir, 'tmp', `restore-${randomBytes(6).toString('hex')}`);
  await vetArchive(path.resolve(archive));
  await fs.mkdir(staging, { recursive: true, mode: 0o700 });
  await run('tar', ['-C', staging, '-xzf', path.resolve(archive), '--no-same-owner']);
  const manifest = JSON.parse(await fs.readFile(path.join(staging, MANIFEST), 'utf8')) as DumpManifest;
  if (manifest.format !== 1) throw new Error(`unknown archive format ${String(manifest.format)}`);
  if (manifest.database !== config.database.type) {
    throw new Error(`the archive holds a ${manifest.database} database; DATABASE_URL names a ${config.database.type} one`);
  }
  for (const area of ['repositories', ...BLOB_AREAS]) await moveIfPresent(path.join(staging, area), path.join(dataDir, area));
  await moveIfPresent(path.join(staging, 'ssh', 'ssh_host_ed25519_key'), config.ssh.hostKeyFile);
  await moveIfPresent(path.join(staging, 'ssh', 'ssh_host_ed25519_key.pub'), `${config.ssh.hostKeyFile}.pub`);
  await moveIfPresent(path.join(staging, 'secret_key'), path.join(dataDir, 'secret_key'));
  await moveIfPresent(path.join(staging, LFS_JWT_SECRET_FILE), path.join(dataDir, LFS_JWT_SECRET_FILE));
  if (config.database.type === 'sqlite') {
    if (await exists(config.database.file)) throw new Error(`the database ${config.database.file} exists: restore needs none`);
    await fs.mkdir(path.dirname(config.database.file), { recursive: true });
    await fs.rename(path.join(staging, SQLITE_FILE), config.database.file);
    await fs.rm(staging, { recursive: true, force: true });
    return { manifest, rowsFile: null };
  }
  const rowsFile = path.join(dataDir, 'tmp', `rows-${randomBytes(6).toString('hex')}.jsonl`);
  await fs.rename(path.join(staging, MYSQL_ROWS), rowsFile);
  await fs.rm(staging, { recursive: true, force: true });
  return { manifest, rowsFile };
}

/** What an archive of `anvil dump` holds at its top: the data areas, the database, the keys and the manifest. */
const ARCHIVE_AREAS = new Set(['repositories', ...BLOB_AREAS, 'database', 'ssh', 'secret_key', LFS_JWT_SECRET_FILE, MANIFEST]);

/** Largest listing read of an archive (a member per line): an archive with more members is refused. */
const MAX_LISTING_BYTES = 1 << 30;

/**
 * Refuses, before anything is unpacked, an archive `anvil dump` cannot have made: a member that is a symbolic
 * link, a device, a FIFO or anything else but a file or a directory (a restored link would point the data areas
 * elsewhere), a member outside the data areas (an absolute path, `..`, another top-level name), or a hard link
 * to such a member. Hard links within the areas are kept: repositories that share objects are archived so.
 */
export async function vetArchive(archive: string): Promise<void> {
  const options = { maxBuffer: MAX_LISTING_BYTES };
  // Names one per line (control characters escaped), and the same members with their types, in the same order.
  const names = (await run('tar', ['--quoting-style=escape', '-tzf', archive], options)).stdout.split('\n').filter((line) => line !== '');
  const details = (await run('tar', ['--quoting-style=escape', '-tvzf', archive], options)).stdout.split('\n').filter((line) => line !== '');
  if (names.length !== details.length) throw new Error('the archive cannot be read as one made by anvil dump');
  names.forEach((name, index) => {
    const type = details[index][0];
    if (type !== '-' && type !== 'd' && type !== 'h') {
      throw new Error(`the archive member ${name} is ${type === 'l' ? 'a symbolic link' : 'not a file or a directory'}: restore refuses it`);
    }
    assertInsideAreas(name);
    if (type === 'h') {
      const marker = `${name} link to `;
      const at = details[index].indexOf(marker);
      if (at < 0) throw new Error(`the archive member ${name} is a link restore cannot follow: restore refuses it`);
      assertInsideAreas(details[index].slice(at + marker.length));
    }
  });
}

function assertInsideAreas(name: string): void {
  const parts = name.split('/').filter((part) => part !== '' && part !== '.');
  if (name.startsWith('/') || parts.includes('..') || (parts.length > 0 && !ARCHIVE_AREAS.has(parts[0]))) {
    throw new Error(`the archive member ${name} lies outside the data areas: restore refuses it`);
  }
}

/**
 * Leases and claims are held by the processes of the service that was dumped, for seconds: in the restored
 * database they would only make the restored service wait for holders that no longer exist.
 */
export async function forgetLiveCoordination(dataSource: DataSource): Promise<void> {
  for (const table of ['lease', 'claim']) await dataSource.query(`DELETE FROM ${table}`);
}

/** True when the database holds no row of any user table but the migrations' own (a fresh, migrated one). */
export async function assertEmptyDatabase(dataSource: DataSource): Promise<void> {
  for (const table of ['user', 'repository']) {
    const rows: { n: number | string }[] = await dataSource.query(`SELECT COUNT(*) AS n FROM ${dataSource.driver.escape(table)}`);
    if (Number(rows[0].n) > 0) throw new Error(`the database is not empty (table ${table} has rows): restore needs an empty one`);
  }
}

/**
 * `anvil restore`, MySQL part: the rows loaded into the migrated, empty database. Its migrations must be the
 * archive's (restore with the version that dumped, then upgrade). Triggers are set aside while the rows load,
 * since the tables they maintain are restored as they were.
 */
export async function loadMysqlRows(dataSource: DataSource, manifest: DumpManifest, rowsFile: string): Promise<number> {
  const migrations = ((await dataSource.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[]).map((row) => row.name);
  if (migrations.join('\n') !== manifest.migrations.join('\n')) {
    throw new Error(`the archive was made by Anvil ${manifest.anvilVersion} with another schema: restore it with that version, then upgrade`);
  }
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  let loaded = 0;
  try {
    const triggers: { Trigger: string }[] = await runner.query('SHOW TRIGGERS');
    const definitions: string[] = [];
    for (const trigger of triggers) {
      const [shown] = (await runner.query(`SHOW CREATE TRIGGER \`${trigger.Trigger}\``)) as Record<string, string>[];
      definitions.push(shown['SQL Original Statement']);
      await runner.query(`DROP TRIGGER \`${trigger.Trigger}\``);
    }
    await runner.query('SET FOREIGN_KEY_CHECKS = 0');
    const cleared = new Set<string>();
    const batch: { table: string; row: Record<string, unknown> }[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const { table } = batch[0];
      const columns = Object.keys(batch[0].row);
      const placeholders = batch.map(() => `(${columns.map(() => '?').join(', ')})`).join(', ');
      await runner.query(
        `INSERT INTO \`${table}\` (${columns.map((column) => `\`${column}\``).join(', ')}) VALUES ${placeholders}`,
        batch.flatMap((item) => columns.map((column) => item.row[column])),
      );
      loaded += batch.length;
      batch.length = 0;
    };
    // A line at a time: the rows file may be larger than memory.
    const lines = readline.createInterface({ input: createReadStream(rowsFile, 'utf8'), crlfDelay: Infinity });
    for await (const line of lines) {
      if (line === '') continue;
      const { table, row } = JSON.parse(line, reviveBuffers) as { table: string; row: Record<string, unknown> };
      if (!cleared.has(table)) {
        await flush();
        // The migrations' own rows (the migrations table, seeded rows) give way to the archive's.
        await runner.query(`DELETE FROM \`${table}\``);
        cleared.add(table);
      }
      if (batch.length > 0 && (batch[0].table !== table || batch.length >= 200)) await flush();
      batch.push({ table, row });
    }
    await flush();
    await runner.query('SET FOREIGN_KEY_CHECKS = 1');
    for (const definition of definitions) await runner.query(definition);
  } finally {
    await runner.release();
  }
  await fs.rm(rowsFile, { force: true });
  return loaded;
}

function reviveBuffers(_key: string, value: unknown): unknown {
  if (value && typeof value === 'object' && typeof (value as { $base64?: unknown }).$base64 === 'string') {
    return Buffer.from((value as { $base64: string }).$base64, 'base64');
  }
  return value;
}

async function moveIfPresent(from: string, to: string): Promise<void> {
  if (!(await exists(from))) return;
  await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  await fs.rename(from, to);
}
