import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { openDatabase } from './data-source';

describe('schema migrations', () => {
  it('leave no tolerance of duplicate rows behind: after start-up a duplicate INSERT fails again', async () => {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-migrations-'));
    const dataSource = await openDatabase({ database: { type: 'sqlite', file: path.join(directory, 'anvil.db') } as never });
    try {
      await dataSource.query('CREATE TABLE probe (value integer NOT NULL UNIQUE)');
      await dataSource.query('INSERT INTO probe (value) VALUES (1)');
      await expect(dataSource.query('INSERT INTO probe (value) VALUES (1)')).rejects.toMatchObject({ driverError: { code: 'SQLITE_CONSTRAINT_UNIQUE' } });
    } finally {
      await dataSource.destroy();
      fs.rmSync(directory, { recursive: true, force: true });
    }
  });
});
