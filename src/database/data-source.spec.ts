import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase } from './data-source';

describe('the SQLite database as opened', () => {
  it('syncs its log at every commit (synchronous FULL), under WAL, with foreign keys enforced', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-sqlite-'));
    const dataSource = await openDatabase({ database: { type: 'sqlite', file: path.join(directory, 'anvil.db') } as never });
    try {
      // 2 is FULL; the driver's own default under WAL is 1 (NORMAL), which loses commits when the machine stops.
      expect(await dataSource.query('PRAGMA synchronous')).toEqual([{ synchronous: 2 }]);
      expect(await dataSource.query('PRAGMA journal_mode')).toEqual([{ journal_mode: 'wal' }]);
      expect(await dataSource.query('PRAGMA foreign_keys')).toEqual([{ foreign_keys: 1 }]);
    } finally {
      await dataSource.destroy();
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
