import { makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('paging limits, configured with DEFAULT_PAGING_NUM and MAX_RESPONSE_ITEMS', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    t = await startTestApp({ DEFAULT_PAGING_NUM: '2', MAX_RESPONSE_ITEMS: '3' });
    owner = await makeUser(t);
    for (let i = 0; i < 4; i++) await makeToken(t, owner.user, ['read:user'], `token-${i}`);
  });
  afterAll(() => t.close());

  const list = (query: string) =>
    t.http
      .get(t.api(`/users/${owner.name}/tokens${query}`))
      .set(withToken(owner.token))
      .expect(200);

  it.each(['', '?limit=0', '?limit=-4', '?limit=abc'])('uses the default page size for %s', async (query) => {
    const response = await list(query);
    expect(response.body).toHaveLength(2);
    expect(response.headers['x-total-count']).toBe('5');
  });

  it('cuts a page size above the maximum', async () => {
    expect((await list('?limit=100')).body).toHaveLength(3);
  });

  it.each(['?page=0', '?page=-1', '?page=x'])('treats %s as page 1', async (query) => {
    const first = await list('');
    const response = await list(query);
    expect(response.body).toEqual(first.body);
  });

  it('sends a Link header only when there is more than one page', async () => {
    expect((await list('?limit=3&page=1')).headers.link).toBeDefined();
    const loner = await makeUser(t);
    const single = await t.http
      .get(t.api(`/users/${loner.name}/tokens`))
      .set(withToken(loner.token))
      .expect(200);
    expect(single.headers['x-total-count']).toBe('1');
    expect(single.headers.link).toBeUndefined();
  });

  it('on the last page links only first and prev, with other query keys kept in sorted order', async () => {
    const response = await list('?page=3&limit=2&zeta=1&alpha=2');
    const base = `http://anvil.test/api/v1/users/${owner.name}/tokens`;
    expect(response.body).toHaveLength(1);
    expect(response.headers.link).toBe(`<${base}?alpha=2&limit=2&page=1&zeta=1>; rel="first",<${base}?alpha=2&limit=2&page=2&zeta=1>; rel="prev"`);
  });

  it('a page past the end is empty but keeps the total', async () => {
    const response = await list('?page=9');
    expect(response.body).toEqual([]);
    expect(response.headers['x-total-count']).toBe('5');
  });
});
