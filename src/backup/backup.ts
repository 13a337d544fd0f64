import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { promisify } from 'node:util';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/config';
import { isTransientGitFile } from '../git/git-repositories';
import { poolsRoot, repositoriesRoot } from '../git/repository-paths';
import { LFS_JWT_SECRET_FILE } from '../lfs/lfs-tokens';
import { PACKAGE_VERSION } from '../server/package-version';

// `anvil dump` and what the archive is; `anvil restore` reads it back in restore.ts.

/** What a dump holds and a restore writes back: DATA_DIR, the database and the SSH host key. */
export type BackupConfig = Pick<AppConfig, 'dataDir' | 'database' | 'ssh'>;

const run = promisify(execFile);

/** What an archive holds, written first into it as `manifest.json`. */
export interface DumpManifest {
  format: 1;
  anvilVersion: string;
  createdUnix: number;
  database: 'sqlite' | 'mysql';
  /** Names of the migrations the dumped database had run (a MySQL restore needs the same). */
  migrations: string[];
  repositories: number;
  files: number;
}

export const MANIFEST = 'manifest.json';
export const SQLITE_FILE = 'database/anvil.db';
export const MYSQL_ROWS = 'database/rows.jsonl';
/** Areas of DATA_DIR with user data besides the database. */
export const BLOB_AREAS = ['attachments', 'packages', 'lfs'];

/**
 * `anvil dump`: one archive (tar, gzip) of everything needed to bring the service back. The database first, as
 * one consistent snapshot (SQLite's online backup; on MySQL/MariaDB every table streamed in one REPEATABLE
 * READ transaction with a consistent snapshot), then the files, which the server never changes in place: repositories
 * as hard links (copies across file systems) taken refs before objects, so every ref finds its objects (git adds
 * objects before it moves a ref), the object pools of fork networks after their members, attachments, package files and LFS objects, the SSH host key, the key of LFS tokens and the secret key that opens
 * sealed credentials. Taken beside a serving server: what was written meanwhile is either in the archive whole
 * or, when its row came after the snapshot, a leftover the reconciliation after `anvil restore` quarantines.
 */
export async function dump(dataSource: DataSource, config: BackupConfig, output: string): Promise<DumpManifest> {
  const dataDir = path.resolve(config.dataDir);
  const staging = path.join(dataDir, 'tmp', `dump-${Date.now()}-${randomBytes(6).toString('hex')}`);
  await fs.mkdir(path.join(staging, 'database'), { recursive: true, mode: 0o700 });
  try {
    const migrations = ((await dataSource.query('SELECT name FROM migrations ORDER BY id')) as { name: string }[]).map((row) => row.name);
    if (config.database.type === 'sqlite') {
      // better-sqlite3's online backup: pages copied while writers go on, restarted when one writes between steps.
      const handle = (dataSource.driver as unknown as { databaseConnection: { backup(file: string): Promise<unknown> } }).databaseConnection;
      await handle.backup(path.join(staging, SQLITE_FILE));
    } else {
      await dumpMysqlRows(dataSource, path.join(staging, MYSQL_ROWS));
    }
    let repositories = 0;
    const root = repositoriesRoot(dataDir);
    for (const owner of await directoryNames(root)) {
      if (owner.startsWith('.')) continue;
      for (const name of await directoryNames(path.join(root, owner))) {
        if (!name.endsWith('.git')) continue;
        await snapshotRepository(path.join(root, owner, name), path.join(staging, 'repositories', owner, name));
        repositories += 1;
      }
    }
    // Object pools of fork networks (docs/forks.md), after every member: a pool only gains objects, so each
    // member's refs taken above find their objects in the pool taken now.
    for (const pool of await directoryNames(poolsRoot(dataDir))) {
      if (pool.endsWith('.git')) await snapshotRepository(path.join(poolsRoot(dataDir), pool), path.join(staging, 'repositories', '.pools', pool));
    }
    let files = 0;
    for (const area of BLOB_AREAS) files += await linkTree(path.join(dataDir, area), path.join(staging, area));
    await copyIfPresent(config.ssh.hostKeyFile, path.join(staging, 'ssh', 'ssh_host_ed25519_key'));
    await copyIfPresent(`${config.ssh.hostKeyFile}.pub`, path.join(staging, 'ssh', 'ssh_host_ed25519_key.pub'));
    await copyIfPresent(path.join(dataDir, 'secret_key'), path.join(staging, 'secret_key'));
    await copyIfPresent(path.join(dataDir, LFS_JWT_SECRET_FILE), path.join(staging, LFS_JWT_SECRET_FILE));
    const manifest: DumpManifest = {
      format: 1,
      anvilVersion: PACKAGE_VERSION,
      createdUnix: Math.floor(Date.now() / 1000),
      database: config.database.type,
      migrations,
      repositories,
      files,
    };
    await fs.writeFile(path.join(staging, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`, { mode: 0o600 });
    const partial = `${output}.partial-${randomBytes(4).toString('hex')}`;
    // The archive holds the secret key and every private repository: the file is the owner's alone from its
    // first byte (created 0600 here, then written by tar, which keeps an existing file's mode).
    await (await fs.open(partial, 'wx', 0o600)).close();
    try {
      await run('tar', ['-C', staging, '-czf', partial, '.']);
      await fs.chmod(partial, 0o600);
      await fs.rename(partial, output);
    } catch (error) {
      await fs.rm(partial, { force: true });
      throw error;
    }
    return manifest;
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Every table's rows in one REPEATABLE READ transaction with a consistent snapshot, one JSON line per row. Rows
 * are streamed from the server (the driver pauses the connection while the file catches up), so memory stays
 * bounded by one chunk whatever the size of a table.
 */
async function dumpMysqlRows(dataSource: DataSource, file: string): Promise<void> {
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  const out = await fs.open(file, 'wx', 0o600);
  try {
    await runner.query('SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ');
    await runner.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY');
    const tables: { name: string }[] = await runner.query(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE' ORDER BY table_name",
    );
    for (const { name } of tables) {
      const rows = await runner.stream(`SELECT * FROM \`${name}\``);
      let chunk = '';
      for await (const row of rows as AsyncIterable<Record<string, unknown>>) {
        chunk += `${JSON.stringify({ table: name, row }, replaceBuffers)}\n`;
        if (chunk.length > 1 << 20) {
          await out.write(chunk);
          chunk = '';
        }
      }
      await out.write(chunk);
    }
    await runner.query('COMMIT');
  } finally {
    await out.close();
    await runner.release();
  }
}

