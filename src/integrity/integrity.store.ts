import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { changeRows, Transactions } from '../database/transactions';

/** A repository's row as the reconciliation compares it with its directory. */
export interface RepositoryRecord {
  id: number;
  ownerName: string;
  name: string;
  gitSize: number;
  /** Seconds; every recorded change on disk (push, API commit) sets it after measuring the size. */
  updatedUnix: number;
  isEmpty: boolean;
  defaultBranch: string;
  objectFormatName: string;
}

/** A stored counter that disagrees with the rows it counts. */
export interface CounterDrift {
  table: 'repository' | 'user';
  column: string;
  /** How many rows hold a wrong value. */
  rows: number;
}

/**
 * The counters the reconciliation checks: each column of `table` must equal the count of `counted` rows whose
 * `key` is the row's id.
 */
const COUNTERS: { table: 'repository' | 'user'; column: string; counted: string; key: string }[] = [
  { table: 'repository', column: 'num_stars', counted: 'star', key: 'repo_id' },
  { table: 'repository', column: 'num_watches', counted: 'watch', key: 'repo_id' },
  { table: 'user', column: 'num_stars', counted: 'star', key: 'uid' },
  { table: 'user', column: 'num_repos', counted: 'repository', key: 'owner_id' },
  { table: 'user', column: 'num_followers', counted: 'follow', key: 'follow_id' },
  { table: 'user', column: 'num_following', counted: 'follow', key: 'user_id' },
];

const PAGE = 1000;

/**
 * The reconciliation's door to the database: it reads across the tables of several modules (repositories,
 * attachments, packages, counters) to compare them with the files on disk, and repairs only what it found.
 */
