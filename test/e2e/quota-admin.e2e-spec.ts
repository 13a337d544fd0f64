import { QuotaGroupMappingEntity, QuotaGroupRuleEntity, QuotaRuleEntity, QuotaGroupEntity } from '../../src/quota/quota.entities';
import { makeOrg, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/** Administrator quota rules and groups (docs/quota.md). */
describe('admin quota rules and groups', () => {
  let t: TestApp;
  let admin: TestUser;
  let otherAdmin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    otherAdmin = await makeUser(t, { admin: true });
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  const as = (user: TestUser) => ({
    get: (path: string) => t.http.get(t.api(path)).set(withToken(user.token)),
    post: (path: string, body?: unknown) =>
      t.http
        .post(t.api(path))
        .set(withToken(user.token))
        .send(body as object),
    patch: (path: string, body?: unknown) =>
      t.http
        .patch(t.api(path))
        .set(withToken(user.token))
        .send(body as object),
    put: (path: string) => t.http.put(t.api(path)).set(withToken(user.token)),
    delete: (path: string) => t.http.delete(t.api(path)).set(withToken(user.token)),
  });
  const adm = () => as(admin);
  const rawJson = (method: 'post' | 'patch', path: string, text: string) =>
    t.http[method](t.api(path)).set(withToken(admin.token)).set('Content-Type', 'application/json').send(text);

  async function createRule(body: Record<string, unknown>): Promise<Record<string, any>> {
    return (await adm().post('/admin/quota/rules', body).expect(201)).body;
  }

  function expectEmpty404(response: { status: number; text: string }): void {
    expect(response.status).toBe(404);
    expect(response.text).toBe('');
  }

  describe('auth', () => {
    it('anonymous → 401, a non-admin → 403, a token without the admin scope → 403', async () => {
      const anonymous = await t.http.get(t.api('/admin/quota/rules')).expect(401);
      expect(anonymous.body).toEqual({ message: 'token is required', url: 'http://anvil.test/api/swagger' });
      const notAdmin = await as(alice).get('/admin/quota/rules').expect(403);
      expect(notAdmin.body.message).toBe('user should be the site admin');
      const userScope = await makeToken(t, admin.user, ['read:user']);
      const scoped = await t.http.get(t.api('/admin/quota/groups')).set(withToken(userScope)).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [read:admin]');
      const readOnly = await makeToken(t, admin.user, ['read:admin']);
      await t.http.get(t.api('/admin/quota/rules')).set(withToken(readOnly)).expect(200);
      const write = await t.http.post(t.api('/admin/quota/rules')).set(withToken(readOnly)).send({ name: 'x', limit: 1 }).expect(403);
      expect(write.body.message).toBe('token does not have at least one of required scope(s): [write:admin]');
    });
  });

  describe('rules', () => {
    it('creates a rule: 201 QuotaRuleInfo with its name; subjects kept in order with duplicates', async () => {
      const name = uniqueName('rule');
      const subjects = ['size:repos:public', 'size:all', 'size:repos:public'];
      const response = await adm().post('/admin/quota/rules', { name, limit: 1024, subjects }).expect(201);
      expect(response.body).toEqual({ name, limit: 1024, subjects });
      expect((await adm().get(`/admin/quota/rules/${name}`).expect(200)).body).toEqual({ name, limit: 1024, subjects });
    });

    it('omits subjects when there are none', async () => {
      const name = uniqueName('rule');
      expect(await createRule({ name, limit: -1 })).toEqual({ name, limit: -1 });
      expect(await createRule({ name: uniqueName('rule'), limit: 0, subjects: [] })).not.toHaveProperty('subjects');
    });

    it('checks the body in order: name, limit, subjects, then the name lookup', async () => {
      const message = async (body: unknown) => (await adm().post('/admin/quota/rules', body).expect(422)).body.message;
      expect(await message({})).toBe('[Name]: Required');
      expect(await message({ name: '', limit: 1 })).toBe('[Name]: Required');
      expect(await message({ name: 'x' })).toBe('[Limit]: Required');
      expect(await message({ name: 'x', limit: null })).toBe('[Limit]: Required');
      expect(await message({ name: 'x', limit: 'big' })).toBe('[Limit]: must be an integer');
      expect(await message({ name: 'x', limit: 1.5 })).toBe('[Limit]: must be an integer');
      expect(await message({ name: 'x', limit: 1, subjects: 'size:all' })).toBe('[Subjects]: must be an array of strings');
      expect(await message({ name: 'x', limit: 1, subjects: [1] })).toBe('[Subjects]: must be an array of strings');
      expect(await message({ name: 7, limit: 1 })).toBe('[Name]: must be a string');
    });

    it('refuses names that could not be addressed in a path', async () => {
      for (const name of ['a/b', 'a b', 'a?b', 'a#b', 'a%b', 'tab\there', 'ctl\u0001']) {
        const response = await adm().post('/admin/quota/rules', { name, limit: 1 }).expect(422);
        expect(response.body.message).toBe('[Name]: invalid rule name');
      }
    });

    it('an unrecognized subject → 422 and nothing is created', async () => {
      const name = uniqueName('rule');
      const response = await adm()
        .post('/admin/quota/rules', { name, limit: 1, subjects: ['size:all', 'size:everything'] })
        .expect(422);
      expect(response.body).toEqual({ message: 'unrecognized quota limit subject: [subject: size:everything]', url: 'http://anvil.test/api/swagger' });
      const upper = await adm()
        .post('/admin/quota/rules', { name, limit: 1, subjects: ['SIZE:ALL'] })
        .expect(422);
      expect(upper.body.message).toBe('unrecognized quota limit subject: [subject: SIZE:ALL]');
      expectEmpty404(await adm().get(`/admin/quota/rules/${name}`));
    });

    it('an existing name → 409 rule already exists', async () => {
      const name = uniqueName('rule');
      await createRule({ name, limit: 5 });
      const response = await adm().post('/admin/quota/rules', { name, limit: 6 }).expect(409);
      expect(response.body).toEqual({ message: `rule already exists: [name: ${name}]`, url: 'http://anvil.test/api/swagger' });
      expect((await adm().get(`/admin/quota/rules/${name}`)).body.limit).toBe(5);
    });

    it('malformed JSON → 400 on POST and PATCH', async () => {
      await rawJson('post', '/admin/quota/rules', '{"name":').expect(400);
      const name = uniqueName('rule');
      await createRule({ name, limit: 1 });
      await rawJson('patch', `/admin/quota/rules/${name}`, '{"limit":').expect(400);
    });

    it('GET of an unknown rule → 404 with an empty body', async () => {
      expectEmpty404(await adm().get('/admin/quota/rules/nothing-here'));
    });

    it('PATCH: unknown → 404 even with a bad body; absent and null fields stay; [] clears subjects', async () => {
      expectEmpty404(await rawJson('patch', '/admin/quota/rules/nothing-here', '{bad'));
      expectEmpty404(await adm().patch('/admin/quota/rules/nothing-here', { subjects: ['bogus'] }));
      const name = uniqueName('rule');
      await createRule({ name, limit: 10, subjects: ['size:all'] });
      expect((await adm().patch(`/admin/quota/rules/${name}`, {}).expect(200)).body).toEqual({ name, limit: 10, subjects: ['size:all'] });
      expect((await adm().patch(`/admin/quota/rules/${name}`, { limit: null, subjects: null }).expect(200)).body).toEqual({
        name,
        limit: 10,
        subjects: ['size:all'],
      });
      expect((await adm().patch(`/admin/quota/rules/${name}`, { limit: 20 }).expect(200)).body).toEqual({ name, limit: 20, subjects: ['size:all'] });
      const changed = await adm()
        .patch(`/admin/quota/rules/${name}`, { subjects: ['size:git:lfs', 'size:repos:all'] })
        .expect(200);
      expect(changed.body).toEqual({ name, limit: 20, subjects: ['size:git:lfs', 'size:repos:all'] });
      const cleared = await adm().patch(`/admin/quota/rules/${name}`, { subjects: [] }).expect(200);
      expect(cleared.body).toEqual({ name, limit: 20 });
      expect((await adm().get(`/admin/quota/rules/${name}`)).body).toEqual({ name, limit: 20 });
    });

    it('PATCH with an invalid subject or limit → 422 and nothing changes', async () => {
      const name = uniqueName('rule');
      await createRule({ name, limit: 10, subjects: ['size:all'] });
      const bad = await adm()
        .patch(`/admin/quota/rules/${name}`, { limit: 99, subjects: ['size:all', 'nope'] })
        .expect(422);
      expect(bad.body.message).toBe('unrecognized quota limit subject: [subject: nope]');
      const badLimit = await adm().patch(`/admin/quota/rules/${name}`, { limit: 'lots' }).expect(422);
      expect(badLimit.body.message).toBe('[Limit]: must be an integer');
      expect((await adm().get(`/admin/quota/rules/${name}`)).body).toEqual({ name, limit: 10, subjects: ['size:all'] });
    });

    it('DELETE: 204, removes the rule from every group, then 404', async () => {
      const name = uniqueName('rule');
      await createRule({ name, limit: 1, subjects: ['size:all'] });
      const groups = [uniqueName('grp'), uniqueName('grp')];
      for (const group of groups)
        await adm()
          .post('/admin/quota/groups', { name: group, rules: [{ name }] })
          .expect(201);
      await adm().delete(`/admin/quota/rules/${name}`).expect(204);
      expectEmpty404(await adm().get(`/admin/quota/rules/${name}`));
      for (const group of groups) expect((await adm().get(`/admin/quota/groups/${group}`).expect(200)).body).toEqual({ name: group, rules: [] });
      expectEmpty404(await adm().delete(`/admin/quota/rules/${name}`));
    });

    it('lists rules with names, paged with X-Total-Count and Link', async () => {
      const all = await adm().get('/admin/quota/rules?limit=50').expect(200);
      const total = Number(all.headers['x-total-count']);
      expect(all.body).toHaveLength(Math.min(total, 50));
      expect(all.body.every((rule: Record<string, unknown>) => typeof rule.name === 'string')).toBe(true);
      const page = await adm().get('/admin/quota/rules?limit=2&page=2').expect(200);
      expect(page.body).toEqual(all.body.slice(2, 4));
      expect(page.headers['x-total-count']).toBe(String(total));
      expect(page.headers.link).toContain('rel="first"');
      expect(page.headers.link).toContain('rel="prev"');
    });

    it('two admins creating the same rule at once: one 201, one 409', async () => {
      for (let round = 0; round < 4; round++) {
        const name = uniqueName('race');
        const answers = await Promise.all([
          as(admin).post('/admin/quota/rules', { name, limit: 1, subjects: ['size:all'] }),
          as(otherAdmin).post('/admin/quota/rules', { name, limit: 2, subjects: ['size:all'] }),
        ]);
        expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
        expect(answers.find((answer) => answer.status === 409)!.body.message).toBe(`rule already exists: [name: ${name}]`);
        expect(await t.dataSource.getRepository(QuotaRuleEntity).countBy({ name })).toBe(1);
      }
    });
  });

  describe('groups', () => {
    it('two admins creating the same group at once: one 201, one 409, and the inline rule exists once', async () => {
      for (let round = 0; round < 3; round++) {
        const name = uniqueName('race');
        const rule = uniqueName('race');
        const body = { name, rules: [{ name: rule, limit: 1, subjects: ['size:all'] }] };
        const answers = await Promise.all([as(admin).post('/admin/quota/groups', body), as(otherAdmin).post('/admin/quota/groups', body)]);
        expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409]);
        expect(answers.find((answer) => answer.status === 409)!.body.message).toBe(`group already exists: [name: ${name}]`);
        expect(await t.dataSource.getRepository(QuotaRuleEntity).countBy({ name: rule })).toBe(1);
        expect((await adm().get(`/admin/quota/groups/${name}`).expect(200)).body.rules).toEqual([{ name: rule, limit: 1, subjects: ['size:all'] }]);
      }
    });

    it('creates an empty group: 201 {name, rules: []}; name required; 409 when it exists', async () => {
      const name = uniqueName('grp');
      expect((await adm().post('/admin/quota/groups', { name }).expect(201)).body).toEqual({ name, rules: [] });
      expect((await adm().post('/admin/quota/groups', {}).expect(422)).body.message).toBe('[Name]: Required');
      expect((await adm().post('/admin/quota/groups', { name: 'a/b' }).expect(422)).body.message).toBe('[Name]: invalid group name');
      const again = await adm().post('/admin/quota/groups', { name }).expect(409);
      expect(again.body).toEqual({ message: `group already exists: [name: ${name}]`, url: 'http://anvil.test/api/swagger' });
      await rawJson('post', '/admin/quota/groups', '[').expect(400);
    });

    it('attaches existing rules unchanged, creates missing ones (limit 0, no subjects), each rule once', async () => {
      const existing = uniqueName('rule');
      await createRule({ name: existing, limit: 77, subjects: ['size:all'] });
      const fresh = uniqueName('rule');
      const bare = uniqueName('rule');
      const name = uniqueName('grp');
      const response = await adm()
        .post('/admin/quota/groups', {
          name,
          rules: [
            { name: existing, limit: 1, subjects: ['size:git:lfs'] },
            { name: fresh, limit: 5, subjects: ['size:repos:all'] },
            { name: bare },
            { name: existing },
          ],
        })
        .expect(201);
      expect(response.body).toEqual({
        name,
        rules: [
          { name: existing, limit: 77, subjects: ['size:all'] },
          { name: fresh, limit: 5, subjects: ['size:repos:all'] },
          { name: bare, limit: 0 },
        ],
      });
      expect((await adm().get(`/admin/quota/rules/${existing}`)).body).toEqual({ name: existing, limit: 77, subjects: ['size:all'] });
      expect((await adm().get(`/admin/quota/groups/${name}`).expect(200)).body).toEqual(response.body);
    });

    it('checks inline rules before the group name; a bad one creates nothing', async () => {
      const name = uniqueName('grp');
      const fresh = uniqueName('rule');
      const missing = await adm()
        .post('/admin/quota/groups', { name, rules: [{ name: fresh, limit: 1 }, { limit: 1 }] })
        .expect(422);
      expect(missing.body.message).toBe('[Rules[1].Name]: Required');
      const bad = await adm()
        .post('/admin/quota/groups', { name, rules: [{ name: fresh, limit: 1, subjects: ['size:bogus'] }] })
        .expect(422);
      expect(bad.body.message).toBe('unrecognized quota limit subject: [subject: size:bogus]');
      expectEmpty404(await adm().get(`/admin/quota/groups/${name}`));
      expectEmpty404(await adm().get(`/admin/quota/rules/${fresh}`));
      const existingGroup = uniqueName('grp');
      await adm().post('/admin/quota/groups', { name: existingGroup }).expect(201);
      const order = await adm()
        .post('/admin/quota/groups', { name: existingGroup, rules: [{}] })
        .expect(422);
      expect(order.body.message).toBe('[Rules[0].Name]: Required');
      await adm()
        .post('/admin/quota/groups', { name: existingGroup, rules: [{ name: fresh }] })
        .expect(409);
      expectEmpty404(await adm().get(`/admin/quota/rules/${fresh}`));
    });

    it('GET unknown → 404; the list has names and rules, paged', async () => {
      expectEmpty404(await adm().get('/admin/quota/groups/none-such'));
      const list = await adm().get('/admin/quota/groups?limit=1').expect(200);
      expect(list.body).toHaveLength(1);
      expect(list.body[0]).toEqual({ name: expect.any(String), rules: expect.any(Array) });
      expect(Number(list.headers['x-total-count'])).toBeGreaterThan(1);
      expect(list.headers.link).toContain('rel="next"');
    });

    it('PUT and DELETE a rule in a group: 204, 409 when already there, 404 when not there or unknown', async () => {
      const group = uniqueName('grp');
      const rule = uniqueName('rule');
      await adm().post('/admin/quota/groups', { name: group }).expect(201);
      await createRule({ name: rule, limit: 3, subjects: ['size:all'] });
      expectEmpty404(await adm().put(`/admin/quota/groups/none-such/rules/${rule}`));
      expectEmpty404(await adm().put(`/admin/quota/groups/${group}/rules/none-such`));
      await adm().put(`/admin/quota/groups/${group}/rules/${rule}`).expect(204);
      const again = await adm().put(`/admin/quota/groups/${group}/rules/${rule}`).expect(409);
      expect(again.body.message).toBe(`rule already in group: [group: ${group}, rule: ${rule}]`);
      expect((await adm().get(`/admin/quota/groups/${group}`)).body).toEqual({ name: group, rules: [{ name: rule, limit: 3, subjects: ['size:all'] }] });
      expectEmpty404(await adm().delete(`/admin/quota/groups/none-such/rules/${rule}`));
      expectEmpty404(await adm().delete(`/admin/quota/groups/${group}/rules/none-such`));
      await adm().delete(`/admin/quota/groups/${group}/rules/${rule}`).expect(204);
      expectEmpty404(await adm().delete(`/admin/quota/groups/${group}/rules/${rule}`));
      expect((await adm().get(`/admin/quota/rules/${rule}`).expect(200)).body.name).toBe(rule);
    });

    it('users of a group: PUT (users and organisations), 409 when already in, list in the admin view, DELETE', async () => {
      const group = uniqueName('grp');
      await adm().post('/admin/quota/groups', { name: group }).expect(201);
      const bob = await makeUser(t);
      const org = await makeOrg(t, bob.user);
      expect((await adm().get(`/admin/quota/groups/${group}/users`).expect(200)).body).toEqual([]);
      expectEmpty404(await adm().put(`/admin/quota/groups/none-such/users/${bob.name}`));
      expectEmpty404(await adm().put(`/admin/quota/groups/${group}/users/nobody-here`));
      await adm().put(`/admin/quota/groups/${group}/users/${org.name}`).expect(204);
      await adm().put(`/admin/quota/groups/${group}/users/${bob.name.toUpperCase()}`).expect(204);
      const again = await adm().put(`/admin/quota/groups/${group}/users/${bob.name}`).expect(409);
      expect(again.body.message).toBe(`user already in group: [group: ${group}, userID: ${bob.user.id}]`);
      const list = await adm().get(`/admin/quota/groups/${group}/users`).expect(200);
      expect(list.headers['x-total-count']).toBe('2');
      expect(list.body.map((user: { id: number }) => user.id)).toEqual([bob.user.id, org.id]);
      expect(list.body[0]).toMatchObject({ login: bob.name, email: bob.email });
      expect(list.body[1]).toMatchObject({ login: org.name, username: org.name });
      expectEmpty404(await adm().get('/admin/quota/groups/none-such/users'));
      expectEmpty404(await adm().delete(`/admin/quota/groups/none-such/users/${bob.name}`));
      expectEmpty404(await adm().delete(`/admin/quota/groups/${group}/users/nobody-here`));
      await adm().delete(`/admin/quota/groups/${group}/users/${bob.name}`).expect(204);
      expectEmpty404(await adm().delete(`/admin/quota/groups/${group}/users/${bob.name}`));
      expect((await adm().get(`/admin/quota/groups/${group}/users`)).body.map((user: { id: number }) => user.id)).toEqual([org.id]);
    });

    it('DELETE a group: 204, its rule links and user mappings go, its rules stay; then 404', async () => {
      const group = uniqueName('grp');
      const rule = uniqueName('rule');
      await adm()
        .post('/admin/quota/groups', { name: group, rules: [{ name: rule, limit: 9, subjects: ['size:all'] }] })
        .expect(201);
      const carol = await makeUser(t);
      await adm().put(`/admin/quota/groups/${group}/users/${carol.name}`).expect(204);
      expect((await adm().get(`/admin/users/${carol.name}/quota`)).body.groups).toHaveLength(1);
      await adm().delete(`/admin/quota/groups/${group}`).expect(204);
      expectEmpty404(await adm().get(`/admin/quota/groups/${group}`));
      expectEmpty404(await adm().delete(`/admin/quota/groups/${group}`));
      expect((await adm().get(`/admin/users/${carol.name}/quota`)).body.groups).toEqual([]);
      expect((await adm().get(`/admin/quota/rules/${rule}`).expect(200)).body.limit).toBe(9);
    });
  });

  describe('POST /admin/users/{username}/quota/groups', () => {
    it('replaces the explicit groups; unknown group → 422 and nothing changes; [] empties; absent or null → no change', async () => {
      const dave = await makeUser(t);
      const [g1, g2, g3] = [uniqueName('grp'), uniqueName('grp'), uniqueName('grp')];
      for (const name of [g1, g2, g3]) await adm().post('/admin/quota/groups', { name }).expect(201);
      const names = async () => (await adm().get(`/admin/users/${dave.name}/quota`).expect(200)).body.groups.map((group: { name: string }) => group.name);
      await adm()
        .post(`/admin/users/${dave.name}/quota/groups`, { groups: [g2, g1, g2] })
        .expect(204);
      expect((await names()).sort()).toEqual([g1, g2].sort());
      const unknown = await adm()
        .post(`/admin/users/${dave.name}/quota/groups`, { groups: [g3, 'no-such-group'] })
        .expect(422);
      expect(unknown.body.message).toBe('group not found: [group: no-such-group]');
      expect((await names()).sort()).toEqual([g1, g2].sort());
      await adm().post(`/admin/users/${dave.name}/quota/groups`, {}).expect(204);
      await adm().post(`/admin/users/${dave.name}/quota/groups`, { groups: null }).expect(204);
      expect((await names()).sort()).toEqual([g1, g2].sort());
      await adm()
        .post(`/admin/users/${dave.name}/quota/groups`, { groups: [g3] })
        .expect(204);
      expect(await names()).toEqual([g3]);
      await adm().post(`/admin/users/${dave.name}/quota/groups`, { groups: [] }).expect(204);
      expect(await names()).toEqual([]);
    });

    it('unknown user → 404 before the body; a bad body → 400/422', async () => {
      expectEmpty404(await rawJson('post', '/admin/users/nobody-here/quota/groups', '{bad'));
      await rawJson('post', `/admin/users/${alice.name}/quota/groups`, '{bad').expect(400);
      const wrong = await adm().post(`/admin/users/${alice.name}/quota/groups`, { groups: 'g' }).expect(422);
      expect(wrong.body.message).toBe('[Groups]: must be an array of strings');
    });

    it('works for organisations', async () => {
      const org = await makeOrg(t, alice.user);
      const group = uniqueName('grp');
      await adm().post('/admin/quota/groups', { name: group }).expect(201);
      await adm()
        .post(`/admin/users/${org.name}/quota/groups`, { groups: [group] })
        .expect(204);
      expect((await adm().get(`/admin/quota/groups/${group}/users`)).body.map((user: { id: number }) => user.id)).toEqual([org.id]);
    });
  });

  describe('GET /admin/users/{username}/quota', () => {
    it('answers QuotaInfo with group and rule names; unknown → 404', async () => {
      const erin = await makeUser(t);
      const group = uniqueName('grp');
      const rule = uniqueName('rule');
      await adm()
        .post('/admin/quota/groups', { name: group, rules: [{ name: rule, limit: 4096, subjects: ['size:repos:all'] }] })
        .expect(201);
      await adm().put(`/admin/quota/groups/${group}/users/${erin.name}`).expect(204);
      const response = await adm().get(`/admin/users/${erin.name}/quota`).expect(200);
      expect(response.body).toEqual({
        used: {
          size: { repos: { public: 0, private: 0 }, git: { LFS: 0 }, assets: { attachments: { issues: 0, releases: 0 }, artifacts: 0, packages: { all: 0 } } },
        },
        groups: [{ name: group, rules: [{ name: rule, limit: 4096, subjects: ['size:repos:all'] }] }],
      });
      expectEmpty404(await adm().get('/admin/users/nobody-here/quota'));
      expect((await as(alice).get(`/admin/users/${erin.name}/quota`).expect(403)).body.message).toBe('user should be the site admin');
    });
  });

  describe('consistency under concurrency', () => {
    it('linking, deleting and re-creating rules and groups in parallel never leaves a link to a missing rule or group', async () => {
      const frank = await makeUser(t);
      for (let round = 0; round < 6; round++) {
        const rule = uniqueName('crule');
        const group = uniqueName('cgrp');
        await createRule({ name: rule, limit: 1, subjects: ['size:all'] });
        await adm().post('/admin/quota/groups', { name: group }).expect(201);
        const answers = await Promise.all([
          as(admin).put(`/admin/quota/groups/${group}/rules/${rule}`),
          as(otherAdmin).delete(`/admin/quota/rules/${rule}`),
          as(admin).post('/admin/quota/groups', { name: uniqueName('cgrp'), rules: [{ name: rule, limit: 2 }] }),
          as(otherAdmin).put(`/admin/quota/groups/${group}/users/${frank.name}`),
          as(admin).delete(`/admin/quota/groups/${group}`),
        ]);
        for (const answer of answers) expect([201, 204, 404]).toContain(answer.status);
      }
      const links = await t.dataSource.getRepository(QuotaGroupRuleEntity).find();
      const rules = new Set((await t.dataSource.getRepository(QuotaRuleEntity).find()).map((rule) => rule.id));
      const groups = new Set((await t.dataSource.getRepository(QuotaGroupEntity).find()).map((group) => group.id));
      expect(links.filter((link) => !rules.has(link.ruleId) || !groups.has(link.groupId))).toEqual([]);
      const mappings = await t.dataSource.getRepository(QuotaGroupMappingEntity).find();
      expect(mappings.filter((mapping) => !groups.has(mapping.groupId))).toEqual([]);
    });

    it('deleting a user removes their group mappings', async () => {
      const gina = await makeUser(t);
      const group = uniqueName('grp');
      await adm().post('/admin/quota/groups', { name: group }).expect(201);
      await adm().put(`/admin/quota/groups/${group}/users/${gina.name}`).expect(204);
      await adm().delete(`/admin/users/${gina.name}`).expect(204);
      expect(await t.dataSource.getRepository(QuotaGroupMappingEntity).countBy({ targetId: gina.user.id })).toBe(0);
      expect((await adm().get(`/admin/quota/groups/${group}/users`)).body).toEqual([]);
    });
  });
});
