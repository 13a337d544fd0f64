import { RepositoryStore } from '../../src/repos/repository.store';
import { RowReader } from '../../src/database/row-reader';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Every request on `{owner}/{repo}` looks the repository up by its names (with the caller's grants when signed
 * in). The same lookups asked together are sent as one statement (src/database/unsent-reads.ts):
 * each caller still gets its own answer, its own objects, and nothing older than its asking.
 */
describe('repository lookups asked together', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    other = await makeUser(t);
    base = await t.listen();
  });
  afterAll(() => t.close());

  it('are read once per caller, each asker getting objects of its own', async () => {
    const repo = await makeRepo(t, owner);
    const store = t.app.get(RepositoryStore);
    const statements = jest.spyOn(RowReader.prototype, 'rows');
    try {
      const [anonymous, again, signedIn] = await Promise.all([
        store.findWithOwnerByNames(owner.name, repo.name),
        store.findWithOwnerByNames(owner.name.toUpperCase(), repo.name.toUpperCase()),
        store.findWithOwnerByNames(owner.name, repo.name, other.user.id),
      ]);
      // Only the lookups: the server's background work may read meanwhile.
      const lookups = statements.mock.calls.filter(([sql]) => sql.includes('JOIN repository r ON r.owner_id = o.id'));
      expect(lookups).toHaveLength(2);
      expect(again).toEqual(anonymous);
      expect(again!.repo).not.toBe(anonymous!.repo);
      anonymous!.repo.name = 'changed by one caller';
      expect(again!.repo.name).toBe(repo.name);
      expect(anonymous!.grants).toBeNull();
      expect(signedIn!.grants).toEqual({ orgMember: false, teams: [], collaboration: null });
    } finally {
      statements.mockRestore();
    }
  });

  it('answer each caller of one round by its own rights, and see a change made just before', async () => {
    const repo = await makeRepo(t, owner, { private: true });
    const url = `${base}api/v1/repos/${owner.name}/${repo.name}`;
    const ask = (token?: string) => fetch(url, { headers: token ? withToken(token) : {} }).then((response) => response.status);
    const callers = [owner.token, undefined, other.token, owner.token, undefined, other.token];
    expect(await Promise.all(callers.map(ask))).toEqual([200, 404, 404, 200, 404, 404]);
    const setPrivate = (value: boolean) =>
      t.http
        .patch(t.api(`/repos/${owner.name}/${repo.name}`))
        .set(withToken(owner.token))
        .send({ private: value })
        .expect(200);
    await setPrivate(false);
    expect(await Promise.all(callers.map(ask))).toEqual([200, 200, 200, 200, 200, 200]);
    await setPrivate(true);
    expect(await Promise.all(callers.map(ask))).toEqual([200, 404, 404, 200, 404, 404]);
  });
});
