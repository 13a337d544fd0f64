import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DataSource } from 'typeorm';
import { loadConfig } from '../../src/config/config';
import { openDatabase } from '../../src/database/data-source';
import { Leases } from '../../src/database/leases';
import { MIGRATIONS } from '../../src/database/migrations';
import { RepositoryUsageTotals1764560000000 } from '../../src/database/migrations/1764560000000-repository-usage-totals';
import { createMysqlDatabase, usesMysql } from '../support/test-app';

/** A fresh, empty database of the suite's kind (SQLite file or MySQL database) and a way to remove it. */
async function freshDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
  if (usesMysql()) return createMysqlDatabase();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-migrate-'));
  return { url: `sqlite:${path.join(dir, 'anvil.db')}`, drop: async () => fs.rmSync(dir, { recursive: true, force: true }) };
}

const open = (url: string) => openDatabase(loadConfig({ DATABASE_URL: url, DATA_DIR: os.tmpdir() }));

async function pendingSchemaChanges(dataSource: DataSource): Promise<string[]> {
  return (await dataSource.driver.createSchemaBuilder().log()).upQueries.map((query) => query.query);
}

describe('schema migrations across processes', () => {
  it('several first starts at once on one empty database: every one succeeds, each migration ran once', async () => {
    const database = await freshDatabase();
    const opened: DataSource[] = [];
    try {
      const results = await Promise.allSettled([open(database.url), open(database.url), open(database.url)]);
      for (const result of results) if (result.status === 'fulfilled') opened.push(result.value);
      expect(results.map((result) => result.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
      const rows: { name: string }[] = await opened[0].query('SELECT name FROM migrations ORDER BY id');
      expect(rows.map((row) => row.name)).toEqual(MIGRATIONS.map((migration) => migration.name));
      expect(await pendingSchemaChanges(opened[0])).toEqual([]);
      // Nothing is left holding the migrations' lease.
      expect(await opened[0].query('SELECT name FROM lease')).toEqual([]);
    } finally {
      for (const dataSource of opened) await dataSource.destroy();
      await database.drop();
    }
  });

  it('a start waits while another process holds the lease, then finds its work done', async () => {
    const database = await freshDatabase();
    const first = await open(database.url);
    let second: DataSource | undefined;
    try {
      // Another process (holder) is "migrating": take the lease, roll the last migration back meanwhile.
      const holder = new Leases(first);
      expect(await holder.tryAcquire('schema-migrations', 60_000)).toBe(true);
      await first.undoLastMigration({ transaction: 'each' });
      let opened = false;
      const starting = open(database.url).then((dataSource) => {
        opened = true;
        second = dataSource;
      });
      // The waiting start has not applied the migration while the lease is held (it is still pending).
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(opened).toBe(false);
      expect(await first.showMigrations()).toBe(true);
      await first.query('DELETE FROM lease WHERE name = ?', ['schema-migrations']);
      await starting;
      expect(await second!.showMigrations()).toBe(false);
      expect(await pendingSchemaChanges(second!)).toEqual([]);
    } finally {
      await second?.destroy();
      await first.destroy();
      await database.drop();
    }
  });

  it('a lease whose holder died lapses, and the next start takes it over', async () => {
    const database = await freshDatabase();
    const first = await open(database.url);
    let second: DataSource | undefined;
    try {
      await first.query('INSERT INTO lease (name, holder, expires_at) VALUES (?, ?, ?)', ['schema-migrations', 'dead:1:x', Date.now() - 1]);
      await first.undoLastMigration({ transaction: 'each' });
      second = await open(database.url);
      expect(await second.showMigrations()).toBe(false);
    } finally {
      await second?.destroy();
      await first.destroy();
      await database.drop();
    }
  });

  it('a migration cut off part-way (some of its work done, no row in migrations) completes on the next start', async () => {
    const database = await freshDatabase();
    const first = await open(database.url);
    let second: DataSource | undefined;
    try {
      // As after a kill part-way through the migration that keeps owners' usage totals: its row is gone, its
      // table and some of its triggers exist, one trigger does not. (On SQLite, whose DDL is transactional, a
      // kill leaves nothing of a migration; there this stands for a database repaired by hand.)
      await first.query('DELETE FROM migrations WHERE name = ?', [RepositoryUsageTotals1764560000000.name]);
      await first.query('DROP TRIGGER repository_usage_update');
      second = await open(database.url);
      expect(await second.showMigrations()).toBe(false);
      const triggers: unknown[] = await second.query(
        usesMysql()
          ? "SELECT trigger_name FROM information_schema.triggers WHERE trigger_schema = DATABASE() AND trigger_name = 'repository_usage_update'"
          : "SELECT name FROM sqlite_master WHERE type = 'trigger' AND name = 'repository_usage_update'",
      );
      expect(triggers).toHaveLength(1);
      expect(await pendingSchemaChanges(second)).toEqual([]);
    } finally {
      await second?.destroy();
      await first.destroy();
      await database.drop();
    }
  });

  it('a first start on a database of the server default collation compares text byte for byte, as SQLite does', async () => {
    // An operator's plain CREATE DATABASE takes the server's default (utf8mb4_general_ci on MariaDB).
    const database = usesMysql() ? await createMysqlDatabase({ collation: 'utf8mb4_general_ci' }) : await freshDatabase();
    const opened = await open(database.url);
    try {
      if (usesMysql()) {
        const [schema] = await opened.query('SELECT DEFAULT_COLLATION_NAME AS collation FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = DATABASE()');
        expect(schema.collation).toBe('utf8mb4_bin');
        const columns: { collation: string }[] = await opened.query(
          'SELECT DISTINCT COLLATION_NAME AS collation FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND COLLATION_NAME IS NOT NULL',
        );
        expect(columns.map((column) => column.collation)).toEqual(['utf8mb4_bin']);
      }
      // Keys that differ only in case or accent are distinct keys of a unique index (the lease table's names).
      for (const name of ['Résumé-check', 'resume-check', 'RESUME-check']) {
        await opened.query('INSERT INTO lease (name, holder, expires_at) VALUES (?, ?, ?)', [name, 'test', 0]);
      }
      const rows: { name: string }[] = await opened.query("SELECT name FROM lease WHERE name LIKE '%-check' ORDER BY name");
      expect(rows.map((row) => row.name).sort()).toEqual(['RESUME-check', 'Résumé-check', 'resume-check'].sort());
    } finally {
      await opened.destroy();
      await database.drop();
    }
  });
});
