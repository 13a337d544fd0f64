import { RepositoryStore } from '../../src/repos/repository.store';
import { Transactions } from '../../src/database/transactions';
import type { UserEntity } from '../../src/users/user.entity';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('repository search and lists', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let carol: TestUser;
  let lim: TestUser;
  let admin: TestUser;
  let org: UserEntity;
  let privateOrg: UserEntity;
  const k = `zq${Math.random().toString(36).slice(2, 7)}`;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    bob = await makeUser(t);
    carol = await makeUser(t, { visibility: 'private' });
    lim = await makeUser(t, { visibility: 'limited' });
    admin = await makeUser(t, { admin: true });
    org = await makeOrg(t, alice.user);
    privateOrg = await makeOrg(t, alice.user, { visibility: 'private' });
    const make = async (key: string, owner: TestUser, options: { private?: boolean; org?: string; description?: string } = {}) => {
      ids[key] = (await makeRepo(t, owner, { name: `${k}-${key}`, ...options })).id;
    };
    await make('alpha', alice);
    await make('beta', alice, { private: true });
    const gamma = await t.http
      .post(t.api('/user/repos'))
      .set(withToken(alice.token))
      .send({ name: `${k}-gamma`, template: true })
      .expect(201);
    ids.gamma = gamma.body.id;
    await make('delta', bob, { description: `a needle${k} in here` });
    await make('eps', carol);
    await make('zeta', lim);
    await make('eta', alice, { org: org.name });
    await make('theta', alice, { org: org.name, private: true });
    await make('iota', alice, { org: privateOrg.name });
    await t.http
      .put(t.api(`/user/starred/${alice.name}/${k}-alpha`))
      .set(withToken(bob.token))
      .expect(204);
    await t.http
      .put(t.api(`/user/starred/${lim.name}/${k}-zeta`))
      .set(withToken(bob.token))
      .expect(204);
    await t.http
      .put(t.api(`/user/starred/${lim.name}/${k}-zeta`))
      .set(withToken(alice.token))
      .expect(204);
  });
  afterAll(() => t.close());

  const search = (query: Record<string, string | number | boolean>, token?: string) => {
    const request = t.http.get(t.api('/repos/search')).query(query);
    return token ? request.set(withToken(token)) : request;
  };
  const names = (body: { data: { name: string }[] }) => body.data.map((repo) => repo.name.slice(k.length + 1));

  describe('GET /repos/search', () => {
    it('anonymous callers find public repositories of public owners, by name ascending', async () => {
      const response = await search({ q: k }).expect(200);
      expect(response.body.ok).toBe(true);
      expect(names(response.body)).toEqual(['alpha', 'delta', 'eta', 'gamma']);
      expect(response.headers['x-total-count']).toBe('4');
      expect(response.body.data[0].permissions).toEqual({ admin: false, push: false, pull: true });
    });

    it('signed-in users also find what they may see: limited owners, their own and their organisations', async () => {
      expect(names((await search({ q: k }, bob.token).expect(200)).body)).toEqual(['alpha', 'delta', 'eta', 'gamma', 'zeta']);
      const mine = await search({ q: k }, alice.token).expect(200);
      expect(names(mine.body)).toEqual(['alpha', 'beta', 'delta', 'eta', 'gamma', 'iota', 'theta', 'zeta']);
      expect(mine.headers['x-total-count']).toBe('8');
      expect(mine.body.data.find((repo: { name: string }) => repo.name === `${k}-beta`).permissions).toEqual({ admin: true, push: true, pull: true });
      expect(names((await search({ q: k }, carol.token).expect(200)).body)).toEqual(['alpha', 'delta', 'eps', 'eta', 'gamma', 'zeta']);
    });

    it('site admins find everything; private=false narrows to public repositories of public owners', async () => {
      const all = await search({ q: k }, admin.token).expect(200);
      expect(all.headers['x-total-count']).toBe('9');
      expect(names((await search({ q: k, private: false }, alice.token).expect(200)).body)).toEqual(['alpha', 'delta', 'eta', 'gamma']);
    });

    it('a public-only token finds public repositories only', async () => {
      const publicOnly = await makeToken(t, alice.user, ['public-only', 'read:repository']);
      expect(names((await search({ q: k }, publicOnly).expect(200)).body)).toEqual(['alpha', 'delta', 'eta', 'gamma']);
    });

    it('pages in SQL: totals and Link headers count only what the caller sees', async () => {
      const first = await search({ q: k, limit: 3 }, alice.token).expect(200);
      expect(names(first.body)).toEqual(['alpha', 'beta', 'delta']);
      expect(first.headers['x-total-count']).toBe('8');
      expect(first.headers.link).toContain('rel="next"');
      expect(first.headers.link).toContain('page=3');
      const last = await search({ q: k, limit: 3, page: 3 }, alice.token).expect(200);
      expect(names(last.body)).toEqual(['theta', 'zeta']);
      const anonymousPage = await search({ q: k, limit: 3, page: 2 }).expect(200);
      expect(names(anonymousPage.body)).toEqual(['gamma']);
      expect(anonymousPage.headers['x-total-count']).toBe('4');
    });

    it('caps limit at MAX_RESPONSE_ITEMS', async () => {
      const marker = `cap${Math.random().toString(36).slice(2, 7)}`;
      await t.app.get(Transactions).run(async (tx) => {
        for (let index = 0; index < 55; index++) {
          await t.app
            .get(RepositoryStore)
            .insert(tx, { ownerId: bob.user.id, name: `${marker}-${index}`, lowerName: `${marker}-${index}`, defaultBranch: 'main', objectFormatName: 'sha1' });
        }
      });
      const response = await search({ q: marker, limit: 100 }).expect(200);
      expect(response.body.data).toHaveLength(50);
      expect(response.headers['x-total-count']).toBe('55');
    });

    it('q: commas separate alternatives; includeDesc searches descriptions too', async () => {
      expect(names((await search({ q: `${k}-alpha,${k}-delta` }).expect(200)).body)).toEqual(['alpha', 'delta']);
      expect((await search({ q: `needle${k}` }).expect(200)).body.data).toEqual([]);
      expect(names((await search({ q: `NEEDLE${k}`, includeDesc: true }).expect(200)).body)).toEqual(['delta']);
      expect(names((await search({ q: `  ${k}-ALPHA  ` }).expect(200)).body)).toEqual(['alpha']);
    });

    it('q of the form owner/name matches owner and name, exact owner first', async () => {
      expect(names((await search({ q: `${alice.name}/${k}-a` }).expect(200)).body)).toEqual(['alpha']);
      const stem = uniqueName('pre');
      const other = uniqueName('other');
      const exact = await makeUser(t, { name: stem });
      const longer = await makeUser(t, { name: `${stem}x` });
      await makeRepo(t, longer, { name: `${other}-aa` });
      await makeRepo(t, exact, { name: `${other}-zz` });
      const response = await search({ q: `${stem}/${other}` }).expect(200);
      expect(response.body.data.map((repo: { full_name: string }) => repo.full_name)).toEqual([`${stem}/${other}-zz`, `${stem}x/${other}-aa`]);
    });

    it('uid: owned by the user or by organisations they own; exclusive keeps the owned, collaborative the others', async () => {
      expect(names((await search({ q: k, uid: alice.user.id }, admin.token).expect(200)).body)).toEqual(['alpha', 'beta', 'eta', 'gamma', 'iota', 'theta']);
      expect(names((await search({ q: k, uid: alice.user.id, exclusive: true }, admin.token).expect(200)).body)).toEqual(['alpha', 'beta', 'gamma']);
      expect(names((await search({ q: k, uid: alice.user.id, mode: 'collaborative' }, admin.token).expect(200)).body)).toEqual(['eta', 'iota', 'theta']);
      // Still filtered by what the caller may see.
      expect(names((await search({ q: k, uid: alice.user.id }).expect(200)).body)).toEqual(['alpha', 'eta', 'gamma']);
    });

    it('priority_owner_id lists that owner first', async () => {
      const response = await search({ q: k, priority_owner_id: bob.user.id }).expect(200);
      expect(names(response.body)).toEqual(['delta', 'alpha', 'eta', 'gamma']);
    });

    it('starredBy lists repositories that user starred, as the caller may see them', async () => {
      expect(names((await search({ q: k, starredBy: bob.user.id }).expect(200)).body)).toEqual(['alpha']);
      expect(names((await search({ starredBy: bob.user.id }, bob.token).expect(200)).body)).toEqual(['alpha', 'zeta']);
    });

    it('filters is_private, template and archived', async () => {
      expect(names((await search({ q: k, is_private: true }, alice.token).expect(200)).body)).toEqual(['beta', 'theta']);
      expect(names((await search({ q: k, template: true }, alice.token).expect(200)).body)).toEqual(['gamma']);
      expect(names((await search({ q: k, template: false }).expect(200)).body)).toEqual(['alpha', 'delta', 'eta']);
      expect((await search({ q: k, archived: true }).expect(200)).body.data).toEqual([]);
      expect(names((await search({ q: k, archived: false }).expect(200)).body)).toHaveLength(4);
    });

    it('mode: source matches non-mirrors, fork and mirror match nothing here; topic search finds no topics', async () => {
      expect(names((await search({ q: k, mode: 'source' }).expect(200)).body)).toHaveLength(4);
      expect((await search({ q: k, mode: 'fork' }).expect(200)).body.data).toEqual([]);
      const mirror = await search({ q: k, mode: 'mirror' }).expect(200);
      expect(mirror.body.data).toEqual([]);
      expect(mirror.headers['x-total-count']).toBe('0');
      expect((await search({ q: k, topic: true }).expect(200)).body.data).toEqual([]);
    });

    it('sorts by id, stars and alpha in either order', async () => {
      const byId = await search({ q: k, sort: 'id', order: 'desc' }).expect(200);
      const returned = byId.body.data.map((repo: { id: number }) => repo.id);
      expect(returned).toEqual([...returned].sort((a: number, b: number) => b - a));
      expect(names((await search({ q: k, sort: 'stars', order: 'desc' }, bob.token).expect(200)).body).slice(0, 2)).toEqual(['zeta', 'alpha']);
      const alpha = await search({ q: k, sort: 'alpha' }, admin.token).expect(200);
      const fullNames = alpha.body.data.map((repo: { full_name: string }) => repo.full_name.toLowerCase());
      expect(fullNames).toEqual([...fullNames].sort());
      const reverse = await search({ q: k, sort: 'alpha', order: 'desc' }, admin.token).expect(200);
      expect(reverse.body.data.map((repo: { full_name: string }) => repo.full_name.toLowerCase())).toEqual([...fullNames].reverse());
    });

    it('refuses a bad mode, sort or order with 422; order is ignored without sort', async () => {
      const mode = await search({ mode: 'weird' }).expect(422);
      expect(mode.body).toEqual({ message: 'Invalid search mode: "weird"', url: 'http://anvil.test/api/swagger' });
      expect((await search({ sort: 'weird' }).expect(422)).body.message).toBe('Invalid sort mode: "weird"');
      expect((await search({ sort: 'weird', order: 'sideways' }).expect(422)).body.message).toBe('Invalid sort order: "sideways"');
      await search({ q: k, order: 'sideways' }).expect(200);
    });

    it('needs read:repository on a token; bad credentials are 401', async () => {
      const token = await makeToken(t, alice.user, ['read:user']);
      await search({ q: k }, token).expect(403);
      await search({ q: k }, 'f'.repeat(40)).expect(401);
    });

    it('answers a failure with the SearchError body', async () => {
      const store = t.app.get(RepositoryStore);
      const original = store.list;
      store.list = async () => {
        throw new Error('the index is on fire');
      };
      try {
        const response = await search({ q: k }).expect(500);
        expect(response.body).toEqual({ ok: false, error: 'the index is on fire' });
      } finally {
        store.list = original;
      }
    });
  });

  describe('GET /user/repos', () => {
    const mine = (query: Record<string, string> = {}, token = alice.token) => t.http.get(t.api('/user/repos')).query(query).set(withToken(token));

    it("lists the caller's repositories and those of organisations they own, private ones included, by name", async () => {
      const response = await mine().expect(200);
      expect(names({ data: response.body })).toEqual(['alpha', 'beta', 'eta', 'gamma', 'iota', 'theta']);
      expect(response.headers['x-total-count']).toBe('6');
      expect(response.body[0].permissions).toEqual({ admin: true, push: true, pull: true });
    });

    it('orders by order_by', async () => {
      const byId = await mine({ order_by: 'id' }).expect(200);
      const returned = byId.body.map((repo: { id: number }) => repo.id);
      expect(returned).toEqual([...returned].sort((a: number, b: number) => a - b));
      const newest = await mine({ order_by: 'newest' }).expect(200);
      expect(newest.body).toHaveLength(6);
      expect(names({ data: (await mine({ order_by: 'moststars' }).expect(200)).body })[0]).toBe('alpha');
      const alphabetical = await mine({ order_by: 'alphabetically' }).expect(200);
      const fullNames = alphabetical.body.map((repo: { full_name: string }) => repo.full_name.toLowerCase());
      expect(fullNames).toEqual([...fullNames].sort());
      const reverse = await mine({ order_by: 'reversealphabetically' }).expect(200);
      expect(reverse.body.map((repo: { full_name: string }) => repo.full_name.toLowerCase())).toEqual([...fullNames].reverse());
      for (const order of [
        'oldest',
        'recentupdate',
        'leastupdate',
        'size',
        'reversesize',
        'gitsize',
        'reversegitsize',
        'lfssize',
        'reverselfssize',
        'feweststars',
        'mostforks',
        'fewestforks',
        'name',
      ]) {
        expect((await mine({ order_by: order }).expect(200)).body).toHaveLength(6);
      }
      const invalid = await mine({ order_by: 'random' }).expect(422);
      expect(invalid.body.message).toBe('invalid order_by');
    });

    it('needs sign-in, and read:user and read:repository on a token; public-only sees public ones', async () => {
      await t.http.get(t.api('/user/repos')).expect(401);
      const token = await makeToken(t, alice.user, ['read:user']);
      const scoped = await t.http.get(t.api('/user/repos')).set(withToken(token)).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [read:user read:repository]');
      const publicOnly = await makeToken(t, alice.user, ['public-only', 'read:user', 'read:repository']);
      expect(names({ data: (await mine({}, publicOnly).expect(200)).body })).toEqual(['alpha', 'eta', 'gamma']);
    });
  });

  describe('GET /users/{username}/repos', () => {
    const of = (username: string, token?: string, query: Record<string, string> = {}) => {
      const request = t.http.get(t.api(`/users/${username}/repos`)).query(query);
      return token ? request.set(withToken(token)) : request;
    };

    it('lists owned repositories the caller can see, by id', async () => {
      expect(names({ data: (await of(alice.name).expect(200)).body })).toEqual(['alpha', 'gamma']);
      expect(names({ data: (await of(alice.name, bob.token).expect(200)).body })).toEqual(['alpha', 'gamma']);
      expect(names({ data: (await of(alice.name, alice.token).expect(200)).body })).toEqual(['alpha', 'beta', 'gamma']);
      expect(names({ data: (await of(alice.name, admin.token).expect(200)).body })).toEqual(['alpha', 'beta', 'gamma']);
    });

    it('lists organisations too', async () => {
      expect(names({ data: (await of(org.name).expect(200)).body })).toEqual(['eta']);
      expect(names({ data: (await of(org.name, alice.token).expect(200)).body })).toEqual(['eta', 'theta']);
      await of(privateOrg.name, bob.token).expect(404);
    });

    it('follows user visibility: a private user only for themselves, a limited one for signed-in callers', async () => {
      await of(carol.name).expect(404);
      await of(carol.name, bob.token).expect(404);
      expect(names({ data: (await of(carol.name, carol.token).expect(200)).body })).toEqual(['eps']);
      await of(lim.name).expect(404);
      expect(names({ data: (await of(lim.name, bob.token).expect(200)).body })).toEqual(['zeta']);
      await of('no-such-user').expect(404);
    });

    it('checks scope (read:user and read:repository) and public-only tokens', async () => {
      const token = await makeToken(t, bob.user, ['read:user']);
      const scoped = await of(alice.name, token).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [read:user read:repository]');
      const publicOnly = await makeToken(t, bob.user, ['public-only', 'read:user', 'read:repository']);
      const limited = await of(lim.name, publicOnly).expect(403);
      expect(limited.body.message).toBe('token scope is limited to public users');
    });

    it('pages with X-Total-Count and Link', async () => {
      const response = await of(alice.name, alice.token, { limit: '1', page: '2' }).expect(200);
      expect(names({ data: response.body })).toEqual(['beta']);
      expect(response.headers['x-total-count']).toBe('3');
      expect(response.headers.link).toContain('rel="prev"');
    });
  });
});
