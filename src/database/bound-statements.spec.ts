import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { DataSource, QueryRunner } from 'typeorm';
import { BoundStatements, RowSet, SQLITE_LOOKUPS_KEPT } from './bound-statements';

const LOOKUP = 'SELECT id, name FROM item WHERE id = ?';

/** Lookups kept on SQLite: whatever changes the database, a lookup answers what a query would answer now. */
describe('BoundStatements.lookup on SQLite', () => {
  let directory: string;
  let file: string;
  let dataSource: DataSource;
  let statements: BoundStatements;
  /** Another connection to the same file, as the CLI or a second process would have. */
  let other: Database.Database;

  const names = (set: RowSet) => set.rows.map((row) => row[1]);
  const direct = async (id: number) => ((await dataSource.query('SELECT name FROM item WHERE id = ?', [id])) as { name: string }[]).map((row) => row.name);

  beforeEach(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lookups-'));
    file = path.join(directory, 'test.db');
    dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE item (id INTEGER PRIMARY KEY, name TEXT NOT NULL)');
    await dataSource.query("INSERT INTO item (id, name) VALUES (1, 'one'), (2, 'two')");
    statements = new BoundStatements(dataSource);
    other = new Database(file);
  });

  afterEach(async () => {
    other.close();
    await dataSource.destroy();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('answers a repeated lookup from what it kept while nothing changed', async () => {
    const first = await statements.lookup(LOOKUP, [1]);
    expect(names(first)).toEqual(['one']);
    expect(await statements.lookup(LOOKUP, [1])).toBe(first);
    // Other statements and other keys are kept apart.
    expect(names(await statements.lookup(LOOKUP, [2]))).toEqual(['two']);
    expect(names(await statements.lookup(LOOKUP, [3]))).toEqual([]);
  });

  it('sees a change made through the same connection at the next lookup', async () => {
    await statements.lookup(LOOKUP, [1]);
    await dataSource.query("UPDATE item SET name = 'uno' WHERE id = 1");
    expect(names(await statements.lookup(LOOKUP, [1]))).toEqual(['uno']);
    await dataSource.query('DELETE FROM item WHERE id = 1');
    expect(names(await statements.lookup(LOOKUP, [1]))).toEqual([]);
  });

  it('sees a change committed by another connection to the same file at the next lookup', async () => {
    await statements.lookup(LOOKUP, [1]);
    other.prepare("UPDATE item SET name = 'eins' WHERE id = 1").run();
    expect(names(await statements.lookup(LOOKUP, [1]))).toEqual(['eins']);
  });

  it('keeps nothing read inside a transaction: a change rolled back is not seen afterwards', async () => {
    await statements.lookup(LOOKUP, [1]);
    const runner = dataSource.createQueryRunner();
    await runner.startTransaction();
    await runner.query("UPDATE item SET name = 'phantom' WHERE id = 1");
    // On the one connection, a lookup meanwhile sees the open transaction's change, as any query would.
    expect(names(await statements.lookup(LOOKUP, [1]))).toEqual(['phantom']);
    await runner.rollbackTransaction();
    await runner.release();
    expect(names(await statements.lookup(LOOKUP, [1]))).toEqual(['one']);
  });

  it('stays exact under any interleaving of lookups, writes from both connections and transactions', async () => {
    type Step =
      | { kind: 'lookup'; id: number }
      | { kind: 'own' | 'other'; id: number; name: string }
      | { kind: 'delete'; id: number }
      | { kind: 'begin' | 'commit' | 'rollback' };
    const id = fc.integer({ min: 1, max: 2 });
    const name = fc.constantFrom('a', 'b', 'c');
    const step: fc.Arbitrary<Step> = fc.oneof(
      { arbitrary: fc.record({ kind: fc.constant('lookup' as const), id }), weight: 3 },
      { arbitrary: fc.record({ kind: fc.constantFrom('own' as const, 'other' as const), id, name }), weight: 2 },
      { arbitrary: fc.record({ kind: fc.constant('delete' as const), id }), weight: 1 },
      { arbitrary: fc.record({ kind: fc.constantFrom('begin' as const, 'commit' as const, 'rollback' as const) }), weight: 2 },
    );
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 1, maxLength: 30 }), async (steps) => {
        await dataSource.query('DELETE FROM item');
        let runner: QueryRunner | undefined;
        try {
          for (const current of steps) {
            if (current.kind === 'lookup') {
              if (JSON.stringify(names(await statements.lookup(LOOKUP, [current.id]))) !== JSON.stringify(await direct(current.id))) return false;
            } else if (current.kind === 'own') {
              await dataSource.query('INSERT INTO item (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name', [current.id, current.name]);
            } else if (current.kind === 'other') {
              // The other connection cannot write while this one holds a write transaction (busy): skipped then.
              if (!runner) other.prepare('INSERT INTO item (id, name) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET name = excluded.name').run(current.id, current.name);
            } else if (current.kind === 'delete') {
              await dataSource.query('DELETE FROM item WHERE id = ?', [current.id]);
            } else if (current.kind === 'begin' && !runner) {
              runner = dataSource.createQueryRunner();
              await runner.startTransaction();
            } else if ((current.kind === 'commit' || current.kind === 'rollback') && runner) {
              if (current.kind === 'commit') await runner.commitTransaction();
              else await runner.rollbackTransaction();
              await runner.release();
              runner = undefined;
            }
          }
          return true;
        } finally {
          if (runner) {
            await runner.rollbackTransaction();
            await runner.release();
          }
        }
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a bounded number of answers per statement and still answers the others', async () => {
    const count = SQLITE_LOOKUPS_KEPT + 10;
    await dataSource.query(`WITH RECURSIVE n(i) AS (SELECT 3 UNION ALL SELECT i + 1 FROM n WHERE i < ${count}) INSERT INTO item (id, name) SELECT i, 'item ' || i FROM n`);
    const first = await statements.lookup(LOOKUP, [1]);
    for (let key = 2; key <= count; key++) await statements.lookup(LOOKUP, [key]);
    // The least recently used answer went; asked again, it comes from the database, the same.
    const again = await statements.lookup(LOOKUP, [1]);
    expect(again).not.toBe(first);
    expect(names(again)).toEqual(['one']);
  });
});
