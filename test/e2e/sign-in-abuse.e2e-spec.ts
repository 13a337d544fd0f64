import { SIGN_IN_FAILED } from '../../src/auth/authentication.middleware';
import { UsersService } from '../../src/users/users.service';
import { makeOrg, makeUser, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * One answer for every failed sign-in, account state only after the password verifies,
 * and rate limits (by address and by account) with Retry-After.
 */
describe('sign-in gives one answer and is rate limited', () => {
  let t: TestApp;
  const me = (headers: Record<string, string>) => t.http.get(t.api('/user')).set(headers);

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '3', RATE_LIMIT_SIGN_IN_PER_IP: '1000' });
  });
  afterAll(() => t.close());

  it('answers an unknown account, an organisation and a wrong password alike', async () => {
    const user = await makeUser(t, { visibility: 'private' });
    const org = await makeOrg(t, user.user, { visibility: 'private' });
    const answers = await Promise.all([
      me(withBasic('no-such-account', 'whatever-password')),
      me(withBasic(org.name, 'whatever-password')),
      me(withBasic(user.name, 'wrong-password')),
    ]);
    for (const answer of answers) {
      expect(answer.status).toBe(401);
      expect(answer.body).toEqual({ message: SIGN_IN_FAILED, url: 'http://anvil.test/api/swagger' });
    }
  });

  it('reveals account state only to the right password', async () => {
    const user = await makeUser(t);
    await t.app.get(UsersService).edit(user.name, { prohibitLogin: true });
    expect((await me(withBasic(user.name, 'wrong-password')).expect(401)).body.message).toBe(SIGN_IN_FAILED);
    expect((await me(withBasic(user.name, user.password)).expect(403)).body.message).toContain('prohibited from signing in');
  });

  it('refuses an account with 429 and Retry-After after too many failures, even the right password, and leaves others alone', async () => {
    const victim = await makeUser(t);
    const bystander = await makeUser(t);
    for (let attempt = 0; attempt < 3; attempt++) await me(withBasic(victim.name, `guess-${attempt}`)).expect(401);
    const limited = await me(withBasic(victim.name, victim.password)).expect(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(limited.body.message).toBe('too many requests, try again later');
    // Another account from the same address, and the victim's token, still work.
    await me(withBasic(bystander.name, bystander.password)).expect(200);
    await me(withToken(victim.token)).expect(200);
  });
});

describe('failed sign-ins are limited per client address', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_IP: '4' });
  });
  afterAll(() => t.close());

  it('after the allowance of bad tokens and passwords, the address gets 429 before any verification', async () => {
    const user = await makeUser(t);
    for (let attempt = 0; attempt < 4; attempt++) {
      await t.http
        .get(t.api('/version'))
        .set(withToken(`${attempt}`.repeat(40)))
        .expect(401);
    }
    const limited = await t.http.get(t.api('/version')).set(withBasic(user.name, user.password)).expect(429);
    expect(limited.headers['retry-after']).toMatch(/^\d+$/);
    // Anonymous callers are not signing in and are not refused.
    await t.http.get(t.api('/version')).expect(200);
  });
});

describe('a burst of requests with one new token or one password', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_SIGN_IN_PER_IP: '3', RATE_LIMIT_SIGN_IN_PER_ACCOUNT: '3' });
  });
  afterAll(() => t.close());

  it('with one password is served in full, one key derivation for the requests that arrive together', async () => {
    const user = await makeUser(t);
    const answers = await Promise.all(Array.from({ length: 12 }, () => t.http.get(t.api('/user')).set(withBasic(user.name, user.password))));
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(200));
    expect(new Set(answers.map((answer) => answer.body.login))).toEqual(new Set([user.name]));
  });

  it('is served in full, the token verified once, as a header or as Basic (a CI fan-out after a restart)', async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    const answers = await Promise.all(
      Array.from({ length: 24 }, (_, index) => {
        const call = t.http.get(t.api('/user'));
        if (index % 3 === 0) return call.set(withToken(user.token));
        return call.set(index % 3 === 1 ? withBasic(user.name, user.token) : withBasic(user.token, 'x-oauth-basic'));
      }),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(24).fill(200));
    expect(new Set(answers.map((answer) => answer.body.login))).toEqual(new Set([user.name]));
    // The same burst of one wrong token is still limited: its attempts are counted, one after another.
    const wrong = await Promise.all(Array.from({ length: 5 }, () => t.http.get(t.api('/user')).set(withToken('c'.repeat(40)))));
    expect(wrong.map((answer) => answer.status).sort()).toEqual([401, 401, 401, 429, 429]);
    // Another user's new token from the same address is refused only because the address spent its allowance.
    await t.http.get(t.api('/user')).set(withToken(other.token)).expect(429);
  });
});

describe('route rate limits', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_MARKDOWN: '2', RATE_LIMIT_TOKEN_CREATION: '1', RATE_LIMIT_KEY_UPLOAD: '1' });
  });
  afterAll(() => t.close());

  it('limit markdown renders, token creation and key uploads per user, with Retry-After', async () => {
    const user = await makeUser(t);
    const other = await makeUser(t);
    for (let i = 0; i < 2; i++) await t.http.post(t.api('/markdown/raw')).set(withToken(user.token)).send('x').expect(200);
    expect((await t.http.post(t.api('/markdown/raw')).set(withToken(user.token)).send('x').expect(429)).headers['retry-after']).toMatch(/^\d+$/);
    await t.http.post(t.api('/markdown/raw')).set(withToken(other.token)).send('x').expect(200);

    const tokens = t.api(`/users/${user.name}/tokens`);
    await t.http
      .post(tokens)
      .set(withBasic(user.name, user.password))
      .send({ name: 'a', scopes: ['all'] })
      .expect(201);
    await t.http
      .post(tokens)
      .set(withBasic(user.name, user.password))
      .send({ name: 'b', scopes: ['all'] })
      .expect(429);

    await t.http.post(t.api('/user/keys')).set(withToken(user.token)).send({ title: 'k', key: 'not a key' }).expect(422);
    await t.http.post(t.api('/user/gpg_keys')).set(withToken(user.token)).send({ armored_public_key: 'not a key' }).expect(429);
  });
});
