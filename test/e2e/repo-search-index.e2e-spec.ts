import fc from 'fast-check';
import type { VisibilityScope } from '../../src/repos/repository-access';
import { RepositoryCriteria, RepositorySort, RepositoryStore } from '../../src/repos/repository.store';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The repository search index (repos/repository-search.ts) only narrows the candidates: every answer must be
 * the one the plain LIKE scan gives for the same data. The scan is the same store with the index switched off
 * (narrowByIndex answering 'scan') and no stored totals, i.e. the queries as they were before the index.
 */
describe('repository search index', () => {
  let t: TestApp;
  let store: RepositoryStore;
  let scanOnly = false;
  const owners: Record<string, number> = {};

  // Pieces of generated names and descriptions: LIKE's own characters, the escape character, FTS5 query
  // syntax, case pairs that JavaScript and the databases fold differently, astral characters, and a few
  // common words so that some keywords match many repositories (the paging walk of the name index).
  const PIECES = [
    'api',
    'cli',
    'client',
    'kit',
    'a',
    'b',
    'ab',
    '_',
    '%',
    '!',
    '-',
    '.',
    ' ',
    '"',
    '*',
    ':',
    '^',
    'é',
    'É',
    'İ',
    'ß',
    'ẞ',
    '\u212a',
    'ſ',
    'σ',
    'ς',
    'Σ',
    '🚀',
    'X',
    'Q',
  ];
  const text = (min: number, max: number) => fc.array(fc.constantFrom(...PIECES), { minLength: min, maxLength: max }).map((parts) => parts.join(''));

  beforeAll(async () => {
    t = await startTestApp();
    store = t.app.get(RepositoryStore);
    const original = (RepositoryStore.prototype as any).narrowByIndex;
    jest.spyOn(RepositoryStore.prototype as any, 'narrowByIndex').mockImplementation(function (this: RepositoryStore, ...args: unknown[]) {
      return scanOnly ? Promise.resolve('scan') : original.apply(this, args);
    });
    // The scan never reuses a stored total: each of its counts gets a generation of its own.
    const generation = (RepositoryStore.prototype as any).searchGeneration;
    let scanGeneration = 0;
    jest.spyOn(RepositoryStore.prototype as any, 'searchGeneration').mockImplementation(function (this: RepositoryStore) {
      return scanOnly ? Promise.resolve(-++scanGeneration) : generation.apply(this);
    });
    // Owners and repositories written with plain SQL, as a bulk import from outside Anvil would: the index
    // triggers must see them all the same.
    const user = t.dataSource.driver.escape('user');
    const accounts: [string, number, number][] = [
      ['pubuser', 0, 0],
      ['limuser', 0, 1],
      ['privuser', 0, 2],
      ['puborg', 1, 0],
      ['privorg', 1, 2],
    ];
    for (const [name, type, visibility] of accounts) {
      await t.dataSource.query(`INSERT INTO ${user} (lower_name, name, type, visibility) VALUES (?, ?, ?, ?)`, [name, name, type, visibility]);
      const [row] = await t.dataSource.query(`SELECT id FROM ${user} WHERE lower_name = ?`, [name]);
      owners[name] = Number(row.id);
    }
    const ownerIds = Object.values(owners);
    const rows = fc.sample(fc.tuple(text(1, 6), text(0, 8), fc.nat(ownerIds.length - 1), fc.boolean(), fc.nat(20)), { numRuns: 400, seed: 14 });
    for (const [index, [name, description, owner, isPrivate, stars]] of rows.entries()) {
      // Every fourth name starts with a common word, which the page then finds by walking the name index.
      const full = `${index % 4 === 0 ? 'api-' : ''}${name}${index}`;
      await t.dataSource.query('INSERT INTO repository (owner_id, lower_name, name, description, is_private, num_stars) VALUES (?, ?, ?, ?, ?, ?)', [
        ownerIds[owner],
        full.toLowerCase(),
        full,
        description,
        isPrivate && index % 3 === 0 ? 1 : 0,
        stars,
      ]);
    }
  });
  afterAll(() => t.close());

  const both = async (criteria: RepositoryCriteria, page: { page: number; limit: number }) => {
    const paging = { ...page, offset: (page.page - 1) * page.limit };
    scanOnly = false;
    const indexed = await store.list(criteria, paging);
    scanOnly = true;
    const scanned = await store.list(criteria, paging);
    scanOnly = false;
    return { indexed: { total: indexed.total, ids: indexed.items.map((r) => r.id) }, scanned: { total: scanned.total, ids: scanned.items.map((r) => r.id) } };
  };

  it('answers exactly as the LIKE scan: items, order and total, for generated keywords, scopes, sorts and pages', async () => {
    const scopes: VisibilityScope[] = [
      { kind: 'public' },
      { kind: 'everything' },
      { kind: 'signed-in', uid: 999_999, ownIds: [owners.limuser], memberOrgIds: [owners.privorg], seesOtherOwners: true, viaGrants: false },
    ];
    const sorts: RepositorySort[][] = [[{ key: 'name' }], [{ key: 'name', descending: true }], [{ key: 'stars', descending: true }], [{ key: 'id' }]];
    // A keyword: one or more comma-separated alternatives, each generated or a piece of an existing name.
    const keyword = fc.array(
      fc.oneof(text(1, 4), fc.constantFrom('api', 'client', 'cli', 'ent', 'ab_', '%a', '!', 'é"', 'ss', 'k', 'σς', 'İ', 'API', 'Client')),
      {
        minLength: 1,
        maxLength: 3,
      },
    );
    let compared = 0;
    let nonEmpty = 0;
    await fc.assert(
      fc.asyncProperty(
        keyword,
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom(...scopes),
        fc.constantFrom(...sorts),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 12 }),
        async (alternatives, includeDescription, ownerForm, scope, sort, page, limit) => {
          // As the service builds it: `owner/name` when the whole keyword has exactly one slash.
          const raw = ownerForm ? `${['pub', 'org', 'priv'][alternatives.length - 1]}/${alternatives[0]}` : alternatives.join(',');
          const pieces = raw.split('/');
          const ownerAndName = pieces.length === 2 ? (pieces as [string, string]) : undefined;
          const criteria: RepositoryCriteria = {
            scope,
            publicOwnersOnly: scope.kind === 'public',
            keyword: { alternatives: raw.split(',').filter((alternative) => alternative !== ''), includeDescription, ownerAndName },
            ...(ownerAndName ? { priorityOwnerName: ownerAndName[0] } : {}),
            sort,
          };
          const { indexed, scanned } = await both(criteria, { page, limit });
          compared += 1;
          if (scanned.total > 0) nonEmpty += 1;
          expect(indexed).toEqual(scanned);
        },
      ),
      { numRuns: 150, seed: 1414 },
    );
    // The property was not vacuous: many keywords matched something.
    expect(compared).toBe(150);
    expect(nonEmpty).toBeGreaterThan(40);
  });

  it('walks the name index for common keywords and still pages exactly, to the last page', async () => {
    const walk = jest.spyOn(RepositoryStore.prototype as any, 'walkByName');
    const criteria: RepositoryCriteria = { scope: { kind: 'public' }, keyword: { alternatives: ['api'], includeDescription: false }, sort: [{ key: 'name' }] };
    const first = await both(criteria, { page: 1, limit: 5 });
    expect(first.indexed.total).toBeGreaterThan(20);
    const pages = Math.ceil(first.scanned.total / 5);
    for (const page of [1, 2, pages - 1, pages, pages + 1]) {
      const { indexed, scanned } = await both(criteria, { page, limit: 5 });
      expect(indexed).toEqual(scanned);
    }
    // The walk really served these pages (on the scan too: it only chooses the page query's index).
    expect(await Promise.all(walk.mock.results.map((result) => result.value))).toContain(true);
    walk.mockRestore();
  });

  it('over HTTP: the same items, X-Total-Count and Link as the scan', async () => {
    for (const [q, extra] of [
      ['api', {}],
      ['CLIENT', { includeDesc: 'true' }],
      ['ab', {}],
      ['pub/cli', {}],
      ['kit,%', { page: '2' }],
      ['nothing-has-this', {}],
      // FTS5 query syntax and odd characters are plain text to the search.
      ['"""', {}],
      ['NEAR(api cli)', { includeDesc: 'true' }],
      ['a\u0000bc', {}],
      ['*:^', {}],
    ] as [string, Record<string, string>][]) {
      const get = () =>
        t.http
          .get(t.api('/repos/search'))
          .query({ q, limit: '4', ...extra })
          .expect(200);
      scanOnly = false;
      const indexed = await get();
      scanOnly = true;
      const scanned = await get();
      scanOnly = false;
      expect(indexed.body.data.map((repo: { id: number }) => repo.id)).toEqual(scanned.body.data.map((repo: { id: number }) => repo.id));
      expect(indexed.headers['x-total-count']).toBe(scanned.headers['x-total-count']);
      expect(indexed.headers.link).toBe(scanned.headers.link);
    }
  });

  describe('is maintained with every repository write', () => {
    let owner: TestUser;
    beforeAll(async () => {
      owner = await makeUser(t);
    });
    const find = async (q: string, includeDesc = false) => {
      const response = await t.http
        .get(t.api('/repos/search'))
        .query({ q, includeDesc: String(includeDesc), uid: String(owner.user.id) })
        .set(withToken(owner.token))
        .expect(200);
      return response.body.data.map((repo: { name: string }) => repo.name);
    };

    it('create, rename, description edit and delete (over HTTP)', async () => {
      await makeRepo(t, owner, { name: 'Quasarwidget', description: 'Holds the Nebulagadget' });
      expect(await find('sarwid')).toEqual(['Quasarwidget']);
      expect(await find('ulagad', true)).toEqual(['Quasarwidget']);
      expect(await find('ulagad')).toEqual([]);

      await t.http
        .patch(t.api(`/repos/${owner.name}/Quasarwidget`))
        .set(withToken(owner.token))
        .send({ name: 'Pulsarthing', description: 'Now a Cometdevice' })
        .expect(200);
      expect(await find('sarwid')).toEqual([]);
      expect(await find('ulagad', true)).toEqual([]);
      expect(await find('lsarth')).toEqual(['Pulsarthing']);
      expect(await find('etdevi', true)).toEqual(['Pulsarthing']);

      await t.http
        .delete(t.api(`/repos/${owner.name}/Pulsarthing`))
        .set(withToken(owner.token))
        .expect(204);
      expect(await find('lsarth')).toEqual([]);
      expect(await find('etdevi', true)).toEqual([]);
    });

    it('template and initialised repositories are indexed like any other', async () => {
      await t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name: 'Blueprintbase', template: true, auto_init: true }).expect(201);
      expect(await find('eprintb')).toEqual(['Blueprintbase']);
    });

    const anonymousTotal = async (q: string) => Number((await t.http.get(t.api('/repos/search')).query({ q }).expect(200)).headers['x-total-count']);
    const generation = async () => Number((await t.dataSource.query('SELECT generation FROM repository_search_generation WHERE id = 1'))[0].generation);

    it('stored totals follow every write they depend on: private flag, owner visibility, rename, insert by SQL', async () => {
      const other = await makeUser(t);
      await makeRepo(t, other, { name: 'Totalcheck-one' });
      await makeRepo(t, other, { name: 'Totalcheck-two' });
      expect(await anonymousTotal('totalcheck')).toBe(2);
      expect(await anonymousTotal('totalcheck')).toBe(2);

      await t.http
        .patch(t.api(`/repos/${other.name}/Totalcheck-two`))
        .set(withToken(other.token))
        .send({ private: true })
        .expect(200);
      expect(await anonymousTotal('totalcheck')).toBe(1);
      await t.dataSource.query('UPDATE repository SET is_private = 0 WHERE owner_id = ?', [other.user.id]);
      expect(await anonymousTotal('totalcheck')).toBe(2);

      await t.http
        .patch(t.api(`/admin/users/${other.name}`))
        .set(withToken((await makeUser(t, { admin: true })).token))
        .send({ visibility: 'private' })
        .expect(200);
      expect(await anonymousTotal('totalcheck')).toBe(0);
      await t.dataSource.query(`UPDATE ${t.dataSource.driver.escape('user')} SET visibility = 0 WHERE id = ?`, [other.user.id]);
      expect(await anonymousTotal('totalcheck')).toBe(2);

      await t.dataSource.query('INSERT INTO repository (owner_id, lower_name, name) VALUES (?, ?, ?)', [other.user.id, 'totalcheck-three', 'Totalcheck-three']);
      expect(await anonymousTotal('totalcheck')).toBe(3);
      await t.http
        .patch(t.api(`/repos/${other.name}/Totalcheck-one`))
        .set(withToken(other.token))
        .send({ name: 'Renamed-one' })
        .expect(200);
      expect(await anonymousTotal('totalcheck')).toBe(2);
    });

    it("stored totals of a collaborator's and a team member's search follow their grants", async () => {
      const reader = await makeUser(t);
      const other = await makeUser(t);
      const total = async () =>
        Number((await t.http.get(t.api('/repos/search')).query({ q: 'grantcheck' }).set(withToken(reader.token)).expect(200)).headers['x-total-count']);
      await makeRepo(t, other, { name: 'Grantcheck-solo', private: true });
      expect(await total()).toBe(0);
      expect(await total()).toBe(0);
      await t.http
        .put(t.api(`/repos/${other.name}/Grantcheck-solo/collaborators/${reader.name}`))
        .set(withToken(other.token))
        .send({ permission: 'read' })
        .expect(204);
      expect(await total()).toBe(1);

      const org = await makeOrg(t, other.user);
      await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(other.token))
        .send({ name: 'Grantcheck-team', private: true })
        .expect(201);
      const team = (
        await t.http
          .post(t.api(`/orgs/${org.name}/teams`))
          .set(withToken(other.token))
          .send({ name: 'readers', permission: 'read', units: ['repo.code'] })
          .expect(201)
      ).body as { id: number };
      await t.http
        .put(t.api(`/teams/${team.id}/members/${reader.name}`))
        .set(withToken(other.token))
        .expect(204);
      expect(await total()).toBe(1);
      await t.http
        .put(t.api(`/teams/${team.id}/repos/${org.name}/Grantcheck-team`))
        .set(withToken(other.token))
        .expect(204);
      expect(await total()).toBe(2);
      await t.http
        .delete(t.api(`/teams/${team.id}/members/${reader.name}`))
        .set(withToken(other.token))
        .expect(204);
      expect(await total()).toBe(1);
      await t.http
        .delete(t.api(`/repos/${other.name}/Grantcheck-solo/collaborators/${reader.name}`))
        .set(withToken(other.token))
        .expect(204);
      expect(await total()).toBe(0);
    });

    it('a star does not raise the search generation (counters are not searched)', async () => {
      await makeRepo(t, owner, { name: 'Starless' });
      const before = await generation();
      await t.http
        .put(t.api(`/user/starred/${owner.name}/Starless`))
        .set(withToken(owner.token))
        .expect(204);
      expect(await generation()).toBe(before);
      await t.http
        .patch(t.api(`/repos/${owner.name}/Starless`))
        .set(withToken(owner.token))
        .send({ description: 'now described' })
        .expect(200);
      expect(await generation()).toBe(before + 1);
    });

    it('rows changed by SQL from outside Anvil (update, delete)', async () => {
      await makeRepo(t, owner, { name: 'Sqlwritten' });
      await t.dataSource.query('UPDATE repository SET lower_name = ?, name = ?, description = ? WHERE owner_id = ? AND lower_name = ?', [
        'sqlrenamed',
        'Sqlrenamed',
        'Described by SQL',
        owner.user.id,
        'sqlwritten',
      ]);
      expect(await find('lwritt')).toEqual([]);
      expect(await find('lrenam')).toEqual(['Sqlrenamed']);
      expect(await find('bed by', true)).toEqual(['Sqlrenamed']);
      await t.dataSource.query('DELETE FROM repository WHERE owner_id = ? AND lower_name = ?', [owner.user.id, 'sqlrenamed']);
      expect(await find('lrenam')).toEqual([]);
    });
  });
});
