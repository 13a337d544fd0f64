import * as fs from 'node:fs';
import { createConnection } from 'mysql2/promise';
import { databaseUrl, startTestApp, usesMysql } from '../support/test-app';

/**
 * The tests' own support: a test app closed more than once (a test's body and its teardown), even twice at once,
 * gives back its data directory and, on MariaDB, its pooled database exactly once. A second give-back once ran
 * after the database had gone to the next test, and dropped that test's database under it.
 */
describe('test apps', () => {
  it('closed twice at once and once more, give their directory and database back once, whole', async () => {
    const t = await startTestApp();
    const url = usesMysql() ? new URL(databaseUrl(t.config)) : undefined;
    await Promise.all([t.close(), t.close()]);
    await t.close();
    expect(fs.existsSync(t.dataDir)).toBe(false);
    if (!url) return;
    const name = decodeURIComponent(url.pathname.slice(1));
    url.pathname = '/';
    const connection = await createConnection(url.toString());
    try {
      const [pooled] = await connection.query('SELECT name FROM anvil_test_pool.free WHERE name = ?', [name]);
      const [schemas] = await connection.query('SELECT schema_name AS name FROM information_schema.schemata WHERE schema_name = ?', [name]);
      expect({ pooled, schemas }).toEqual({ pooled: [{ name }], schemas: [{ name }] });
    } finally {
      await connection.end();
    }
  });
});
