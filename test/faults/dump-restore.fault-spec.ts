import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { createMysqlDatabase, usesMysql } from '../support/test-app';
import { adminToken, baseEnv, buildOnce, cli, git, ServerProcess, startServer } from './support/built-server';

/**
 * `anvil dump` taken while a bounded load writes (repositories, package files, release attachments, stars), then
 * `anvil restore` into an empty DATA_DIR and database: every write acknowledged before the dump began is there,
 * and everything restored is the source's: each repository's refs (and `git fsck` passes), each stored file
 * byte for byte, each row (but counters that later writes moved), with nothing half-made (`anvil doctor`, and
 * the tag of every restored release).
 */

interface SqliteHandle {
  prepare(sql: string): { all(): unknown[] };
  close(): void;
}
// The driver TypeORM uses; it ships without type declarations.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (file: string, options: { readonly: boolean }) => SqliteHandle;

const ADMIN = 'dump-admin';
/**
 * Counters, sizes and times that writes after the dump move in the source; the restored copy keeps the dump's
 * (and `anvil doctor` checks them against what was restored).
 */
const MOVING_COLUMNS = new Set([
  'num_repos',
  'num_stars',
  'num_watches',
  'num_followers',
  'num_following',
  'updated_unix',
  'git_size',
  'git_size_ticket',
  'git_size_stored_ticket',
]);
/**
 * Kept by triggers from other tables (usage sums, the search indexes and their full-text shadow tables), whose
 * internal layout later writes change: checked through the rows they derive from.
 */
const DERIVED_TABLES = /^repository_usage$|search/;

type Rows = Map<string, Record<string, unknown>[]>;

async function tableRows(databaseUrl: string | undefined, dataDir: string): Promise<Rows> {
  const result: Rows = new Map();
  if (!databaseUrl) {
    const db = new Database(path.join(dataDir, 'anvil.db'), { readonly: true });
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as { name: string }[];
      for (const { name } of tables) result.set(name, db.prepare(`SELECT * FROM "${name}"`).all() as Record<string, unknown>[]);
    } finally {
      db.close();
    }
    return result;
  }
  const url = new URL(databaseUrl);
  const connection = await createConnection({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username) || 'root',
    database: url.pathname.slice(1),
  });
  try {
    const [tables] = await connection.query(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_type = 'BASE TABLE'",
    );
    for (const { name } of tables as { name: string }[]) {
      const [rows] = await connection.query(`SELECT * FROM \`${name}\``);
      result.set(name, rows as Record<string, unknown>[]);
    }
  } finally {
    await connection.end();
  }
  return result;
}

function keyOf(row: Record<string, unknown>): string {
  return 'id' in row ? `id:${String(row.id)}` : JSON.stringify(row);
}

function comparable(row: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(row)
      .filter(([column]) => !MOVING_COLUMNS.has(column))
      .map(([column, value]) => [column, Buffer.isBuffer(value) ? value.toString('hex') : String(value)]),
  );
}

/** Relative paths and contents of every file under `dir`. */
function filesUnder(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const walk = (folder: string) => {
    for (const entry of fs.existsSync(folder) ? fs.readdirSync(folder, { withFileTypes: true }) : []) {
      const child = path.join(folder, entry.name);
      if (entry.isDirectory()) walk(child);
      else if (entry.isFile()) files.set(path.relative(dir, child), fs.readFileSync(child));
    }
  };
  walk(dir);
  return files;
}

