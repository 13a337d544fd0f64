import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { DataSource } from 'typeorm';
import { Transactions } from './transactions';

interface SqliteHandle {
  exec(sql: string): void;
  pragma(sql: string): unknown;
  close(): void;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Database = require('better-sqlite3') as new (file: string) => SqliteHandle;

/** Another process (a second instance, the CLI) writing to the same SQLite file while a group is under way. */
describe('Transactions on SQLite shared with another process', () => {
  let directory: string;
  let dataSource: DataSource;
  let other: SqliteHandle;

  beforeEach(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-tx-'));
    const file = path.join(directory, 'anvil.db');
    dataSource = new DataSource({ type: 'better-sqlite3', database: file, enableWAL: true });
    await dataSource.initialize();
    await dataSource.query('CREATE TABLE item (id INTEGER PRIMARY KEY)');
    other = new Database(file);
    // No waiting: the other writer either gets the lock at once or is told it is busy.
    other.pragma('busy_timeout = 0');
  });

  afterEach(async () => {
    other.close();
    await dataSource.destroy();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  it('holds the write lock from BEGIN, so a write after a read never fails because another process wrote between', async () => {
    const transactions = new Transactions(dataSource);
    transactions.clock = () => 0;
    let otherOutcome = '';
    await transactions.run(async (tx) => {
      await tx.query('SELECT COUNT(*) AS n FROM item');
      try {
        other.exec('INSERT INTO item (id) VALUES (100)');
        otherOutcome = 'written';
      } catch (error) {
        otherOutcome = (error as { code?: string }).code ?? 'error';
      }
      // With a deferred BEGIN the other process's commit above would make this write fail with SQLITE_BUSY.
      await tx.query('INSERT INTO item (id) VALUES (1)');
    });
    expect(otherOutcome).toBe('SQLITE_BUSY');
    expect(((await dataSource.query('SELECT id FROM item ORDER BY id')) as { id: number }[]).map((row) => row.id)).toEqual([1]);
    other.exec('INSERT INTO item (id) VALUES (100)');
  });
});
