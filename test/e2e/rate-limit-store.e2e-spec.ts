import { makeUser, withToken } from '../support/factories';
import { databaseUrl, startTestApp, TestApp } from '../support/test-app';

/**
 * RATE_LIMIT_STORE=database, the store several instances share: two instances of
 * the application on one database (SQLite here, MariaDB with TEST_DATABASE=mysql) count against one budget;
 * with the default memory store each instance has its own.
 */
describe.each([
  { store: 'database', sharing: 'share one budget' },
  { store: 'memory', sharing: 'each have their own budget' },
])('RATE_LIMIT_STORE=$store: two instances on one database $sharing', ({ store }) => {
  let first: TestApp;
  let second: TestApp;
  const env = { RATE_LIMIT_STORE: store, RATE_LIMIT_MARKDOWN: '4', RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '2' };

  beforeAll(async () => {
    first = await startTestApp(env);
    second = await startTestApp({ ...env, DATABASE_URL: databaseUrl(first.config) });
  });
  afterAll(async () => {
    await second?.close();
    await first?.close();
  });

  it('counts markdown renders of one user made on either instance', async () => {
    const user = await makeUser(first);
    const render = (t: TestApp) => t.http.post(t.api('/markdown/raw')).set(withToken(user.token)).send('x');
    for (const t of [first, second, first, second]) await render(t).expect(200);
    if (store === 'database') {
      for (const t of [first, second]) expect((await render(t).expect(429)).headers['retry-after']).toMatch(/^[1-9]\d*$/);
    } else {
      // Each instance counted two of the four: two more on each are still allowed.
      for (const t of [first, second, first, second]) await render(t).expect(200);
      await render(first).expect(429);
    }
  });

  it('counts failed sign-ins against one account made on either instance', async () => {
    const user = await makeUser(first);
    const me = (t: TestApp, password: string) =>
      t.http.get(t.api('/user')).set({ Authorization: `Basic ${Buffer.from(`${user.name}:${password}`).toString('base64')}` });
    await me(first, 'wrong-password-1').expect(401);
    await me(second, 'wrong-password-2').expect(401);
    // The right password is refused once the account's allowance is spent, on whichever instance it arrives.
    await me(second, user.password).expect(store === 'database' ? 429 : 200);
  });
});
