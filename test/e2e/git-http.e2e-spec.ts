import * as fs from 'node:fs';
import * as path from 'node:path';
import { GitClient, withCredentials } from '../support/git-client';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('git over smart HTTP', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    alice = await makeUser(t);
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('pushes into an empty repository, which then has a default branch, a size and a new update time', async () => {
    const repo = await makeRepo(t, alice, { name: 'first' });
    expect(repo.empty).toBe(true);
    const work = await client.workingCopy('trunk');
    const url = withCredentials(base, `${alice.name}/first.git`, alice.name, alice.password);
    const pushed = await client.run(['push', url, 'trunk'], { cwd: work });
    expect(pushed).toMatchObject({ code: 0 });
    const after = await t.http.get(t.api(`/repos/${alice.name}/first`)).set(withToken(alice.token));
    expect(after.body).toMatchObject({ empty: false, default_branch: 'trunk' });
    expect(after.body.size).toBeGreaterThanOrEqual(0);
    const clone = path.join(client.home, 'clone-first');
    await client.ok(['clone', '--quiet', url, clone]);
    expect(fs.readFileSync(path.join(clone, 'README.md'), 'utf8')).toBe('hello\n');
  });
});
