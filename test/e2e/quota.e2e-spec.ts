import * as fs from 'node:fs';
import { RepositoryEntity } from '../../src/repos/repository.entity';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { regularFileBytes, repositoryDir } from '../support/git';
import { startTestApp, TestApp } from '../support/test-app';

const SWAGGER = 'http://anvil.test/api/swagger';

function expectEmpty404(response: { status: number; text: string }): void {
  expect(response.status).toBe(404);
  expect(response.text).toBe('');
}

function usedSize(repos: { public: number; private: number }) {
  return { size: { repos, git: { LFS: 0 }, assets: { attachments: { issues: 0, releases: 0 }, artifacts: 0, packages: { all: 0 } } } };
}

/** The user and organisation quota views, usage accounting and enforcement (docs/quota.md). */
describe('quota views and enforcement', () => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const get = (user: TestUser, apiPath: string) => t.http.get(t.api(apiPath)).set(withToken(user.token));
  const adm = {
    post: (apiPath: string, body: unknown) =>
      t.http
        .post(t.api(apiPath))
        .set(withToken(admin.token))
        .send(body as object),
    patch: (apiPath: string, body: unknown) =>
      t.http
        .patch(t.api(apiPath))
        .set(withToken(admin.token))
        .send(body as object),
    put: (apiPath: string) => t.http.put(t.api(apiPath)).set(withToken(admin.token)),
  };
  const check = async (user: TestUser, subject: string): Promise<boolean> =>
    (await get(user, `/user/quota/check?subject=${encodeURIComponent(subject)}`).expect(200)).body;

  /** A group holding one new rule, with `targets` mapped to it; returns the rule name. */
  async function limitTo(targets: string[], limit: number, subjects: string[] = ['size:repos:all']): Promise<string> {
    const rule = uniqueName('rule');
    const group = uniqueName('grp');
    await adm.post('/admin/quota/groups', { name: group, rules: [{ name: rule, limit, subjects }] }).expect(201);
    for (const target of targets) await adm.put(`/admin/quota/groups/${group}/users/${target}`).expect(204);
    return rule;
  }

  async function storedSizes(ownerId: number): Promise<{ public: number; private: number }> {
    const repos = await t.dataSource.getRepository(RepositoryEntity).findBy({ ownerId });
    const sum = (rows: RepositoryEntity[]) => rows.reduce((total, repo) => total + repo.gitSize, 0);
    return { public: sum(repos.filter((repo) => !repo.isPrivate)), private: sum(repos.filter((repo) => repo.isPrivate)) };
  }

  describe('GET /user/quota', () => {
    it('needs sign-in (401) and read:user (403)', async () => {
      const anonymous = await t.http.get(t.api('/user/quota')).expect(401);
      expect(anonymous.body).toEqual({ message: 'token is required', url: SWAGGER });
      const user = await makeUser(t);
      const repoOnly = await makeToken(t, user.user, ['read:repository']);
      const scoped = await t.http.get(t.api('/user/quota/check?subject=size:all')).set(withToken(repoOnly)).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
      for (const list of ['attachments', 'packages', 'artifacts'])
        await t.http
          .get(t.api(`/user/quota/${list}`))
          .set(withToken(repoOnly))
          .expect(403);
    });

    it('without groups: zero usage and no groups (the built-in default is never listed)', async () => {
      const user = await makeUser(t);
      expect((await get(user, '/user/quota').expect(200)).body).toEqual({ used: usedSize({ public: 0, private: 0 }), groups: [] });
    });

    it('shows explicit groups and rules without names', async () => {
      const user = await makeUser(t);
      await limitTo([user.name], 12345, ['size:repos:all', 'size:git:lfs']);
      const response = await get(user, '/user/quota').expect(200);
      expect(response.body.groups).toEqual([{ rules: [{ limit: 12345, subjects: ['size:repos:all', 'size:git:lfs'] }] }]);
    });

    it('usage is the sum of the stored repository sizes, split public/private, after creations and deletions', async () => {
      const user = await makeUser(t);
      const first = await makeRepo(t, user, { autoInit: true });
      await makeRepo(t, user, { autoInit: false });
      const secret = await makeRepo(t, user, { autoInit: true, private: true });
      const sizes = await storedSizes(user.user.id);
      expect(sizes.public).toBeGreaterThan(0);
      expect(sizes.private).toBeGreaterThan(0);
      // The stored size is the bytes of the regular files in the repository's directory (docs/quota.md).
      const stored = await t.dataSource.getRepository(RepositoryEntity).findOneByOrFail({ id: secret.id });
      expect(stored.gitSize).toBe(regularFileBytes(repositoryDir(t.dataDir, user.name, secret.name)));
      expect((await get(user, '/user/quota').expect(200)).body.used).toEqual(usedSize(sizes));
      expect(
        (
          await t.http
            .get(t.api(`/admin/users/${user.name}/quota`))
            .set(withToken(admin.token))
            .expect(200)
        ).body.used,
      ).toEqual(usedSize(sizes));
      await t.http
        .delete(t.api(`/repos/${user.name}/${first.name}`))
        .set(withToken(user.token))
        .expect(204);
      const after = await storedSizes(user.user.id);
      expect(after.public).toBeLessThan(sizes.public);
      expect((await get(user, '/user/quota').expect(200)).body.used).toEqual(usedSize(after));
    });

    it('counts only the target’s own repositories', async () => {
      const owner = await makeUser(t);
      const org = await makeOrg(t, owner.user);
      await makeRepo(t, owner, { org: org.name, autoInit: true });
      expect((await get(owner, '/user/quota').expect(200)).body.used).toEqual(usedSize({ public: 0, private: 0 }));
      const orgQuota = await get(owner, `/orgs/${org.name}/quota`).expect(200);
      expect(orgQuota.body.used).toEqual(usedSize(await storedSizes(org.id)));
      expect(orgQuota.body.used.size.repos.public).toBeGreaterThan(0);
    });
  });

  describe('GET /user/quota/check', () => {
    it('a missing or unknown subject → 422', async () => {
      const user = await makeUser(t);
      const missing = await get(user, '/user/quota/check').expect(422);
      expect(missing.body).toEqual({ message: 'unrecognized quota limit subject: [subject: ]', url: SWAGGER });
      const unknown = await get(user, '/user/quota/check?subject=size:everything').expect(422);
      expect(unknown.body.message).toBe('unrecognized quota limit subject: [subject: size:everything]');
      expect((await get(user, '/user/quota/check?subject=Size:All').expect(422)).body.message).toBe('unrecognized quota limit subject: [subject: Size:All]');
    });

    it('answers a JSON boolean: false within quota, true for none (never covered)', async () => {
      const user = await makeUser(t);
      const response = await get(user, '/user/quota/check?subject=size:repos:all').expect(200);
      expect(response.headers['content-type']).toMatch(/^application\/json/);
      expect(response.text.trim()).toBe('false');
      expect(await check(user, 'none')).toBe(true);
      expect(await check(user, 'size:all')).toBe(false);
    });

    it('a usage equal to the limit is over quota; one byte more is within', async () => {
      const user = await makeUser(t);
      await makeRepo(t, user, { autoInit: true });
      const usage = (await storedSizes(user.user.id)).public;
      const rule = await limitTo([user.name], usage);
      expect(await check(user, 'size:repos:all')).toBe(true);
      expect(await check(user, 'size:repos:public')).toBe(true);
      expect(await check(user, 'size:all')).toBe(true);
      await adm.patch(`/admin/quota/rules/${rule}`, { limit: usage + 1 }).expect(200);
      expect(await check(user, 'size:repos:all')).toBe(false);
      // size:all is not covered by a size:repos:all rule (parents, not children, are walked): refused.
      expect(await check(user, 'size:all')).toBe(true);
      await adm.patch(`/admin/quota/rules/${rule}`, { limit: 0 }).expect(200);
      expect(await check(user, 'size:repos:all')).toBe(true);
      await adm.patch(`/admin/quota/rules/${rule}`, { limit: -1 }).expect(200);
      expect(await check(user, 'size:repos:all')).toBe(false);
    });

    it('a subject no rule covers is refused: a group with only an LFS rule refuses size:repos:all', async () => {
      const user = await makeUser(t);
      await limitTo([user.name], -1, ['size:git:lfs']);
      expect(await check(user, 'size:git:lfs')).toBe(false);
      expect(await check(user, 'size:repos:all')).toBe(true);
      const refused = await t.http
        .post(t.api('/user/repos'))
        .set(withToken(user.token))
        .send({ name: uniqueName('r') })
        .expect(413);
      expect(refused.body).toEqual({ message: 'quota exceeded', user_id: user.user.id, username: user.name, url: SWAGGER });
    });

    it('one matching rule refusing makes its group refuse; another group may still allow', async () => {
      const user = await makeUser(t);
      const group = uniqueName('grp');
      await adm
        .post('/admin/quota/groups', {
          name: group,
          rules: [
            { name: uniqueName('rule'), limit: -1, subjects: ['size:all'] },
            { name: uniqueName('rule'), limit: 0, subjects: ['size:repos:private'] },
          ],
        })
        .expect(201);
      await adm.put(`/admin/quota/groups/${group}/users/${user.name}`).expect(204);
      expect(await check(user, 'size:repos:private')).toBe(true);
      expect(await check(user, 'size:repos:public')).toBe(false);
      await limitTo([user.name], -1, ['size:repos:private']);
      expect(await check(user, 'size:repos:private')).toBe(false);
    });
  });

  describe('usage lists', () => {
    it('attachments, packages and artifacts are empty lists with X-Total-Count 0', async () => {
      const user = await makeUser(t);
      for (const list of ['attachments', 'packages', 'artifacts']) {
        const response = await get(user, `/user/quota/${list}?page=1&limit=5`).expect(200);
        expect(response.body).toEqual([]);
        expect(response.headers['x-total-count']).toBe('0');
        expect(response.headers.link).toBeUndefined();
      }
      await t.http.get(t.api('/user/quota/artifacts')).expect(401);
    });
  });

  describe('enforcement', () => {
    it('POST /user/repos over quota → 413 with the body of 11.6, and nothing is left behind', async () => {
      const user = await makeUser(t);
      await makeRepo(t, user, { autoInit: true });
      await limitTo([user.name], (await storedSizes(user.user.id)).public);
      const name = uniqueName('refused');
      const response = await t.http.post(t.api('/user/repos')).set(withToken(user.token)).send({ name, auto_init: true }).expect(413);
      expect(response.body).toEqual({ message: 'quota exceeded', user_id: user.user.id, username: user.name, url: SWAGGER });
      expect(await t.dataSource.getRepository(RepositoryEntity).countBy({ ownerId: user.user.id })).toBe(1);
      expect(fs.existsSync(repositoryDir(t.dataDir, user.name, name))).toBe(false);
      expectEmpty404(await get(user, `/repos/${user.name}/${name}`));
      // The body is checked before quota.
      expect((await t.http.post(t.api('/user/repos')).set(withToken(user.token)).send({}).expect(422)).body.message).toBe('[Name]: Required');
    });

    it('POST /repos/{o}/{r}/forks over quota → 413, and no fork, directory or count is left', async () => {
      const owner = await makeUser(t);
      const source = await makeRepo(t, owner, { autoInit: true });
      const user = await makeUser(t);
      await makeRepo(t, user, { autoInit: true });
      await limitTo([user.name], (await storedSizes(user.user.id)).public);
      const response = await t.http
        .post(t.api(`/repos/${source.full_name}/forks`))
        .set(withToken(user.token))
        .send({})
        .expect(413);
      expect(response.body).toEqual({ message: 'quota exceeded', user_id: user.user.id, username: user.name, url: SWAGGER });
      expect(await t.dataSource.getRepository(RepositoryEntity).countBy({ ownerId: user.user.id })).toBe(1);
      expect(fs.existsSync(repositoryDir(t.dataDir, user.name, source.name))).toBe(false);
      expect((await get(owner, `/repos/${source.full_name}`).expect(200)).body.forks_count).toBe(0);
      expect((await get(owner, `/repos/${source.full_name}/forks`).expect(200)).body).toEqual([]);
    });

    it('one creation may take usage over the limit; the next one is refused', async () => {
      const user = await makeUser(t);
      await limitTo([user.name], 1);
      await makeRepo(t, user, { autoInit: true });
      expect(await check(user, 'size:repos:all')).toBe(true);
      await t.http
        .post(t.api('/user/repos'))
        .set(withToken(user.token))
        .send({ name: uniqueName('r') })
        .expect(413);
    });

    it('deleting a repository brings the owner back under quota', async () => {
      const user = await makeUser(t);
      const repo = await makeRepo(t, user, { autoInit: true });
      await limitTo([user.name], 1);
      await t.http
        .post(t.api('/user/repos'))
        .set(withToken(user.token))
        .send({ name: uniqueName('r') })
        .expect(413);
      await t.http
        .delete(t.api(`/repos/${user.name}/${repo.name}`))
        .set(withToken(user.token))
        .expect(204);
      expect(await check(user, 'size:repos:all')).toBe(false);
      await makeRepo(t, user);
    });

    it('an organisation over quota refuses repositories in it while its owner is under quota', async () => {
      const owner = await makeUser(t);
      const org = await makeOrg(t, owner.user);
      await limitTo([org.name], 0);
      const current = await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(owner.token))
        .send({ name: uniqueName('r') })
        .expect(413);
      expect(current.body).toEqual({ message: 'quota exceeded', user_id: org.id, username: org.name, url: SWAGGER });
      const deprecated = await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .set(withToken(owner.token))
        .send({ name: uniqueName('r') })
        .expect(413);
      expect(deprecated.body).toEqual({ message: 'quota exceeded', user_id: org.id, username: org.name, url: SWAGGER });
      expect(await t.dataSource.getRepository(RepositoryEntity).countBy({ ownerId: org.id })).toBe(0);
      expect(await check(owner, 'size:repos:all')).toBe(false);
      await makeRepo(t, owner);
      // Quota (413) comes before the permission check (403) for organisations.
      const outsider = await makeUser(t);
      await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(outsider.token))
        .send({ name: uniqueName('r') })
        .expect(413);
    });

    it('the user’s own quota does not block creation in an organisation under quota', async () => {
      const owner = await makeUser(t);
      const org = await makeOrg(t, owner.user);
      await limitTo([owner.name], 0);
      await t.http
        .post(t.api('/user/repos'))
        .set(withToken(owner.token))
        .send({ name: uniqueName('r') })
        .expect(413);
      await makeRepo(t, owner, { org: org.name });
    });
  });

  describe('organisation views', () => {
    let owner: TestUser;
    let outsider: TestUser;
    let orgName: string;

    beforeAll(async () => {
      owner = await makeUser(t);
      outsider = await makeUser(t);
      orgName = (await makeOrg(t, owner.user)).name;
    });

    it('owners get the same shapes as the user views, without names', async () => {
      await limitTo([orgName], 500, ['size:all']);
      expect((await get(owner, `/orgs/${orgName}/quota`).expect(200)).body).toEqual({
        used: usedSize({ public: 0, private: 0 }),
        groups: [{ rules: [{ limit: 500, subjects: ['size:all'] }] }],
      });
      expect((await get(owner, `/orgs/${orgName}/quota/check?subject=size:repos:all`).expect(200)).body).toBe(false);
      expect((await get(owner, `/orgs/${orgName}/quota/check?subject=none`).expect(200)).body).toBe(true);
      expect((await get(owner, `/orgs/${orgName}/quota/check?subject=bogus`).expect(422)).body.message).toBe(
        'unrecognized quota limit subject: [subject: bogus]',
      );
      for (const list of ['attachments', 'packages', 'artifacts']) {
        const response = await get(owner, `/orgs/${orgName}/quota/${list}`).expect(200);
        expect(response.body).toEqual([]);
        expect(response.headers['x-total-count']).toBe('0');
      }
      // Site admins may look too.
      await get(admin, `/orgs/${orgName}/quota`).expect(200);
    });

    it('a signed-in non-owner → 403; anonymous → 401; unknown or invisible organisation → 404', async () => {
      for (const suffix of ['', '/check?subject=size:all', '/attachments', '/packages', '/artifacts']) {
        const refused = await get(outsider, `/orgs/${orgName}/quota${suffix}`).expect(403);
        expect(refused.body).toEqual({ message: 'user should be an owner of the organization', url: SWAGGER });
        await t.http.get(t.api(`/orgs/${orgName}/quota${suffix}`)).expect(401);
        expectEmpty404(await get(owner, `/orgs/no-such-org/quota${suffix}`));
      }
      const hidden = await makeOrg(t, owner.user, { visibility: 'private' });
      expectEmpty404(await get(outsider, `/orgs/${hidden.name}/quota`));
      expectEmpty404(await get(owner, `/orgs/${owner.name}/quota`));
    });

    it('needs the organization scope (403)', async () => {
      const userOnly = await makeToken(t, owner.user, ['read:user']);
      const response = await t.http
        .get(t.api(`/orgs/${orgName}/quota`))
        .set(withToken(userOnly))
        .expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [read:organization]');
    });
  });
});