describe(`anvil dump under load and anvil restore (${usesMysql() ? 'MariaDB' : 'SQLite'})`, () => {
  const made: { dir: string; database?: { url: string; drop(): Promise<void> } }[] = [];
  let token = '';

  beforeAll(() => buildOnce());
  afterAll(async () => {
    for (const item of made) {
      await item.database?.drop();
      fs.rmSync(item.dir, { recursive: true, force: true });
    }
  });

  async function place(): Promise<{ dir: string; databaseUrl?: string; env: Record<string, string> }> {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-dump-'));
    // Fresh ones, as an operator restores into: the restore migrates the database itself.
    const database = usesMysql() ? await createMysqlDatabase({ fresh: true }) : undefined;
    made.push({ dir, database });
    return { dir, databaseUrl: database?.url, env: baseEnv(dir, database?.url) };
  }

  async function call(server: ServerProcess, method: string, route: string, body?: unknown): Promise<Response> {
    const raw = body instanceof Uint8Array;
    const answer = await fetch(`${server.url}${route}`, {
      method,
      headers: { Authorization: `token ${token}`, ...(body === undefined ? {} : { 'Content-Type': raw ? 'application/octet-stream' : 'application/json' }) },
      body: body === undefined ? undefined : raw ? (body as Uint8Array) : JSON.stringify(body),
    });
    if (answer.status >= 300) throw new Error(`${method} ${route}: ${answer.status} ${await answer.text()}`);
    return answer;
  }

  /** One write of each kind; returns what must be found again. */
  async function writeSome(
    server: ServerProcess,
    tag: string,
  ): Promise<{ repo: string; packageRoute: string; packageBytes: Buffer; attachment: string; attachmentBytes: Buffer }> {
    const repo = `repo-${tag}`;
    await call(server, 'POST', '/api/v1/user/repos', { name: repo, auto_init: true });
    await call(server, 'PUT', `/api/v1/user/starred/${ADMIN}/${repo}`);
    const packageRoute = `/api/packages/${ADMIN}/generic/pkg/${tag}/file.bin`;
    const packageBytes = randomBytes(40_000);
    await call(server, 'PUT', packageRoute, packageBytes);
    const release = (await (await call(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases`, { tag_name: `v-${tag}` })).json()) as { id: number };
    const attachmentBytes = randomBytes(30_000);
    const asset = (await (await call(server, 'POST', `/api/v1/repos/${ADMIN}/${repo}/releases/${release.id}/assets?name=a.bin`, attachmentBytes)).json()) as {
      uuid: string;
    };
    return { repo, packageRoute, packageBytes, attachment: asset.uuid, attachmentBytes };
  }

  it('restores every acknowledged write, and the repositories, files and rows as the dump saw them', async () => {
    const source = await place();
    token = await adminToken(source.env, ADMIN);
    let server = await startServer(source.env);
    const before: Awaited<ReturnType<typeof writeSome>>[] = [];
    const archive = path.join(source.dir, '..', `${path.basename(source.dir)}.tar.gz`);
    made.push({ dir: archive });
    try {
      for (let index = 0; index < 3; index++) before.push(await writeSome(server, `before-${index}`));
      // A bounded load that keeps writing while the dump runs.
      let dumping = true;
      const load = (async () => {
        for (let index = 0; index < 40 && (dumping || index < 3); index++) await writeSome(server, `during-${index}`);
      })();
      const dumped = await cli(source.env, ['dump', '--file', archive]);
      dumping = false;
      await load;
      expect(dumped.stderr).toBe('');
      expect(dumped.status).toBe(0);
    } finally {
      await server.stop();
    }

    const target = await place();
    const restored = await cli(target.env, ['restore', '--file', archive]);
    expect(restored.stderr).toBe('');
    expect(restored.status).toBe(0);
    const doctor = await cli(target.env, ['doctor']);
    expect(doctor.stdout.trim().split('\n').pop()).toBe('0 found, 0 repaired');

    // Rows: each restored row is the source's row (but counters that later writes moved).
    const [sourceRows, targetRows] = [await tableRows(source.databaseUrl, source.dir), await tableRows(target.databaseUrl, target.dir)];
    for (const [table, rows] of targetRows) {
      if (DERIVED_TABLES.test(table)) continue;
      const originals = new Map((sourceRows.get(table) ?? []).map((row) => [keyOf(comparable(row)), comparable(row)]));
      for (const row of rows) {
        // The restore records itself in the audit log of the database it restored: that row is its own.
        if (table === 'audit_event' && row.action === 'cli.restore') continue;
        const key = keyOf(comparable(row));
        expect({ table, row: originals.get(key) }).toEqual({ table, row: comparable(row) });
      }
    }
    expect((targetRows.get('audit_event') ?? []).filter((row) => row.action === 'cli.restore')).toHaveLength(1);
    // Files: each restored attachment and package file is the source's, byte for byte.
    for (const area of ['attachments', 'packages']) {
      const originals = filesUnder(path.join(source.dir, area));
      for (const [name, bytes] of filesUnder(path.join(target.dir, area)))
        expect({ area, name, same: originals.get(name)?.equals(bytes) }).toEqual({ area, name, same: true });
    }
    // Repositories: whole, each ref one the source has (the load went on adding tags after the dump copied a
    // repository; none of its writes moves a ref), every ref of a repository written before the dump, and the tag
    // of every restored release.
    const refsOf = async (dir: string) => new Set((await git(['--git-dir', dir, 'show-ref'])).split('\n').filter(Boolean));
    const restoredRepositories = (targetRows.get('repository') ?? []).map((row) => ({ id: String(row.id), name: String(row.lower_name) }));
    expect(restoredRepositories.length).toBeGreaterThanOrEqual(before.length);
    for (const { id, name } of restoredRepositories) {
      const dir = (root: string) => path.join(root, 'repositories', ADMIN, `${name}.git`);
      const [restoredRefs, sourceRefs] = [await refsOf(dir(target.dir)), await refsOf(dir(source.dir))];
      expect({ name, extra: [...restoredRefs].filter((ref) => !sourceRefs.has(ref)) }).toEqual({ name, extra: [] });
      if (before.some((write) => write.repo === name)) expect({ name, refs: [...restoredRefs].sort() }).toEqual({ name, refs: [...sourceRefs].sort() });
      const releaseTags = (targetRows.get('release') ?? [])
        .filter((row) => String(row.repo_id) === id && !Number(row.is_draft))
        .map((row) => `refs/tags/${String(row.tag_name)}`);
      const restoredNames = new Set([...restoredRefs].map((line) => line.split(' ')[1]));
      expect({ name, missing: releaseTags.filter((ref) => !restoredNames.has(ref)) }).toEqual({ name, missing: [] });
      await git(['--git-dir', dir(target.dir), 'fsck', '--no-progress', '--connectivity-only']);
    }

    // The restored service answers every write acknowledged before the dump, byte for byte.
    server = await startServer(target.env);
    try {
      for (const write of before) {
        const pkg = await call(server, 'GET', write.packageRoute);
        expect(Buffer.from(await pkg.arrayBuffer()).equals(write.packageBytes)).toBe(true);
        const attachment = await call(server, 'GET', `/attachments/${write.attachment}`);
        expect(Buffer.from(await attachment.arrayBuffer()).equals(write.attachmentBytes)).toBe(true);
        const repo = (await (await call(server, 'GET', `/api/v1/repos/${ADMIN}/${write.repo}`)).json()) as { stars_count: number; empty: boolean };
        expect(repo).toMatchObject({ stars_count: 1, empty: false });
      }
      expect(/reconciliation repaired 0/.test(server.startupLine)).toBe(true);
    } finally {
      await server.stop();
    }
  });
});
