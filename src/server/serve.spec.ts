import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { loadConfig } from '../config/config';
import { assertWritableDataDir, startupFailure, startupLine, StartupError } from './serve';

describe('start-up', () => {
  it('says in one line where Anvil listens and keeps its data, never a database password', () => {
    const config = loadConfig({ DATA_DIR: '/srv/anvil', DATABASE_URL: 'mysql://anvil:s3cret@db:3306/anvil', ROOT_URL: 'https://git.example.com/' });
    const line = startupLine({ version: '2.0.0', http: '[::]:3000', rootUrl: config.rootUrl, dataDir: config.dataDir, database: config.database });
    expect(line).toBe('Anvil 2.0.0 listening: HTTP on [::]:3000; ROOT_URL https://git.example.com/; data directory /srv/anvil; database MySQL db:3306/anvil');
    expect(line).not.toContain('s3cret');
    expect(
      startupLine({
        version: '2.0.0',
        http: '[::]:3000',
        ssh: '[::]:2222',
        rootUrl: config.rootUrl,
        dataDir: '/d',
        database: { type: 'sqlite', file: '/d/anvil.db' },
      }),
    ).toContain('HTTP on [::]:3000, SSH on [::]:2222;');
  });

  it('words an unreachable database, and keeps the stack only for failures nobody foresaw', () => {
    const config = loadConfig({ DATABASE_URL: 'mysql://root@127.0.0.1:3999/anvil' });
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3999'), { code: 'ECONNREFUSED' });
    const worded = startupFailure(refused, config) as StartupError;
    expect(worded.message).toBe('cannot reach the database (MySQL 127.0.0.1:3999/anvil): connect ECONNREFUSED 127.0.0.1:3999');
    expect(worded.unforeseen).toBe(false);
    const bug = startupFailure(new Error('undefined is not a function\n    at somewhere'), config) as StartupError;
    expect(bug.message).toBe('start-up failed: undefined is not a function');
    expect(bug.unforeseen).toBe(true);
  });

  it('refuses a DATA_DIR it cannot write, and creates a missing one', () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-datadir-'));
    try {
      const file = path.join(root, 'a-file');
      fs.writeFileSync(file, '');
      expect(() => assertWritableDataDir(path.join(file, 'data'))).toThrow(/^DATA_DIR .*a-file\/data is not a writable directory: ENOTDIR/);
      assertWritableDataDir(path.join(root, 'new', 'data'));
      expect(fs.readdirSync(path.join(root, 'new', 'data'))).toEqual([]);
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