describe('quota defaults', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ QUOTA_DEFAULT_GROUPS: 'standard, not-created', QUOTA_DEFAULT_TOTAL: '0' });
  });
  afterAll(() => t.close());

  it('the built-in size:all rule applies while no default group exists, and is never listed', async () => {
    const user = await makeUser(t);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(user.token)).expect(200)).body.groups).toEqual([]);
    expect((await t.http.get(t.api('/user/quota/check?subject=size:assets:all')).set(withToken(user.token)).expect(200)).body).toBe(true);
    const refused = await t.http.post(t.api('/user/repos')).set(withToken(user.token)).send({ name: 'first' }).expect(413);
    expect(refused.body).toEqual({ message: 'quota exceeded', user_id: user.user.id, username: user.name, url: SWAGGER });
  });

  it('existing default groups replace the built-in rule; explicit groups replace the defaults', async () => {
    const admin = await makeUser(t, { admin: true });
    for (const list of ['/admin/quota/rules', '/admin/quota/groups']) {
      const empty = await t.http.get(t.api(list)).set(withToken(admin.token)).expect(200);
      expect(empty.body).toEqual([]);
      expect(empty.headers['x-total-count']).toBe('0');
    }
    const user = await makeUser(t);
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: 'standard', rules: [{ name: 'std', limit: -1, subjects: ['size:all'] }] })
      .expect(201);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(user.token)).expect(200)).body.groups).toEqual([
      { rules: [{ limit: -1, subjects: ['size:all'] }] },
    ]);
    expect(
      (
        await t.http
          .get(t.api(`/admin/users/${user.name}/quota`))
          .set(withToken(admin.token))
          .expect(200)
      ).body.groups,
    ).toEqual([{ name: 'standard', rules: [{ name: 'std', limit: -1, subjects: ['size:all'] }] }]);
    await makeRepo(t, user);
    await t.http
      .post(t.api('/admin/quota/groups'))
      .set(withToken(admin.token))
      .send({ name: 'tight', rules: [{ name: 'none-left', limit: 0, subjects: ['size:repos:all'] }] })
      .expect(201);
    await t.http
      .put(t.api(`/admin/quota/groups/tight/users/${user.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect((await t.http.get(t.api('/user/quota')).set(withToken(user.token)).expect(200)).body.groups).toEqual([
      { rules: [{ limit: 0, subjects: ['size:repos:all'] }] },
    ]);
    await t.http.post(t.api('/user/repos')).set(withToken(user.token)).send({ name: 'second' }).expect(413);
  });
});

describe('QUOTA_ENABLED=false', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ QUOTA_ENABLED: 'false', QUOTA_DEFAULT_TOTAL: '0' });
  });
  afterAll(() => t.close());

  it('removes every quota route (404, empty body)', async () => {
    const admin = await makeUser(t, { admin: true });
    const org = await makeOrg(t, admin.user);
    const paths = [
      ['get', '/admin/quota/rules'],
      ['post', '/admin/quota/rules'],
      ['get', '/admin/quota/rules/x'],
      ['patch', '/admin/quota/rules/x'],
      ['delete', '/admin/quota/rules/x'],
      ['get', '/admin/quota/groups'],
      ['post', '/admin/quota/groups'],
      ['get', '/admin/quota/groups/x'],
      ['delete', '/admin/quota/groups/x'],
      ['put', '/admin/quota/groups/x/rules/y'],
      ['delete', '/admin/quota/groups/x/rules/y'],
      ['get', '/admin/quota/groups/x/users'],
      ['put', `/admin/quota/groups/x/users/${admin.name}`],
      ['delete', `/admin/quota/groups/x/users/${admin.name}`],
      ['get', `/admin/users/${admin.name}/quota`],
      ['post', `/admin/users/${admin.name}/quota/groups`],
      ['get', '/user/quota'],
      ['get', '/user/quota/check?subject=size:all'],
      ['get', '/user/quota/attachments'],
      ['get', '/user/quota/packages'],
      ['get', '/user/quota/artifacts'],
      ['get', `/orgs/${org.name}/quota`],
      ['get', `/orgs/${org.name}/quota/check?subject=size:all`],
      ['get', `/orgs/${org.name}/quota/attachments`],
      ['get', `/orgs/${org.name}/quota/packages`],
      ['get', `/orgs/${org.name}/quota/artifacts`],
    ] as const;
    for (const [method, apiPath] of paths) {
      const response = await t.http[method](t.api(apiPath)).set(withToken(admin.token)).send({ name: 'x', limit: 1 });
      expect(`${method} ${apiPath} ${response.status} ${response.text}`).toBe(`${method} ${apiPath} 404 `);
    }
  });

  it('enforces nothing: a zero default total refuses no repository', async () => {
    const user = await makeUser(t);
    const org = await makeOrg(t, user.user);
    await makeRepo(t, user);
    await makeRepo(t, user);
    await makeRepo(t, user, { org: org.name });
  });
});
