import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeUser, TestUser, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 12, suspicion 1: a repository deleted and created again under the same name while the deletion is
 * between its row and its directory must not lose the new repository's directory.
 */
describe('delete and re-create under the same name', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  it('a repository created while the old one is being deleted keeps its directory', async () => {
    const create = () => t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name: 'phoenix', auto_init: true });
    for (let round = 0; round < 12; round++) {
      await create().expect(201);
      // The creation retries until the deletion's row is gone, so it lands as close behind it as it can.
      const deletion = t.http.delete(t.api(`/repos/${owner.name}/phoenix`)).set(withToken(owner.token)).then((response) => response.status);
      let created;
      do created = await create();
      while (created.status === 409);
      expect(await deletion).toBe(204);
      expect(created.status).toBe(201);
      const dir = repositoryDir(t.dataDir, owner.name, 'phoenix');
      expect(fs.existsSync(path.join(dir, 'HEAD'))).toBe(true);
      expect(git(dir, 'rev-parse', 'refs/heads/main')).toMatch(/^[0-9a-f]{40}/);
      await t.http.delete(t.api(`/repos/${owner.name}/phoenix`)).set(withToken(owner.token)).expect(204);
    }
  });
});
