import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import fc from 'fast-check';
import { DataSource, EntityManager } from 'typeorm';
import { changeRows, Transactions } from '../../src/database/transactions';
import { fillToTheBrim } from './support/fill-disk';

/**
 * The transaction helper on a SQLite database in a tiny tmpfs that fills up and empties again under it, with
 * no injected error: the disk itself answers SQLITE_FULL (or SQLITE_IOERR) to statements and COMMITs. Whatever
 * the order, every star whose `run` resolved is in the database, now and after reopening it; none whose `run`
 * rejected is; the counter moved in the same transaction equals the rows.
 */
describe('Transactions on SQLite on a disk that fills up (property, tmpfs)', () => {
  let mountPoint: string;

  beforeAll(() => {
    if (process.getuid?.() !== 0) throw new Error('this fault test mounts a tmpfs and needs root: run the fault suite as root (CI does)');
    mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-fault-sqlite-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m', 'tmpfs', mountPoint]);
  });
  afterAll(() => {
    if (!mountPoint) return;
    execFileSync('umount', ['-l', mountPoint]);
    fs.rmSync(mountPoint, { recursive: true, force: true });
  });

  const step = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({ kind: fc.constant('star' as const), payloads: fc.array(fc.integer({ min: 0, max: 48 * 1024 }), { minLength: 1, maxLength: 10 }) }),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'unstar' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'fill' as const }) },
    { weight: 1, arbitrary: fc.constant({ kind: 'free' as const }) },
  );

  it('keeps every acknowledged write and no unacknowledged one', async () => {
    let round = 0;
    const failures = new Set<string>();
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 2, maxLength: 10 }), async (steps) => {
        const file = path.join(mountPoint, `round-${round}.db`);
        const filler = path.join(mountPoint, `filler-${round++}`);
        let dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
        await dataSource.initialize();
        try {
          await dataSource.query('CREATE TABLE star (id INTEGER PRIMARY KEY, payload BLOB NOT NULL)');
          await dataSource.query('CREATE TABLE repository (id INTEGER PRIMARY KEY, stars_count INTEGER NOT NULL)');
          await dataSource.query('INSERT INTO repository (id, stars_count) VALUES (1, 0)');
          const transactions = new Transactions(dataSource);
          transactions.clock = () => 0;
          const starred = new Set<number>();
          let nextId = 1;
          const check = async (source: DataSource) => {
            const rows = ((await source.query('SELECT id FROM star ORDER BY id')) as { id: number }[]).map((row) => row.id);
            expect(rows).toEqual([...starred].sort((a, b) => a - b));
            const [{ stars_count }] = (await source.query('SELECT stars_count FROM repository WHERE id = 1')) as { stars_count: number }[];
            expect(stars_count).toBe(rows.length);
          };
          for (const current of steps) {
            if (current.kind === 'fill') fillToTheBrim(filler, { flags: 'a', firstPiece: 256 * 1024, byte: 1 });
            if (current.kind === 'free') fs.rmSync(filler, { force: true });
            if (current.kind !== 'star' && current.kind !== 'unstar') continue;
            const calls =
              current.kind === 'star'
                ? current.payloads.map((size) => {
                    const id = nextId++;
                    return transactions
                      .run(async (tx: EntityManager) => {
                        await changeRows(tx, 'INSERT INTO star (id, payload) VALUES (?, ?)', [id, Buffer.alloc(size, id % 251)]);
                        await changeRows(tx, 'UPDATE repository SET stars_count = stars_count + 1 WHERE id = 1', []);
                      })
                      .then(() => () => starred.add(id));
                  })
                : [...starred].slice(0, 3).map((id) =>
                    transactions
                      .run(async (tx: EntityManager) => {
                        await changeRows(tx, 'DELETE FROM star WHERE id = ?', [id]);
                        await changeRows(tx, 'UPDATE repository SET stars_count = stars_count - 1 WHERE id = 1', []);
                      })
                      .then(() => () => starred.delete(id)),
                  );
            for (const outcome of await Promise.allSettled(calls)) {
              if (outcome.status === 'fulfilled') outcome.value();
              else failures.add(String((outcome.reason as { code?: string }).code ?? (outcome.reason as Error).message));
            }
            await check(dataSource);
          }
          fs.rmSync(filler, { force: true });
          await dataSource.destroy();
          dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
          await dataSource.initialize();
          await check(dataSource);
        } finally {
          if (dataSource.isInitialized) await dataSource.destroy();
          fs.rmSync(filler, { force: true });
          for (const suffix of ['', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
        }
      }),
      { numRuns: 25 },
    );
    // The disk did refuse writes, in SQLite's words for it.
    expect([...failures].some((code) => /^SQLITE_(FULL|IOERR)/.test(code))).toBe(true);
  });
});