function replaceBuffers(this: Record<string, unknown>, key: string, value: unknown): unknown {
  const original = this[key];
  return Buffer.isBuffer(original) ? { $base64: original.toString('base64') } : value;
}

/** Refs (HEAD, packed-refs, refs/), then the config, then objects: a ref never points past the objects copied. */
async function snapshotRepository(source: string, target: string): Promise<void> {
  await fs.mkdir(target, { recursive: true, mode: 0o700 });
  for (const name of ['HEAD', 'packed-refs']) await linkFile(path.join(source, name), path.join(target, name));
  await linkTree(path.join(source, 'refs'), path.join(target, 'refs'));
  await fs.mkdir(path.join(target, 'refs', 'heads'), { recursive: true });
  await fs.mkdir(path.join(target, 'refs', 'tags'), { recursive: true });
  for (const name of await fs.readdir(source)) {
    if (['HEAD', 'packed-refs', 'refs', 'objects'].includes(name) || isTransientGitFile(name)) continue;
    const stat = await fs.lstat(path.join(source, name)).catch(() => null);
    if (stat?.isDirectory()) await linkTree(path.join(source, name), path.join(target, name));
    else if (stat?.isFile()) await linkFile(path.join(source, name), path.join(target, name));
  }
  await linkTree(path.join(source, 'objects'), path.join(target, 'objects'));
}

/** Hard links (copies across file systems) of every regular file under `source`, git's transient files left out. */
async function linkTree(source: string, target: string): Promise<number> {
  let count = 0;
  const entries = await fs.readdir(source, { withFileTypes: true }).catch(() => null);
  if (!entries) return 0;
  await fs.mkdir(target, { recursive: true, mode: 0o700 });
  for (const entry of entries) {
    if (isTransientGitFile(entry.name)) continue;
    const from = path.join(source, entry.name);
    const to = path.join(target, entry.name);
    if (entry.isDirectory()) count += await linkTree(from, to);
    else if (entry.isFile() && (await linkFile(from, to))) count += 1;
  }
  return count;
}

/** A file that went meanwhile (a ref rewritten, a pack repacked) is skipped: false. */
async function linkFile(from: string, to: string): Promise<boolean> {
  try {
    await fs.link(from, to);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return false;
    if (code !== 'EXDEV' && code !== 'EPERM') throw error;
  }
  try {
    await fs.copyFile(from, to);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
}

async function copyIfPresent(from: string, to: string): Promise<void> {
  if (!(await exists(from))) return;
  await fs.mkdir(path.dirname(to), { recursive: true, mode: 0o700 });
  await fs.copyFile(from, to);
}

export async function exists(file: string): Promise<boolean> {
  return fs.lstat(file).then(
    () => true,
    () => false,
  );
}

async function directoryNames(dir: string): Promise<string[]> {
  const entries = await fs.readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}
