import { Transactions } from '../../src/database/transactions';
import { UserStore } from '../../src/users/user.store';
import { makeOrg, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('GET /users/search', () => {
  let t: TestApp;
  let admin: TestUser;
  let stranger: TestUser;
  // A marker no generated name contains, so that every search below sees only this file's fixtures.
  const m = `qz${Math.random().toString(36).slice(2, 6)}`;
  // Users made by single tests carry this other marker, so they never join the fixture's results.
  const o = `qy${Math.random().toString(36).slice(2, 6)}`;
  let front: TestUser; // marker at the start of the login
  let tail: TestUser; // marker at the end of the login
  let inFullName: TestUser; // marker (upper-cased) inside the full name only
  let inEmail: TestUser; // marker in the e-mail only
  let inHiddenEmail: TestUser; // marker in a hidden e-mail only
  let limited: TestUser;
  let hidden: TestUser;

  const search = (query: string, token?: string) => {
    const request = t.http.get(t.api(`/users/search?${query}`));
    return token ? request.set(withToken(token)) : request;
  };
  const logins = (body: { login: string }[]) => body.map((user) => user.login);
  const sorted = (...users: TestUser[]) => users.map((user) => user.name).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
  const patch = (name: string, body: Record<string, unknown>) =>
    t.http
      .patch(t.api(`/admin/users/${name}`))
      .set(withToken(admin.token))
      .send(body)
      .expect(200);

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    stranger = await makeUser(t);
    front = await makeUser(t, { name: `${m}front`, fullName: 'Alpha One' });
    tail = await makeUser(t, { name: `tail${m}` });
    inFullName = await makeUser(t, { name: 'fullnameholder', fullName: `Gam ${m.toUpperCase()} ma` });
    inEmail = await makeUser(t, { name: 'emailholder', email: `${m}mail@example.com` });
    inHiddenEmail = await makeUser(t, { name: 'hiddenemailholder', email: `${m}hide@example.com` });
    await patch(inHiddenEmail.name, { hide_email: true });
    limited = await makeUser(t, { name: `lim${m}`, visibility: 'limited' });
    hidden = await makeUser(t, { name: `priv${m}`, visibility: 'private' });
    await makeOrg(t, admin.user, { name: `org${m}` });
  });
  afterAll(() => t.close());

  it('answers anonymous callers a JSON array of public individual users matching login or full name', async () => {
    const response = await search(`q=${m}`).expect(200);
    expect(logins(response.body)).toEqual(sorted(front, tail, inFullName));
    expect(response.headers['x-total-count']).toBe('3');
    expect(response.body[0]).toMatchObject({ id: expect.any(Number), login: expect.any(String), username: expect.any(String) });
    expect(response.body[0].email).toMatch(/@noreply\.anvil\.test$/);
  });

  it('adds limited users and visible e-mail addresses for a signed-in caller', async () => {
    const response = await search(`q=${m}`, stranger.token).expect(200);
    expect(logins(response.body)).toEqual(sorted(front, tail, inFullName, inEmail, limited));
  });

  it('matches a hidden e-mail address only for its owner and site admins', async () => {
    const own = await search(`q=${m}hide`, inHiddenEmail.token).expect(200);
    expect(logins(own.body)).toEqual([inHiddenEmail.name]);
    expect((await search(`q=${m}hide`, stranger.token).expect(200)).body).toEqual([]);
    expect(logins((await search(`q=${m}hide`, admin.token).expect(200)).body)).toEqual([inHiddenEmail.name]);
  });

  it('shows site admins everyone, private users included, but never organisations', async () => {
    const response = await search(`q=${m}`, admin.token).expect(200);
    expect(logins(response.body)).toEqual(sorted(front, tail, inFullName, inEmail, inHiddenEmail, limited, hidden));
    expect(response.headers['x-total-count']).toBe('7');
  });

  it('shows a private user to callers it follows or shares an organisation with', async () => {
    const followed = await makeUser(t);
    await t.http
      .put(t.api(`/user/following/${followed.name}`))
      .set(withToken(hidden.token))
      .expect(204);
    expect(logins((await search(`q=priv${m}`, followed.token).expect(200)).body)).toEqual([hidden.name]);
    const colleague = await makeUser(t);
    const org = await makeOrg(t, colleague.user);
    const team = (
      await t.http
        .get(t.api(`/orgs/${org.name}/teams`))
        .set(withToken(colleague.token))
        .expect(200)
    ).body[0];
    await t.http
      .put(t.api(`/teams/${team.id}/members/${hidden.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect(logins((await search(`q=priv${m}`, colleague.token).expect(200)).body)).toEqual([hidden.name]);
    expect((await search(`q=priv${m}`, stranger.token).expect(200)).body).toEqual([]);
    expect((await search(`q=priv${m}`, hidden.token).expect(200)).body).toHaveLength(1);
  });

  it('shows a public-only token public users only', async () => {
    const token = await makeToken(t, admin.user, ['public-only', 'read:user']);
    const response = await search(`q=${m}`, token).expect(200);
    expect(logins(response.body)).toEqual(sorted(front, tail, inFullName, inEmail));
  });

  it('hides limited users from a restricted caller', async () => {
    const restricted = await makeUser(t);
    await patch(restricted.name, { restricted: true });
    expect(logins((await search(`q=${m}`, restricted.token).expect(200)).body)).toEqual(sorted(front, tail, inFullName, inEmail));
  });

  it('trims the query and matches case-insensitively, spaces inside included', async () => {
    expect(logins((await search(`q=${encodeURIComponent(`  ${m.toUpperCase()}FRONT `)}`).expect(200)).body)).toEqual([front.name]);
    expect(logins((await search(`q=${encodeURIComponent('alpha one')}&uid=${front.user.id}`).expect(200)).body)).toEqual([front.name]);
    expect((await search(`q=${encodeURIComponent('alpha  one')}&uid=${front.user.id}`).expect(200)).body).toEqual([]);
  });

  it('matches non-ASCII letters case-insensitively', async () => {
    const umlaut = await makeUser(t, { fullName: `Ärger Über ${o}` });
    expect(logins((await search(`q=${encodeURIComponent('äRGER üBER')}`).expect(200)).body)).toEqual([umlaut.name]);
    expect(logins((await search(`q=${encodeURIComponent('Ä')}&uid=${umlaut.user.id}`).expect(200)).body)).toEqual([umlaut.name]);
  });

  it('finds one- and two-character queries anywhere, the end of a field included', async () => {
    const last = tail.name.slice(-2);
    expect(logins((await search(`q=${last}&uid=${tail.user.id}`).expect(200)).body)).toEqual([tail.name]);
    expect(logins((await search(`q=${tail.name.slice(-1)}&uid=${tail.user.id}`).expect(200)).body)).toEqual([tail.name]);
    expect((await search(`q=%23%23&uid=${tail.user.id}`).expect(200)).body).toEqual([]);
    const oneChar = await search(`q=${m[2]}`).expect(200);
    expect(Number(oneChar.headers['x-total-count'])).toBeGreaterThanOrEqual(3);
  });

  it('treats LIKE wildcards in the query literally', async () => {
    const percent = await makeUser(t, { fullName: `100%_${o} sure` });
    expect(logins((await search(`q=${encodeURIComponent('0%_')}`).expect(200)).body)).toEqual([percent.name]);
    expect((await search(`q=${encodeURIComponent('%')}&uid=${front.user.id}`).expect(200)).body).toEqual([]);
    expect((await search(`q=${encodeURIComponent('_')}&uid=${front.user.id}`).expect(200)).body).toEqual([]);
  });

  it('keeps a long query exact', async () => {
    const long = await makeUser(t, { fullName: `The quick brown fox jumps over ${o}` });
    expect(logins((await search(`q=${encodeURIComponent(`quick brown fox jumps over ${o}`)}`).expect(200)).body)).toEqual([long.name]);
    expect((await search(`q=${encodeURIComponent(`quick brown fox jumps under ${o}`)}`).expect(200)).body).toEqual([]);
  });

  it('restricts to one id with uid, and ignores a non-numeric uid', async () => {
    const byId = await search(`uid=${front.user.id}`).expect(200);
    expect(logins(byId.body)).toEqual([front.name]);
    expect(byId.headers['x-total-count']).toBe('1');
    expect(logins((await search(`q=${m}&uid=abc`).expect(200)).body)).toEqual(sorted(front, tail, inFullName));
    expect((await search(`uid=${hidden.user.id}`).expect(200)).body).toEqual([]);
  });

  it('answers the synthetic Ghost (-1) and forgejo-actions (-2) users', async () => {
    const ghost = await search('uid=-1').expect(200);
    expect(ghost.body).toEqual([expect.objectContaining({ id: -1, login: 'Ghost', username: 'Ghost', created: '0001-01-01T00:00:00Z' })]);
    expect(ghost.headers['x-total-count']).toBe('1');
    const actions = await search('uid=-2&q=whatever').expect(200);
    expect(actions.body).toEqual([expect.objectContaining({ id: -2, login: 'forgejo-actions', full_name: 'Forgejo Actions' })]);
    expect(actions.body[0].email).toBe('forgejo-actions@noreply.anvil.test');
  });

  describe('sort', () => {
    let users: TestUser[];
    beforeAll(async () => {
      const s = `${o}s`;
      users = [];
      // b (oldest, least recently updated), a, c
      for (const [name, created, updated] of [
        [`b${s}`, 1000, 1000],
        [`a${s}`, 2000, 3000],
        [`c${s}`, 3000, 2000],
      ] as const) {
        const user = await makeUser(t, { name });
        await t.app.get(Transactions).run((tx) => t.app.get(UserStore).update(tx, user.user.id, { createdUnix: created, updatedUnix: updated }));
        users.push(user);
      }
    });
    const order = async (sort: string) => logins((await search(`q=${o}s&sort=${sort}`).expect(200)).body);

    it.each([
      ['alphabetically', ['a', 'b', 'c']],
      ['reversealphabetically', ['c', 'b', 'a']],
      ['oldest', ['b', 'a', 'c']],
      ['newest', ['c', 'a', 'b']],
      ['recentupdate', ['a', 'c', 'b']],
      ['leastupdate', ['b', 'c', 'a']],
      ['no-such-sort', ['a', 'b', 'c']],
      ['', ['a', 'b', 'c']],
    ])('sort=%s orders %j', async (sort, expected) => {
      expect(await order(sort)).toEqual(expected.map((letter) => `${letter}${o}s`));
      expect(users).toHaveLength(3);
    });
  });

  it('pages in SQL with X-Total-Count and Link', async () => {
    const first = await search(`q=${m}&limit=2`, admin.token).expect(200);
    expect(first.body).toHaveLength(2);
    expect(first.headers['x-total-count']).toBe('7');
    expect(first.headers.link).toContain(`<http://anvil.test/api/v1/users/search?limit=2&page=2&q=${m}>; rel="next"`);
    const last = await search(`q=${m}&limit=2&page=4`, admin.token).expect(200);
    expect(last.body).toHaveLength(1);
    const all = await search(`q=${m}`, admin.token).expect(200);
    expect(logins(last.body)).toEqual([logins(all.body)[6]]);
  });

  it('follows changes of the full name, e-mail and deletion of a user', async () => {
    const changing = await makeUser(t, { fullName: `before${o}` });
    expect(logins((await search(`q=before${o}`).expect(200)).body)).toEqual([changing.name]);
    await patch(changing.name, { full_name: `after${o}`, email: `${o}changed@example.com` });
    expect((await search(`q=before${o}`).expect(200)).body).toEqual([]);
    expect(logins((await search(`q=after${o}`).expect(200)).body)).toEqual([changing.name]);
    expect(logins((await search(`q=${o}changed`, stranger.token).expect(200)).body)).toEqual([changing.name]);
    await t.http
      .delete(t.api(`/admin/users/${changing.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect((await search(`q=after${o}`).expect(200)).body).toEqual([]);
  });

  it('creates and finds a user whose login and full name differ only by an accent (jurgen, Jürgen)', async () => {
    // The grams `jur` and `jür` are one key under a case- and accent-folding collation: on MariaDB the user could
    // not be created until the gram column compared as bytes.
    const login = `jurgen${o}`;
    await t.http
      .post(t.api('/admin/users'))
      .set(withToken(admin.token))
      .send({ username: login, email: `${login}@example.com`, full_name: `Jürgen Jurgens ${o}`, password: 'a-long-password-1', must_change_password: false })
      .expect(201);
    expect(logins((await search(`q=jürgen jurgens ${o}`).expect(200)).body)).toEqual([login]);
    expect(logins((await search(`q=jurgen${o}`).expect(200)).body)).toEqual([login]);
    await patch(login, { full_name: `Jürg Jür ${o}` });
    expect(logins((await search(`q=jürg jür ${o}`).expect(200)).body)).toEqual([login]);
  });

  it('answers a token without read:user 403', async () => {
    const token = await makeToken(t, stranger.user, ['read:repository']);
    const response = await search(`q=${m}`, token).expect(403);
    expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
  });
});
