import { AsyncLocalStorage } from 'node:async_hooks';
import { DataSource, EntityManager } from 'typeorm';
import { changeRows, Transactions } from './transactions';

/** What the audit log relies on: steps registered in a transaction run after its commit, never after a rollback. */
describe('Transactions.afterCommit on SQLite (group commit)', () => {
  let dataSource: DataSource;
  let transactions: Transactions;
  const insert = (tx: EntityManager, id: number) => changeRows(tx, 'INSERT INTO item (id) VALUES (?)', [id]);

  beforeEach(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE item (id INTEGER PRIMARY KEY)');
    transactions = new Transactions(dataSource);
    transactions.clock = () => 0;
  });
  afterEach(() => dataSource.destroy());

  it('runs the steps of committed works after their commit, and drops those of a work rolled back', async () => {
    const ran: string[] = [];
    const outcomes = await Promise.allSettled(
      [1, 2, 1].map((id, index) =>
        transactions.run(async (tx) => {
          await insert(tx, id);
          Transactions.afterCommit(() => ran.push(`work ${index}`));
          ran.push(`wrote ${index}`);
        }),
      ),
    );
    // The third work fails on the duplicate key: its savepoint is rolled back, its step never runs.
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'fulfilled', 'rejected']);
    expect(ran.filter((entry) => entry.startsWith('work'))).toEqual(['work 0', 'work 1']);
    // Every step ran after every write of its group: after the COMMIT.
    expect(ran.indexOf('work 0')).toBeGreaterThan(ran.indexOf('wrote 1'));
  });

  it('runs a step at once outside any transaction', () => {
    const ran: string[] = [];
    Transactions.afterCommit(() => ran.push('now'));
    expect(ran).toEqual(['now']);
  });

  it('runs each work in its caller’s async context, though the group is drained by whoever started it', async () => {
    const caller = new AsyncLocalStorage<string>();
    const seen = await Promise.all(
      ['alice', 'bob', 'carol'].map((name, index) =>
        caller.run(name, () =>
          transactions.run(async (tx) => {
            await insert(tx, index + 10);
            return caller.getStore();
          }),
        ),
      ),
    );
    expect(seen).toEqual(['alice', 'bob', 'carol']);
  });
});
