import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { DataSource, EntityManager } from 'typeorm';
import { changeRows, Transactions } from './transactions';

/**
 * Transactions that cannot lie: SQLite is driven into SQLITE_FULL (a page budget, `max_page_count`, which fails
 * a statement and rolls the whole transaction back, as a full disk does) and into failed COMMITs, RELEASEs and
 * ROLLBACKs (SQLITE_IOERR injected, both with the transaction still open and with SQLite having rolled it back).
 * Whatever happens, every write whose `run` resolved is in the database, before and after reopening it, and none
 * whose `run` rejected is; the counter, moved in the same transaction as the rows it counts, always equals them.
 */
describe('Transactions on SQLite under a full disk and I/O errors (property)', () => {
  type Operation = { kind: 'star'; payload: number } | { kind: 'unstar' };
  type Fault = 'none' | 'full' | 'commit-open' | 'commit-rolled-back' | 'release' | 'rollback';

  let directory: string;
  beforeAll(() => (directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-tx-faults-'))));
  afterAll(() => fs.rmSync(directory, { recursive: true, force: true }));

  const open = async (file: string) => {
    const dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
    await dataSource.initialize();
    return dataSource;
  };
  const raw = (dataSource: DataSource) =>
    (
      dataSource.driver as unknown as {
        databaseConnection: { inTransaction: boolean; exec(sql: string): void; pragma(sql: string, options?: object): unknown };
      }
    ).databaseConnection;

  /** A fault on the next statement of one kind: thrown as SQLite would, with or without the rollback it does. */
  function injectFaults(dataSource: DataSource) {
    let pending: { statement: RegExp; rollBack: boolean } | undefined;
    const runner = dataSource.createQueryRunner();
    const query = runner.query.bind(runner) as (sql: string, ...rest: unknown[]) => Promise<unknown>;
    runner.query = (async (sql: string, ...rest: unknown[]) => {
      if (pending && pending.statement.test(sql)) {
        const { rollBack } = pending;
        pending = undefined;
        if (rollBack && raw(dataSource).inTransaction) raw(dataSource).exec('ROLLBACK');
        throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR_WRITE' });
      }
      return query(sql, ...rest);
    }) as typeof runner.query;
    return (statement: RegExp, rollBack: boolean) => (pending = { statement, rollBack });
  }

  const operation = fc.oneof(
    fc.record({ kind: fc.constant('star' as const), payload: fc.integer({ min: 0, max: 6000 }) }),
    fc.constant({ kind: 'unstar' as const }),
  );
  const batch = fc.record({
    operations: fc.array(operation, { minLength: 1, maxLength: 12 }),
    fault: fc.constantFrom<Fault>('none', 'full', 'commit-open', 'commit-rolled-back', 'release', 'rollback'),
  });

  it('keeps every acknowledged write and no unacknowledged one', async () => {
    let round = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(batch, { minLength: 1, maxLength: 8 }), async (batches) => {
        const file = path.join(directory, `round-${round++}.db`);
        let dataSource = await open(file);
        await dataSource.query('CREATE TABLE star (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)');
        await dataSource.query('CREATE TABLE repository (id INTEGER PRIMARY KEY, stars_count INTEGER NOT NULL)');
        await dataSource.query('INSERT INTO repository (id, stars_count) VALUES (1, 0)');
        const transactions = new Transactions(dataSource);
        transactions.clock = () => 0;
        const inject = injectFaults(dataSource);
        const basePages = Number(raw(dataSource).pragma('page_count', { simple: true }));
        // What the callers were told: ids whose star (or unstar) resolved.
        const starred = new Set<number>();
        let nextId = 1;
        const star = (tx: EntityManager, id: number, payload: number) =>
          changeRows(tx, 'INSERT INTO star (id, payload) VALUES (?, ?)', [id, Buffer.alloc(payload, id % 251)]).then(() =>
            changeRows(tx, 'UPDATE repository SET stars_count = stars_count + 1 WHERE id = 1', []),
          );
        const unstar = async (tx: EntityManager, id: number) => {
          if ((await changeRows(tx, 'DELETE FROM star WHERE id = ?', [id])) !== 1) throw new Error(`star ${id} missing`);
          await changeRows(tx, 'UPDATE repository SET stars_count = stars_count - 1 WHERE id = 1', []);
        };
        const check = async (source: DataSource) => {
          const rows = ((await source.query('SELECT id FROM star ORDER BY id')) as { id: number }[]).map((row) => row.id);
          expect(rows).toEqual([...starred].sort((a, b) => a - b));
          const [{ stars_count }] = (await source.query('SELECT stars_count FROM repository WHERE id = 1')) as { stars_count: number }[];
          expect(stars_count).toBe(rows.length);
        };

        for (const { operations, fault } of batches) {
          // The page budget: room for the rows there are, and some of the batch's, or not all of them.
          raw(dataSource).pragma(
            `max_page_count = ${fault === 'full' ? Number(raw(dataSource).pragma('page_count', { simple: true })) + 1 : basePages + 100000}`,
          );
          if (fault === 'commit-open') inject(/^COMMIT$/, false);
          if (fault === 'commit-rolled-back') inject(/^COMMIT$/, true);
          if (fault === 'release') inject(/^RELEASE SAVEPOINT/, true);
          if (fault === 'rollback') inject(/^ROLLBACK TO SAVEPOINT/, false);
          const unstarable = [...starred];
          const calls = operations.map((op) => {
            if (op.kind === 'unstar' && unstarable.length > 0) {
              const id = unstarable.shift()!;
              return transactions.run((tx) => unstar(tx, id)).then(() => () => starred.delete(id));
            }
            const id = nextId++;
            const payload = op.kind === 'star' ? op.payload : 0;
            // A work that fails on its own (a refusal) must be rolled back alone, also under the faults.
            if (payload % 7 === 3) {
              return transactions.run(async (tx) => {
                await star(tx, id, payload);
                throw new Error('refused');
              });
            }
            return transactions.run((tx) => star(tx, id, payload)).then(() => () => starred.add(id));
          });
          const outcomes = await Promise.allSettled(calls);
          for (const outcome of outcomes) if (outcome.status === 'fulfilled' && outcome.value) outcome.value();
          expect(raw(dataSource).inTransaction).toBe(false);
          await check(dataSource);
        }
        // After everything, with room again and no fault pending: a write goes through and is kept.
        inject(/^(?!)/, false);
        raw(dataSource).pragma(`max_page_count = ${basePages + 100000}`);
        const id = nextId++;
        await transactions.run((tx) => star(tx, id, 10));
        starred.add(id);
        await check(dataSource);
        await dataSource.destroy();
        dataSource = await open(file);
        await check(dataSource);
        await dataSource.destroy();
      }),
      { numRuns: 40 },
    );
  });
});
