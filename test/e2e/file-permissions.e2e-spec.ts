import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeRepo, makeUser } from '../support/factories';
import { repositoryDir } from '../support/git';
import { startTestApp, TestApp, usesMysql } from '../support/test-app';

/** The data directory, the database and repositories are not readable by other users. */
describe('files on disk are private to the server', () => {
  let t: TestApp;
  let dataDir: string;
  const previousUmask = process.umask();

  beforeAll(async () => {
    // As a server started under the usual umask 022, into a data directory made world-readable beforehand.
    process.umask(0o022);
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-perm-'));
    fs.chmodSync(dataDir, 0o755);
    t = await startTestApp({ DATA_DIR: dataDir });
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.umask(previousUmask);
  });

  const othersMayRead = (file: string) => (fs.statSync(file).mode & 0o077) !== 0;

  it('makes the data directory 0700 and creates the database and private repositories without group or other access', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { name: 'secret', private: true, autoInit: true });
    expect(fs.statSync(dataDir).mode & 0o777).toBe(0o700);
    if (!usesMysql()) expect(othersMayRead(path.join(dataDir, 'anvil.db'))).toBe(false);
    const dir = repositoryDir(dataDir, owner.name, repo.name);
    const walk = (at: string): string[] => [at, ...(fs.statSync(at).isDirectory() ? fs.readdirSync(at).flatMap((entry) => walk(path.join(at, entry))) : [])];
    const readable = walk(path.join(dataDir, 'repositories')).filter(othersMayRead);
    expect(walk(dir).length).toBeGreaterThan(5);
    expect(readable).toEqual([]);
  });
});
