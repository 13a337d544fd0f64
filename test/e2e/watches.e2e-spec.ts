import { makeOrg, makeRepo, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('watches', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const path = (owner: string, name: string) => t.api(`/repos/${owner}/${name}/subscription`);
  const watchers = async (owner: string, name: string) =>
    (
      await t.http
        .get(t.api(`/repos/${owner}/${name}`))
        .set(withToken(admin.token))
        .expect(200)
    ).body.watchers_count;
  const rows = async (sql: string) => Number((await t.dataSource.query(sql))[0].n);

  it('the creator watches; GET answers the exact WatchInfo', async () => {
    const repo = await makeRepo(t, alice);
    const response = await t.http.get(path(alice.name, repo.name)).set(withToken(alice.token)).expect(200);
    expect(response.body).toEqual({
      subscribed: true,
      ignored: false,
      reason: null,
      created_at: repo.created_at,
      url: `http://anvil.test/api/v1/repos/${alice.name}/${repo.name}/subscription`,
      repository_url: `http://anvil.test/api/v1/repos/${alice.name}/${repo.name}`,
    });
    expect(Object.keys(response.body)).toEqual(['subscribed', 'ignored', 'reason', 'created_at', 'url', 'repository_url']);
  });

  it('GET is 404 with an empty body when not watching; PUT watches (200), DELETE stops (204); both idempotent', async () => {
    const repo = await makeRepo(t, alice);
    const notWatching = await t.http.get(path(alice.name, repo.name)).set(withToken(bob.token)).expect(404);
    expect(notWatching.text).toBe('');
    const watched = await t.http.put(path(alice.name, repo.name)).set(withToken(bob.token)).expect(200);
    expect(watched.body.subscribed).toBe(true);
    expect(watched.body.repository_url).toBe(`http://anvil.test/api/v1/repos/${alice.name}/${repo.name}`);
    await t.http.put(path(alice.name, repo.name)).set(withToken(bob.token)).expect(200);
    expect(await watchers(alice.name, repo.name)).toBe(2);
    await t.http.get(path(alice.name, repo.name)).set(withToken(bob.token)).expect(200);
    const stopped = await t.http.delete(path(alice.name, repo.name)).set(withToken(bob.token)).expect(204);
    expect(stopped.text).toBe('');
    await t.http.delete(path(alice.name, repo.name)).set(withToken(bob.token)).expect(204);
    expect(await watchers(alice.name, repo.name)).toBe(1);
    await t.http.get(path(alice.name, repo.name)).set(withToken(bob.token)).expect(404);
  });

  it('does not touch the repository updated_at', async () => {
    const repo = await makeRepo(t, alice);
    await t.dataSource.query(`UPDATE repository SET updated_unix = 1000 WHERE id = ${repo.id}`);
    await t.http.put(path(alice.name, repo.name)).set(withToken(bob.token)).expect(200);
    await t.http.delete(path(alice.name, repo.name)).set(withToken(alice.token)).expect(204);
    const after = await t.http.get(t.api(`/repos/${alice.name}/${repo.name}`)).expect(200);
    expect(after.body.updated_at).toBe('1970-01-01T00:16:40Z');
    expect(after.body.watchers_count).toBe(1);
  });

  it('order: scope (403) → repository missing or invisible (404) → anonymous (401)', async () => {
    const repo = await makeRepo(t, alice);
    const hidden = await makeRepo(t, alice, { private: true });
    for (const method of ['get', 'put', 'delete'] as const) {
      await t.http[method](path(alice.name, hidden.name)).expect(404);
      await t.http[method](path(alice.name, hidden.name)).set(withToken(bob.token)).expect(404);
      await t.http[method](path(alice.name, 'no-such-repo')).expect(404);
      const anonymous = await t.http[method](path(alice.name, repo.name)).expect(401);
      expect(anonymous.body.message).toBe('token is required');
    }
    const userOnly = await makeToken(t, bob.user, ['write:user']);
    const read = await t.http.get(path(alice.name, hidden.name)).set(withToken(userOnly)).expect(403);
    expect(read.body.message).toBe('token does not have at least one of required scope(s): [read:repository]');
    const readOnly = await makeToken(t, bob.user, ['read:repository']);
    const write = await t.http.put(path(alice.name, repo.name)).set(withToken(readOnly)).expect(403);
    expect(write.body.message).toBe('token does not have at least one of required scope(s): [write:repository]');
    const publicOnly = await makeToken(t, alice.user, ['public-only', 'write:repository']);
    const limited = await t.http.put(path(alice.name, hidden.name)).set(withToken(publicOnly)).expect(403);
    expect(limited.body.message).toBe('token scope is limited to public repos');
  });

  it('org owners and admins can watch private organisation repositories', async () => {
    const org = await makeOrg(t, alice.user);
    const repo = await makeRepo(t, alice, { org: org.name, private: true });
    await t.http.put(path(org.name, repo.name)).set(withToken(admin.token)).expect(200);
    await t.http.put(path(org.name, repo.name)).set(withToken(bob.token)).expect(404);
    expect(await watchers(org.name, repo.name)).toBe(2);
  });

  describe('lists', () => {
    let carol: TestUser;
    let own: Record<string, any>;
    let secret: Record<string, any>;
    let other: Record<string, any>;

    beforeAll(async () => {
      carol = await makeUser(t);
      own = await makeRepo(t, carol);
      secret = await makeRepo(t, carol, { private: true });
      other = await makeRepo(t, bob);
      await t.http.put(path(bob.name, other.name)).set(withToken(carol.token)).expect(200);
    });

    it('GET /user/subscriptions lists watched repositories, private ones included, oldest watch first', async () => {
      const response = await t.http.get(t.api('/user/subscriptions')).set(withToken(carol.token)).expect(200);
      expect(response.body.map((repo: { id: number }) => repo.id)).toEqual([own.id, secret.id, other.id]);
      expect(response.headers['x-total-count']).toBe('3');
      await t.http.get(t.api('/user/subscriptions')).expect(401);
      const repoOnly = await makeToken(t, carol.user, ['read:repository']);
      const scoped = await t.http.get(t.api('/user/subscriptions')).set(withToken(repoOnly)).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
    });

    it("GET /users/{username}/subscriptions shows only what the caller may see, with the caller's permissions", async () => {
      const seenByBob = await t.http
        .get(t.api(`/users/${carol.name}/subscriptions`))
        .set(withToken(bob.token))
        .expect(200);
      expect(seenByBob.body.map((repo: { id: number }) => repo.id)).toEqual([own.id, other.id]);
      expect(seenByBob.headers['x-total-count']).toBe('2');
      expect(seenByBob.body[0].permissions).toEqual({ admin: false, push: false, pull: true });
      expect(seenByBob.body[1].permissions).toEqual({ admin: true, push: true, pull: true });
      const seenByAdmin = await t.http
        .get(t.api(`/users/${carol.name}/subscriptions`))
        .set(withToken(admin.token))
        .expect(200);
      expect(seenByAdmin.body).toHaveLength(3);
      const paged = await t.http
        .get(t.api(`/users/${carol.name}/subscriptions`))
        .query({ limit: 1 })
        .set(withToken(carol.token))
        .expect(200);
      expect(paged.body).toHaveLength(1);
      expect(paged.headers['x-total-count']).toBe('3');
      expect(paged.headers.link).toContain('rel="last"');
    });

    it('GET /users/{username}/subscriptions is users group B', async () => {
      await t.http.get(t.api(`/users/${carol.name}/subscriptions`)).expect(401);
      await t.http.get(t.api('/users/no-such-user/subscriptions')).set(withToken(bob.token)).expect(404);
      const hidden = await makeUser(t, { visibility: 'private' });
      await t.http
        .get(t.api(`/users/${hidden.name}/subscriptions`))
        .set(withToken(bob.token))
        .expect(404);
    });
  });

  it('40 parallel watches and unwatches leave watchers_count exact', async () => {
    const repo = await makeRepo(t, alice);
    const users: TestUser[] = [];
    // Created one by one: only the star/watch requests below are meant to race.
    for (let index = 0; index < 10; index++) users.push(await makeUser(t));
    const requests = users.flatMap((user, index) =>
      (index % 2 === 0 ? ['put', 'delete', 'put', 'put'] : ['put', 'put', 'delete', 'delete']).map((method) =>
        method === 'put'
          ? t.http.put(path(alice.name, repo.name)).set(withToken(user.token))
          : t.http.delete(path(alice.name, repo.name)).set(withToken(user.token)),
      ),
    );
    const statuses = await Promise.all(requests.map(async (request) => (await request).status));
    expect(statuses.every((status) => status === 200 || status === 204)).toBe(true);
    expect(await watchers(alice.name, repo.name)).toBe(await rows(`SELECT COUNT(*) AS n FROM watch WHERE repo_id = ${repo.id}`));
    await Promise.all(
      users.flatMap((user) => [
        t.http.put(path(alice.name, repo.name)).set(withToken(user.token)),
        t.http.put(path(alice.name, repo.name)).set(withToken(user.token)),
      ]),
    );
    expect(await watchers(alice.name, repo.name)).toBe(11);
  });
});