@Injectable()
export class IntegrityStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private q(name: string): string {
    return this.dataSource.driver.escape(name);
  }

  /** Every repository with its owner's name, a page at a time in id order. */
  async *repositories(): AsyncGenerator<RepositoryRecord[]> {
    let after = 0;
    for (;;) {
      const page = await this.repositoryPage(after, PAGE);
      if (page.length === 0) return;
      after = page[page.length - 1].id;
      yield page;
    }
  }

  /** Up to `limit` repositories with ids above `after`, in id order. */
  async repositoryPage(after: number, limit: number): Promise<RepositoryRecord[]> {
    return this.repositoryRows(`r.id > ? ORDER BY r.id LIMIT ${Math.max(1, Math.floor(limit))}`, [after]);
  }

  /** The repository whose directory is `owner/name` (both lowercased, as on disk). */
  async repositoryAt(ownerLowerName: string, lowerName: string): Promise<RepositoryRecord | null> {
    return (await this.repositoryRows('u.lower_name = ? AND r.lower_name = ?', [ownerLowerName, lowerName]))[0] ?? null;
  }

  async repositoryById(id: number): Promise<RepositoryRecord | null> {
    return (await this.repositoryRows('r.id = ?', [id]))[0] ?? null;
  }

  private async repositoryRows(condition: string, parameters: unknown[]): Promise<RepositoryRecord[]> {
    const rows: Record<string, unknown>[] = await this.dataSource.query(
      `SELECT r.id AS id, u.name AS owner_name, r.name AS name, r.git_size AS git_size, r.updated_unix AS updated_unix, r.is_empty AS is_empty, ` +
        `r.default_branch AS default_branch, r.object_format_name AS object_format_name ` +
        `FROM repository r INNER JOIN ${this.q('user')} u ON u.id = r.owner_id WHERE ${condition}`,
      parameters,
    );
    return rows.map((row) => ({
      id: Number(row.id),
      ownerName: String(row.owner_name),
      name: String(row.name),
      gitSize: Number(row.git_size),
      updatedUnix: Number(row.updated_unix),
      isEmpty: Number(row.is_empty) !== 0,
      defaultBranch: String(row.default_branch),
      objectFormatName: String(row.object_format_name),
    }));
  }

  /** Lowercased `owner/name` of every repository row (directories are named in lower case). */
  async repositoryPaths(): Promise<Set<string>> {
    const paths = new Set<string>();
    for await (const page of this.repositories()) for (const repo of page) paths.add(`${repo.ownerName.toLowerCase()}/${repo.name.toLowerCase()}`);
    return paths;
  }

  /** Whether some repository row names the object pool `name` (docs/forks.md): one lookup in its index. */
  async namesPool(name: string): Promise<boolean> {
    const rows: unknown[] = await this.dataSource.query('SELECT 1 AS named FROM repository WHERE object_pool = ? LIMIT 1', [name]);
    return rows.length > 0;
  }

  async recordRepository(id: number, changes: { gitSize?: number; isEmpty?: boolean; updatedUnix?: number }): Promise<void> {
    const sets: string[] = [];
    const values: unknown[] = [];
    if (changes.updatedUnix !== undefined) {
      sets.push('updated_unix = ?');
      values.push(changes.updatedUnix);
    }
    if (changes.gitSize !== undefined) {
      sets.push('git_size = ?');
      values.push(changes.gitSize);
    }
    if (changes.isEmpty !== undefined) {
      sets.push('is_empty = ?');
      values.push(changes.isEmpty ? 1 : 0);
    }
    if (sets.length > 0) await this.transactions.write((tx) => changeRows(tx, `UPDATE repository SET ${sets.join(', ')} WHERE id = ?`, [...values, id]));
  }

  /** Which of `uuids` have an attachment row. */
  async attachmentUuids(uuids: string[]): Promise<Set<string>> {
    return this.existing('attachment', 'uuid', uuids);
  }

  /** Which of `sha256s` have a package blob row. */
  async packageBlobs(sha256s: string[]): Promise<Set<string>> {
    return this.existing('package_blob', 'sha256', sha256s);
  }

  private async existing(table: string, column: string, values: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < values.length; start += PAGE) {
      const chunk = values.slice(start, start + PAGE);
      const rows: Record<string, unknown>[] = await this.dataSource.query(
        `SELECT ${column} AS v FROM ${table} WHERE ${column} IN (${chunk.map(() => '?').join(', ')})`,
        chunk,
      );
      for (const row of rows) found.add(String(row.v));
    }
    return found;
  }

  /** Which of `oids` some repository holds (an LFS object row). */
  async lfsOids(oids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < oids.length; start += PAGE) {
      const slice = oids.slice(start, start + PAGE);
      if (slice.length === 0) continue;
      const rows = (await this.dataSource.query(`SELECT DISTINCT oid FROM lfs_meta_object WHERE oid IN (${slice.map(() => '?').join(', ')})`, slice)) as {
        oid: string;
      }[];
      for (const row of rows) found.add(row.oid);
    }
    return found;
  }

  /** Every oid some repository holds, a page at a time in oid order. */
  async *lfsObjectOids(): AsyncGenerator<string[]> {
    let after = '';
    for (;;) {
      const rows = (await this.dataSource.query('SELECT DISTINCT oid FROM lfs_meta_object WHERE oid > ? ORDER BY oid LIMIT ?', [after, PAGE])) as {
        oid: string;
      }[];
      if (rows.length === 0) return;
      after = rows[rows.length - 1].oid;
      yield rows.map((row) => row.oid);
    }
  }

  /** Removes every row of an LFS object, and its bytes from the LFS size of the repositories that held it. */
  async deleteLfsObjectRows(oid: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      await tx.query(
        'UPDATE repository SET lfs_size = lfs_size - (SELECT COALESCE(SUM(o.size), 0) FROM lfs_meta_object o WHERE o.repository_id = repository.id AND o.oid = ?) ' +
          'WHERE id IN (SELECT repository_id FROM lfs_meta_object WHERE oid = ?)',
        [oid, oid],
      );
      await tx.query('DELETE FROM lfs_meta_object WHERE oid = ?', [oid]);
    });
  }

  /** Every stored (not external) attachment, a page at a time. */
  async *storedAttachments(): AsyncGenerator<{ id: number; uuid: string }[]> {
    let after = 0;
    for (;;) {
      const rows: Record<string, unknown>[] = await this.dataSource.query(
        `SELECT id, uuid FROM attachment WHERE id > ? AND external_url = '' ORDER BY id LIMIT ${PAGE}`,
        [after],
      );
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1].id);
      yield rows.map((row) => ({ id: Number(row.id), uuid: String(row.uuid) }));
    }
  }

  async deleteAttachment(id: number): Promise<void> {
    await this.transactions.write((tx) => changeRows(tx, 'DELETE FROM attachment WHERE id = ?', [id]));
  }

  /** Every package blob row, a page at a time. */
  async *packageBlobRows(): AsyncGenerator<{ id: number; sha256: string }[]> {
    let after = 0;
    for (;;) {
      const rows: Record<string, unknown>[] = await this.dataSource.query(`SELECT id, sha256 FROM package_blob WHERE id > ? ORDER BY id LIMIT ${PAGE}`, [
        after,
      ]);
      if (rows.length === 0) return;
      after = Number(rows[rows.length - 1].id);
      yield rows.map((row) => ({ id: Number(row.id), sha256: String(row.sha256) }));
    }
  }

  /** A blob whose content is lost: its file rows and itself, in one transaction. */
  async deletePackageBlob(id: number): Promise<void> {
    await this.transactions.run(async (tx) => {
      await tx.query('DELETE FROM package_file WHERE blob_id = ?', [id]);
      await tx.query('DELETE FROM package_blob WHERE id = ?', [id]);
    });
  }

  /** Package versions without a file, and packages without a version. */
  async emptyPackageRows(): Promise<{ versions: number; packages: number }> {
    const versions = await this.count('SELECT COUNT(*) AS n FROM package_version v WHERE NOT EXISTS (SELECT 1 FROM package_file f WHERE f.version_id = v.id)');
    const packages = await this.count('SELECT COUNT(*) AS n FROM package p WHERE NOT EXISTS (SELECT 1 FROM package_version v WHERE v.package_id = p.id)');
    return { versions, packages };
  }

  /**
   * Deletes package versions without a file and packages without a version. A version's first file is written in
   * the version's own transaction, so none of these can be an upload in progress.
   */
  async deleteEmptyPackageRows(): Promise<void> {
    await this.transactions.run(async (tx) => {
      const empty: Record<string, unknown>[] = await tx.query(
        'SELECT v.id AS id FROM package_version v WHERE NOT EXISTS (SELECT 1 FROM package_file f WHERE f.version_id = v.id)',
      );
      for (const row of empty) await tx.query('DELETE FROM package_version WHERE id = ?', [Number(row.id)]);
      const lonely: Record<string, unknown>[] = await tx.query(
        'SELECT p.id AS id FROM package p WHERE NOT EXISTS (SELECT 1 FROM package_version v WHERE v.package_id = p.id)',
      );
      for (const row of lonely) await tx.query('DELETE FROM package WHERE id = ?', [Number(row.id)]);
    });
  }

  /** Counters that disagree with the rows they count. */
  async counterDrifts(): Promise<CounterDrift[]> {
    const drifts: CounterDrift[] = [];
    for (const counter of COUNTERS) {
      const rows = await this.count(`SELECT COUNT(*) AS n FROM ${this.q(counter.table)} t WHERE t.${counter.column} <> ${this.countOf(counter, 't')}`);
      if (rows > 0) drifts.push({ table: counter.table, column: counter.column, rows });
    }
    return drifts;
  }

  /**
   * On MySQL/MariaDB, the tables with a text column that does not compare bytes (`utf8mb4_bin`), with that
   * collation: made in a database created under another one before Anvil set it on first start
   * (schema-migrations.ts). None on SQLite.
   */
  async tablesNotComparingBytes(): Promise<{ table: string; collation: string }[]> {
    if (this.dataSource.options.type !== 'mysql') return [];
    const rows: { table_name: string; collation: string }[] = await this.dataSource.query(
      'SELECT TABLE_NAME AS table_name, MIN(COLLATION_NAME) AS collation FROM information_schema.COLUMNS ' +
        "WHERE TABLE_SCHEMA = DATABASE() AND COLLATION_NAME IS NOT NULL AND COLLATION_NAME <> 'utf8mb4_bin' GROUP BY TABLE_NAME ORDER BY TABLE_NAME",
    );
    return rows.map((row) => ({ table: row.table_name, collation: row.collation }));
  }

  /** Sets every drifted counter to the count of its rows, one statement each (atomic against concurrent writes). */
  async repairCounters(drifts: CounterDrift[]): Promise<void> {
    for (const drift of drifts) {
      const counter = COUNTERS.find((item) => item.table === drift.table && item.column === drift.column)!;
      const table = this.q(counter.table);
      const count = this.countOf(counter, table);
      await this.transactions.write((tx) => changeRows(tx, `UPDATE ${table} SET ${counter.column} = ${count} WHERE ${counter.column} <> ${count}`, []));
    }
  }

  private countOf(counter: { counted: string; key: string }, outer: string): string {
    return `(SELECT COUNT(*) FROM ${this.q(counter.counted)} c WHERE c.${counter.key} = ${outer}.id)`;
  }

  private async count(sql: string): Promise<number> {
    const rows: Record<string, unknown>[] = await this.dataSource.query(sql);
    return Number(rows[0]?.n ?? 0);
  }
}
