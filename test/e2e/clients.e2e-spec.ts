import type { AddressInfo } from 'node:net';
import { giteaApi } from 'gitea-js';
import { makeUser, TestUser, uniqueName } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Forgejo/Gitea clients against a running Anvil: each test here backs one line of the README's client
 * compatibility list, and only what these tests do is claimed there.
 */
describe('clients', () => {
  let t: TestApp;
  let alice: TestUser;
  let base: string;

  beforeAll(async () => {
    t = await startTestApp();
    alice = await makeUser(t);
    await t.app.listen(0, '127.0.0.1');
    base = `http://127.0.0.1:${(t.app.getHttpServer().address() as AddressInfo).port}`;
  });
  afterAll(() => t.close());

  it('gitea-js (the TypeScript SDK generated from Gitea’s OpenAPI document): version, user, organisation, repositories, stars, search, markdown', async () => {
    const api = giteaApi(base, { token: alice.token, customFetch: fetch });
    expect((await api.version.getVersion()).data.version).toMatch(/^\d+\.\d+\.\d+/);
    expect((await api.user.userGetCurrent()).data.login).toBe(alice.name);

    const orgName = uniqueName('org');
    expect((await api.orgs.orgCreate({ username: orgName })).data.username).toBe(orgName);
    const inOrg = (await api.orgs.createOrgRepo(orgName, { name: 'tools', auto_init: true })).data;
    expect(inOrg.full_name).toBe(`${orgName}/tools`);
    expect(inOrg.default_branch).toBe('main');

    const mine = (await api.user.createCurrentUserRepo({ name: 'notes', description: 'first', private: false })).data;
    expect(mine.owner?.login).toBe(alice.name);
    const renamed = (await api.repos.repoEdit(alice.name, 'notes', { name: 'journal', description: 'renamed' })).data;
    expect(renamed).toMatchObject({ id: mine.id, name: 'journal', description: 'renamed' });
    expect((await api.repos.repoGet(alice.name, 'journal')).data.id).toBe(mine.id);

    await api.user.userCurrentPutStar(orgName, 'tools');
    expect((await api.user.userCurrentListStarred()).data.map((repo) => repo.full_name)).toEqual([`${orgName}/tools`]);
    const found = (await api.repos.repoSearch({ q: 'journal' })).data;
    expect(found.ok).toBe(true);
    expect(found.data?.map((repo) => repo.full_name)).toEqual([`${alice.name}/journal`]);

    const rendered = await api.markdown.renderMarkdown({ Text: '*hi*', Mode: 'markdown' }, { format: 'text' });
    expect(rendered.data).toBe('<p><em>hi</em></p>');
  });

  it('gitea-js sees Anvil’s errors as Forgejo’s: 404 with no body, 409 and 422 with a message', async () => {
    const api = giteaApi(base, { token: alice.token, customFetch: fetch });
    await expect(api.repos.repoGet(alice.name, 'missing')).rejects.toMatchObject({ status: 404 });
    await api.user.createCurrentUserRepo({ name: 'taken' });
    await expect(api.user.createCurrentUserRepo({ name: 'taken' })).rejects.toMatchObject({
      status: 409,
      error: { message: 'The repository with the same name already exists.' },
    });
    await expect(api.user.createCurrentUserRepo({ name: 'bad name' })).rejects.toMatchObject({ status: 422, error: { message: '[Name]: AlphaDashDot' } });
  });
});
