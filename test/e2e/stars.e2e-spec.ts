import { makeOrg, makeRepo, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('stars', () => {
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

  const star = (user: TestUser, owner: string, name: string) => t.http.put(t.api(`/user/starred/${owner}/${name}`)).set(withToken(user.token));
  const unstar = (user: TestUser, owner: string, name: string) => t.http.delete(t.api(`/user/starred/${owner}/${name}`)).set(withToken(user.token));
  const isStarred = (user: TestUser, owner: string, name: string) => t.http.get(t.api(`/user/starred/${owner}/${name}`)).set(withToken(user.token));
  const starsOf = async (owner: string, name: string) =>
    (
      await t.http
        .get(t.api(`/repos/${owner}/${name}`))
        .set(withToken(admin.token))
        .expect(200)
    ).body.stars_count;
  const starredCount = async (user: TestUser) => (await t.http.get(t.api('/user')).set(withToken(user.token)).expect(200)).body.starred_repos_count;
  const rows = async (sql: string) => Number((await t.dataSource.query(sql))[0].n);

  it('PUT stars once, GET says 204, counters follow; both are idempotent', async () => {
    const repo = await makeRepo(t, alice);
    await isStarred(bob, alice.name, repo.name).expect(404);
    const response = await star(bob, alice.name, repo.name).expect(204);
    expect(response.text).toBe('');
    await star(bob, alice.name, repo.name).expect(204);
    await isStarred(bob, alice.name, repo.name).expect(204);
    expect(await starsOf(alice.name, repo.name)).toBe(1);
    expect(await starredCount(bob)).toBe(1);
    await unstar(bob, alice.name, repo.name).expect(204);
    await unstar(bob, alice.name, repo.name).expect(204);
    await isStarred(bob, alice.name, repo.name).expect(404);
    expect(await starsOf(alice.name, repo.name)).toBe(0);
    expect(await starredCount(bob)).toBe(0);
  });

  it('matches owner and repository names case-insensitively', async () => {
    const repo = await makeRepo(t, alice);
    await star(bob, alice.name.toUpperCase(), repo.name.toUpperCase()).expect(204);
    await isStarred(bob, alice.name, repo.name).expect(204);
    await unstar(bob, alice.name, repo.name).expect(204);
  });

  it('does not touch the repository updated_at', async () => {
    const repo = await makeRepo(t, alice);
    await t.dataSource.query(`UPDATE repository SET updated_unix = 1000 WHERE id = ${repo.id}`);
    await star(bob, alice.name, repo.name).expect(204);
    await unstar(bob, alice.name, repo.name).expect(204);
    await star(bob, alice.name, repo.name).expect(204);
    const after = await t.http.get(t.api(`/repos/${alice.name}/${repo.name}`)).expect(200);
    expect(after.body.updated_at).toBe('1970-01-01T00:16:40Z');
    expect(after.body.stars_count).toBe(1);
  });

  it('unknown or invisible repositories are 404 for GET, PUT and DELETE', async () => {
    const hidden = await makeRepo(t, alice, { private: true });
    await star(bob, alice.name, hidden.name).expect(404);
    await unstar(bob, alice.name, hidden.name).expect(404);
    await isStarred(bob, alice.name, hidden.name).expect(404);
    await star(bob, alice.name, 'no-such-repo').expect(404);
    await star(bob, 'no-such-user', 'x').expect(404);
    expect(await starredCount(bob)).toBe(1);
  });

  it('checks scope before sign-in', async () => {
    const repo = await makeRepo(t, alice);
    await t.http.put(t.api(`/user/starred/${alice.name}/${repo.name}`)).expect(401);
    await t.http.get(t.api(`/user/starred/${alice.name}/${repo.name}`)).expect(401);
    await t.http.get(t.api('/user/starred')).expect(401);
    const readOnly = await makeToken(t, bob.user, ['read:user', 'read:repository']);
    const refused = await t.http
      .put(t.api(`/user/starred/${alice.name}/${repo.name}`))
      .set(withToken(readOnly))
      .expect(403);
    expect(refused.body.message).toBe('token does not have at least one of required scope(s): [write:user write:repository]');
    const userOnly = await makeToken(t, bob.user, ['read:user']);
    const list = await t.http.get(t.api('/user/starred')).set(withToken(userOnly)).expect(403);
    expect(list.body.message).toBe('token does not have at least one of required scope(s): [read:user read:repository]');
  });

  describe('lists', () => {
    let carol: TestUser;
    let first: Record<string, any>;
    let second: Record<string, any>;
    let secret: Record<string, any>;

    beforeAll(async () => {
      carol = await makeUser(t);
      second = await makeRepo(t, alice);
      first = await makeRepo(t, bob);
      secret = await makeRepo(t, carol, { private: true });
      await star(carol, bob.name, first.name).expect(204);
      await star(carol, alice.name, second.name).expect(204);
      await star(carol, carol.name, secret.name).expect(204);
    });

    it('GET /user/starred lists what the caller starred, private ones included, in starring order', async () => {
      const response = await t.http.get(t.api('/user/starred')).set(withToken(carol.token)).expect(200);
      expect(response.body.map((repo: { id: number }) => repo.id)).toEqual([first.id, second.id, secret.id]);
      expect(response.headers['x-total-count']).toBe('3');
      expect(response.body[2].permissions).toEqual({ admin: true, push: true, pull: true });
      const paged = await t.http.get(t.api('/user/starred')).query({ limit: 2 }).set(withToken(carol.token)).expect(200);
      expect(paged.body).toHaveLength(2);
      expect(paged.headers.link).toContain('rel="next"');
    });

    it("GET /users/{username}/starred shows only what the caller may see, with the caller's permissions", async () => {
      const seenByBob = await t.http
        .get(t.api(`/users/${carol.name}/starred`))
        .set(withToken(bob.token))
        .expect(200);
      expect(seenByBob.body.map((repo: { id: number }) => repo.id)).toEqual([first.id, second.id]);
      expect(seenByBob.headers['x-total-count']).toBe('2');
      expect(seenByBob.body[0].permissions).toEqual({ admin: true, push: true, pull: true });
      expect(seenByBob.body[1].permissions).toEqual({ admin: false, push: false, pull: true });
      const seenByCarol = await t.http
        .get(t.api(`/users/${carol.name}/starred`))
        .set(withToken(carol.token))
        .expect(200);
      expect(seenByCarol.body).toHaveLength(3);
      const seenByAdmin = await t.http
        .get(t.api(`/users/${carol.name}/starred`))
        .set(withToken(admin.token))
        .expect(200);
      expect(seenByAdmin.headers['x-total-count']).toBe('3');
    });

    it("a repository that turned private drops out of other users' lists", async () => {
      const dave = await makeUser(t);
      const repo = await makeRepo(t, alice);
      await star(dave, alice.name, repo.name).expect(204);
      await t.http
        .patch(t.api(`/repos/${alice.name}/${repo.name}`))
        .set(withToken(alice.token))
        .send({ private: true })
        .expect(200);
      const response = await t.http.get(t.api('/user/starred')).set(withToken(dave.token)).expect(200);
      expect(response.body).toEqual([]);
      expect(response.headers['x-total-count']).toBe('0');
    });

    it('GET /users/{username}/starred is users group B: 401, 404 unknown or invisible, 403 public-only', async () => {
      await t.http.get(t.api(`/users/${carol.name}/starred`)).expect(401);
      await t.http.get(t.api('/users/no-such-user/starred')).set(withToken(bob.token)).expect(404);
      const hidden = await makeUser(t, { visibility: 'private' });
      await t.http
        .get(t.api(`/users/${hidden.name}/starred`))
        .set(withToken(bob.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/starred`))
        .set(withToken(hidden.token))
        .expect(200);
      const limited = await makeUser(t, { visibility: 'limited' });
      const publicOnly = await makeToken(t, bob.user, ['public-only', 'read:user']);
      const refused = await t.http
        .get(t.api(`/users/${limited.name}/starred`))
        .set(withToken(publicOnly))
        .expect(403);
      expect(refused.body.message).toBe('token scope is limited to public users');
      const repoOnly = await makeToken(t, bob.user, ['read:repository']);
      await t.http
        .get(t.api(`/users/${carol.name}/starred`))
        .set(withToken(repoOnly))
        .expect(403);
    });
  });

  it('40 parallel stars and unstars leave both counters exact', async () => {
    const repo = await makeRepo(t, alice);
    const users: TestUser[] = [];
    // Created one by one: only the star/watch requests below are meant to race.
    for (let index = 0; index < 10; index++) users.push(await makeUser(t));
    const requests = users.flatMap((user, index) => {
      const order = index % 2 === 0 ? ['put', 'put', 'delete', 'put'] : ['put', 'delete', 'delete', 'put'];
      return order.map((method) => (method === 'put' ? star(user, alice.name, repo.name) : unstar(user, alice.name, repo.name)));
    });
    const statuses = await Promise.all(requests.map(async (request) => (await request).status));
    expect(statuses.every((status) => status === 204)).toBe(true);
    const starRows = await rows(`SELECT COUNT(*) AS n FROM star WHERE repo_id = ${repo.id}`);
    expect(await starsOf(alice.name, repo.name)).toBe(starRows);
    for (const user of users) {
      const own = await rows(`SELECT COUNT(*) AS n FROM star WHERE uid = ${user.user.id}`);
      expect(await starredCount(user)).toBe(own);
    }
    // Then every user stars in parallel, twice: exactly one star each.
    await Promise.all(users.flatMap((user) => [star(user, alice.name, repo.name), star(user, alice.name, repo.name)]));
    expect(await starsOf(alice.name, repo.name)).toBe(10);
    await Promise.all(users.flatMap((user) => [unstar(user, alice.name, repo.name), unstar(user, alice.name, repo.name)]));
    expect(await starsOf(alice.name, repo.name)).toBe(0);
    for (const user of users) expect(await starredCount(user)).toBe(0);
  });

  it("who may star: any signed-in user a limited owner's public repository; a restricted user only in their organisations; a private owner's is unknown", async () => {
    const limitedOwner = await makeUser(t, { visibility: 'limited' });
    const ofLimited = await makeRepo(t, limitedOwner);
    await star(bob, limitedOwner.name, ofLimited.name).expect(204);
    const restricted = await makeUser(t);
    await t.http
      .patch(t.api(`/admin/users/${restricted.name}`))
      .set(withToken(admin.token))
      .send({ restricted: true })
      .expect(200);
    await star(restricted, limitedOwner.name, ofLimited.name).expect(404);
    const ofAlice = await makeRepo(t, alice);
    await star(restricted, alice.name, ofAlice.name).expect(404);
    const org = await makeOrg(t, restricted.user);
    const ofOrg = await makeRepo(t, restricted, { org: org.name });
    await star(restricted, org.name, ofOrg.name).expect(204);
    const privateOwner = await makeUser(t, { visibility: 'private' });
    const ofPrivate = await makeRepo(t, privateOwner);
    await star(bob, privateOwner.name, ofPrivate.name).expect(404);
    await star(privateOwner, privateOwner.name, ofPrivate.name).expect(204);
    expect(await starsOf(limitedOwner.name, ofLimited.name)).toBe(1);
    expect(await starsOf(alice.name, ofAlice.name)).toBe(0);
    expect(await starsOf(org.name, ofOrg.name)).toBe(1);
    expect(await starsOf(privateOwner.name, ofPrivate.name)).toBe(1);
    expect(await starredCount(restricted)).toBe(1);
  });

  it('96 concurrent PUT and DELETE of the same star by 16 callers leave num_stars equal to the star rows', async () => {
    const repo = await makeRepo(t, alice);
    const users: TestUser[] = [];
    for (let index = 0; index < 16; index++) users.push(await makeUser(t));
    // Each caller races itself too: two PUTs and two DELETEs of its own star among the others' requests.
    const requests = users.flatMap((user, index) =>
      (index % 3 === 0 ? ['put', 'delete', 'put', 'put', 'delete', 'put'] : ['put', 'put', 'delete', 'delete', 'put', 'delete']).map((method) =>
        method === 'put' ? star(user, alice.name, repo.name) : unstar(user, alice.name, repo.name),
      ),
    );
    const statuses = await Promise.all(requests.map(async (request) => (await request).status));
    expect(statuses.filter((status) => status !== 204)).toEqual([]);
    const starRows = await rows(`SELECT COUNT(*) AS n FROM star WHERE repo_id = ${repo.id}`);
    expect(await rows(`SELECT num_stars AS n FROM repository WHERE id = ${repo.id}`)).toBe(starRows);
    expect(await starsOf(alice.name, repo.name)).toBe(starRows);
    for (const user of users) {
      expect(await starredCount(user)).toBe(await rows(`SELECT COUNT(*) AS n FROM star WHERE uid = ${user.user.id}`));
    }
  });

  it("a deleted user's stars and watches go, and the repositories' counters follow", async () => {
    const erin = await makeUser(t);
    const repo = await makeRepo(t, alice);
    await star(erin, alice.name, repo.name).expect(204);
    await t.http
      .put(t.api(`/repos/${alice.name}/${repo.name}/subscription`))
      .set(withToken(erin.token))
      .expect(200);
    const before = (await t.http.get(t.api(`/repos/${alice.name}/${repo.name}`)).expect(200)).body;
    expect(before.stars_count).toBe(1);
    expect(before.watchers_count).toBe(2);
    await t.http
      .delete(t.api(`/admin/users/${erin.name}`))
      .set(withToken(admin.token))
      .expect(204);
    const after = (await t.http.get(t.api(`/repos/${alice.name}/${repo.name}`)).expect(200)).body;
    expect(after.stars_count).toBe(0);
    expect(after.watchers_count).toBe(1);
    expect(await rows(`SELECT COUNT(*) AS n FROM star WHERE uid = ${erin.user.id}`)).toBe(0);
    expect(await rows(`SELECT COUNT(*) AS n FROM watch WHERE uid = ${erin.user.id}`)).toBe(0);
  });
});
