import { DataSource, EntityManager } from 'typeorm';
import { TransactionLostError } from '../common/dependency-errors';
import { changeRows, insertUnlessPresent, Transactions } from './transactions';

/** SQLite group commit: what the callers of Transactions.run can rely on, on a real (in-memory) database. */
describe('Transactions on SQLite (group commit)', () => {
  let dataSource: DataSource;
  let transactions: Transactions;
  let statements: string[];

  const insert = (tx: EntityManager, id: number) => changeRows(tx, insertUnlessPresent(tx, 'item', ['id']), [id]);
  const ids = async () => ((await dataSource.query('SELECT id FROM item ORDER BY id')) as { id: number }[]).map((row) => row.id);

  beforeEach(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE item (id INTEGER PRIMARY KEY)');
    transactions = new Transactions(dataSource);
    // A stopped clock: a group is never cut short by its duration, however slow the machine.
    transactions.clock = () => 0;
    statements = [];
    const runner = dataSource.createQueryRunner();
    const query = runner.query.bind(runner);
    jest.spyOn(runner, 'query').mockImplementation((sql: string, ...rest: unknown[]) => {
      statements.push(sql);
      return (query as (sql: string, ...rest: unknown[]) => Promise<unknown>)(sql, ...rest);
    });
  });

  afterEach(async () => {
    jest.restoreAllMocks();
    await dataSource.destroy();
  });

  it('runs transactions queued together under one COMMIT, each in its own savepoint, and returns each result', async () => {
    const results = await Promise.all([1, 2, 3].map((id) => transactions.run((tx) => insert(tx, id))));
    expect(results).toEqual([1, 1, 1]);
    expect(statements.filter((sql) => sql === 'COMMIT')).toHaveLength(1);
    expect(statements.filter((sql) => sql.startsWith('SAVEPOINT'))).toHaveLength(3);
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it('starts a new group once a group has run longer than its time budget (on the injected clock)', async () => {
    let now = 0;
    transactions.clock = () => now;
    const results = await Promise.all(
      [1, 2, 3].map((id) =>
        transactions.run(async (tx) => {
          const inserted = await insert(tx, id);
          now += 6; // each work takes 6 ms on this clock: the third starts after 12 ms, past the 10 ms budget
          return inserted;
        }),
      ),
    );
    expect(results).toEqual([1, 1, 1]);
    expect(statements.filter((sql) => sql === 'COMMIT')).toHaveLength(2);
    expect(await ids()).toEqual([1, 2, 3]);
  });

  it('rolls back a failing transaction alone: its caller gets its error, the others of the group are kept', async () => {
    const outcomes = await Promise.allSettled([
      transactions.run((tx) => insert(tx, 1)),
      transactions.run(async (tx) => {
        await insert(tx, 2);
        throw new Error('refused');
      }),
      transactions.run((tx) => insert(tx, 3)),
    ]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toEqual(new Error('refused'));
    expect(await ids()).toEqual([1, 3]);
  });

  it('answers a caller only once its group is committed', async () => {
    let activeWhenAnswered: boolean | undefined;
    await transactions
      .run((tx) => insert(tx, 1))
      .then(() => {
        activeWhenAnswered = dataSource.createQueryRunner().isTransactionActive;
      });
    expect(activeWhenAnswered).toBe(false);
    expect(statements.indexOf('COMMIT')).toBeGreaterThan(-1);
  });

  it('commits a group of bookkeeping alone without syncing, a group with a durable transaction with, and FULL between', async () => {
    await dataSource.query('PRAGMA synchronous = FULL');
    const level = async (tx: EntityManager) => ((await tx.query('PRAGMA synchronous')) as { synchronous: number }[])[0].synchronous;
    // 1 is NORMAL (no sync at COMMIT under WAL), 2 is FULL.
    expect(await Promise.all([transactions.runBookkeeping(level), transactions.runBookkeeping(level)])).toEqual([1, 1]);
    expect(await level(dataSource.manager)).toBe(2);
    expect(await Promise.all([transactions.runBookkeeping(level), transactions.run(level)])).toEqual([2, 2]);
    expect(await transactions.run(level)).toBe(2);
    await expect(transactions.runBookkeeping(async (tx) => insert(tx, 7))).resolves.toBe(1);
    expect(await ids()).toEqual([7]);
    expect(await level(dataSource.manager)).toBe(2);
  });

  it('fails the callers of bookkeeping when the connection closes before or during their group, and goes no further', async () => {
    const closing = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await closing.initialize();
    await closing.query('CREATE TABLE item (id INTEGER PRIMARY KEY)');
    const own = new Transactions(closing);
    const during = own.runBookkeeping(async (tx) => {
      await insert(tx, 1);
      await closing.destroy();
      return 1;
    });
    await expect(during).rejects.toThrow(TransactionLostError);
    await expect(own.runBookkeeping((tx) => insert(tx, 2))).rejects.toThrow(/not open/);
  });

  it('runs a transaction queued during a group in a later group', async () => {
    let later: Promise<number> | undefined;
    await transactions.run(async (tx) => {
      later = transactions.run((inner) => insert(inner, 2));
      return insert(tx, 1);
    });
    await expect(later).resolves.toBe(1);
    expect(statements.filter((sql) => sql === 'COMMIT')).toHaveLength(2);
    expect(await ids()).toEqual([1, 2]);
  });

  it('fails every caller of a group whose COMMIT fails, keeps nothing of it, and goes on with the next group', async () => {
    const runner = dataSource.createQueryRunner();
    const commit = runner.commitTransaction.bind(runner);
    let failed = false;
    jest.spyOn(runner, 'commitTransaction').mockImplementation(async () => {
      // The outer COMMIT (depth 1) of the first group only; savepoint releases pass.
      if (!failed && (runner as unknown as { transactionDepth: number }).transactionDepth === 1) {
        failed = true;
        throw new Error('disk I/O error');
      }
      return commit();
    });
    const outcomes = await Promise.allSettled([1, 2].map((id) => transactions.run((tx) => insert(tx, id))));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    expect(await ids()).toEqual([]);
    await expect(transactions.run((tx) => insert(tx, 3))).resolves.toBe(1);
    expect(await ids()).toEqual([3]);
  });

  it('keeps a write of its own out of a group whose work fails meanwhile, and answers it after a commit', async () => {
    await transactions.run((tx) => insert(tx, 2));
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    // A work that holds the group open, then fails: its savepoint is rolled back.
    const failing = transactions.run(async (tx) => {
      await insert(tx, 1);
      entered();
      await gate;
      throw new Error('conflict');
    });
    await inside;
    let answered = false;
    const removal = transactions
      .write((tx) => changeRows(tx, 'DELETE FROM item WHERE id = ?', [2]))
      .then((count) => {
        answered = true;
        return count;
      });
    // Sent straight to the connection, the statement ran inside the open group and was answered at once.
    await new Promise((resolve) => setImmediate(resolve));
    expect(answered).toBe(false);
    release();
    await expect(failing).rejects.toThrow('conflict');
    expect(await removal).toBe(1);
    expect(await ids()).toEqual([]);
    // Inside a transaction's work it runs there (queued, it would wait for the group that waits for it).
    expect(await transactions.run((tx) => transactions.write(() => insert(tx, 3)))).toBe(1);
    expect(await ids()).toEqual([3]);
  });

  it('queues a write of a task that a finished work left running, as any other', async () => {
    let left!: Promise<number>;
    let entered!: () => void;
    const inside = new Promise<void>((resolve) => (entered = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    await transactions.run(async () => {
      // Started inside the work, it writes once the work is over, while another group is open.
      left = (async () => {
        await inside;
        return transactions.write((tx) => insert(tx, 5));
      })();
    });
    const failing = transactions.run(async (tx) => {
      await insert(tx, 4);
      entered();
      await gate;
      throw new Error('conflict');
    });
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await expect(failing).rejects.toThrow('conflict');
    expect(await left).toBe(1);
    expect(await ids()).toEqual([5]);
  });

  it('inserts nothing and reports 0 rows for a key already there', async () => {
    expect(await transactions.run((tx) => insert(tx, 7))).toBe(1);
    expect(await transactions.run((tx) => insert(tx, 7))).toBe(0);
    expect(await ids()).toEqual([7]);
  });
});
