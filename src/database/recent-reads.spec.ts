import { DataSource } from 'typeorm';
import { queryKey, RecentReads } from './recent-reads';
import { changeRows, Transactions } from './transactions';

/** Answers kept for the same question: never older than a write this process acknowledged, nor than their lifetime. */
describe('RecentReads', () => {
  let dataSource: DataSource;
  let transactions: Transactions;
  let now: number;
  let reads: number;

  /** The row as a read sees it, counting the reads that really ran. */
  const readRow = async () => {
    reads++;
    const [row] = (await dataSource.query('SELECT value FROM item WHERE id = 1')) as { value: string }[];
    return { value: row.value };
  };
  const write = (value: string) => transactions.run((tx) => changeRows(tx, 'UPDATE item SET value = ? WHERE id = 1', [value]));
  const cache = (ttlMs = 1000, capacity = 8) => {
    const made = new RecentReads<{ value: string }>(transactions, ttlMs, capacity);
    made.clock = () => now;
    return made;
  };

  beforeEach(async () => {
    dataSource = new DataSource({ type: 'better-sqlite3', database: ':memory:' });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE item (id INTEGER PRIMARY KEY, value TEXT NOT NULL)');
    await dataSource.query("INSERT INTO item (id, value) VALUES (1, 'a')");
    transactions = new Transactions(dataSource);
    transactions.clock = () => 0;
    now = 0;
    reads = 0;
  });

  afterEach(() => dataSource.destroy());

  it('answers the same question again without reading while nothing was written', async () => {
    const recent = cache();
    const first = await recent.get('k', readRow);
    now = 400;
    expect(await recent.get('k', readRow)).toBe(first);
    expect(reads).toBe(1);
    expect(await recent.get('other', readRow)).toEqual({ value: 'a' });
    expect(reads).toBe(2);
  });

  it('reads again once a write of this process has been acknowledged', async () => {
    const recent = cache();
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    await write('b');
    expect(await recent.get('k', readRow)).toEqual({ value: 'b' });
    expect(reads).toBe(2);
  });

  it('reads again after a write that failed: a failed commit may have written', async () => {
    const recent = cache();
    await recent.get('k', readRow);
    await expect(
      transactions.run(async (tx) => {
        await changeRows(tx, 'UPDATE item SET value = ? WHERE id = 1', ['rolled back']);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    await recent.get('k', readRow);
    expect(reads).toBe(2);
  });

  it('keeps its answers through bookkeeping said to write nothing they show, not through other bookkeeping', async () => {
    const recent = cache();
    await recent.get('k', readRow);
    await transactions.runBookkeeping((tx) => changeRows(tx, 'UPDATE item SET value = ? WHERE id = 2', ['x']), { unseen: true });
    await recent.get('k', readRow);
    expect(reads).toBe(1);
    await transactions.runBookkeeping((tx) => changeRows(tx, 'UPDATE item SET value = ? WHERE id = 1', ['b']));
    expect(await recent.get('k', readRow)).toEqual({ value: 'b' });
  });

  it('does not keep an answer read while a write was committing', async () => {
    const recent = cache();
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const slow = recent.get('k', async () => {
      const answer = await readRow();
      await gate;
      return answer;
    });
    // The read has its row ('a'); the write commits before the read's answer is given.
    await new Promise((resolve) => setImmediate(resolve));
    await write('b');
    release();
    expect(await slow).toEqual({ value: 'a' });
    expect(await recent.get('k', readRow)).toEqual({ value: 'b' });
  });

  it('reads again once an answer is older than its lifetime (a write of another instance shows by then)', async () => {
    const recent = cache(1000);
    await recent.get('k', readRow);
    // Written by someone else (another instance, SQL from outside): this process's generation does not move.
    await dataSource.query("UPDATE item SET value = 'c' WHERE id = 1");
    now = 999;
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    now = 1000;
    expect(await recent.get('k', readRow)).toEqual({ value: 'c' });
  });

  it('reads anew beside a kept answer asked in its second half, and answers with the new one once read', async () => {
    const recent = cache(1000);
    await recent.get('k', readRow);
    await dataSource.query("UPDATE item SET value = 'c' WHERE id = 1");
    now = 499;
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    expect(reads).toBe(1);
    now = 500;
    // Still the kept answer (it is within its lifetime), with one read started beside it.
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    expect(reads).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    now = 900;
    expect(await recent.get('k', readRow)).toEqual({ value: 'c' });
    expect(reads).toBe(2);
  });

  it('answers with the renewal under way once the kept answer expires, rather than reading a third time', async () => {
    const recent = cache(1000);
    await recent.get('k', readRow);
    let finish: (value: { value: string }) => void = () => undefined;
    const slow = () => {
      reads++;
      return new Promise<{ value: string }>((resolve) => (finish = resolve));
    };
    now = 600;
    expect(await recent.get('k', slow)).toEqual({ value: 'a' });
    expect(reads).toBe(2);
    // Past the kept answer's lifetime, within the renewal's (begun at 600): the renewal answers once read.
    now = 1200;
    const waiting = recent.get('k', readRow);
    finish({ value: 'renewed' });
    expect(await waiting).toEqual({ value: 'renewed' });
    expect(reads).toBe(2);
    // Past the renewal's lifetime too: read again.
    now = 1600;
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    expect(reads).toBe(3);
  });

  it('tries a failed renewal again, and answers with the kept answer meanwhile', async () => {
    const recent = cache(1000);
    await recent.get('k', readRow);
    now = 600;
    expect(await recent.get('k', () => Promise.reject(new Error('database gone')))).toEqual({ value: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    now = 700;
    await dataSource.query("UPDATE item SET value = 'c' WHERE id = 1");
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(reads).toBe(2);
    now = 1100;
    expect(await recent.get('k', readRow)).toEqual({ value: 'c' });
    expect(reads).toBe(2);
  });

  it('freezes what it keeps, deeply', async () => {
    const recent = new RecentReads<{ items: { title: string }[] }>(transactions, 1000, 8);
    const answer = await recent.get('k', async () => ({ items: [{ title: 'a' }] }));
    expect(Object.isFrozen(answer) && Object.isFrozen(answer.items) && Object.isFrozen(answer.items[0])).toBe(true);
  });

  it('lets concurrent requests for one key wait for one read', async () => {
    const recent = cache();
    const answers = await Promise.all([1, 2, 3].map(() => recent.get('k', readRow)));
    expect(reads).toBe(1);
    expect(new Set(answers).size).toBe(1);
  });

  it('keeps no failed read', async () => {
    const recent = cache();
    await expect(recent.get('k', () => Promise.reject(new Error('database gone')))).rejects.toThrow('database gone');
    expect(await recent.get('k', readRow)).toEqual({ value: 'a' });
    expect(recent.size).toBe(1);
  });

  it('keeps at most its capacity, and nothing with a lifetime of 0', async () => {
    const bounded = cache(1000, 2);
    for (const key of ['a', 'b', 'c']) await bounded.get(key, readRow);
    expect(bounded.size).toBe(2);
    const off = cache(0);
    await off.get('k', readRow);
    await off.get('k', readRow);
    expect(off.size).toBe(0);
    expect(reads).toBe(5);
  });
});

describe('queryKey', () => {
  it('names the parameters in order, without paging or credentials', () => {
    expect(queryKey({ state: 'open', labels: 'bug', page: '2', limit: '5', token: 'secret', access_token: 'secret' })).toBe(
      queryKey({ labels: 'bug', state: 'open' }),
    );
    expect(queryKey({ state: 'open' })).not.toBe(queryKey({ state: 'closed' }));
    expect(queryKey({ labels: 'a,b' })).not.toBe(queryKey({ labels: ['a', 'b'] }));
  });
});
