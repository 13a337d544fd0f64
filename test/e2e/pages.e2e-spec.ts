import request from 'supertest';
import { UsersService } from '../../src/users/users.service';
import { makeUser, uniqueName, withBasic } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const FORM = '/user/settings/change_password';

/** A fresh form: its CSRF token and the cookie that goes with it. */
async function openForm(t: TestApp): Promise<{ token: string; cookie: string }> {
  const response = await t.http.get(FORM).expect(200);
  const token = /name="_csrf" value="([^"]+)"/.exec(response.text)![1];
  const cookie = (response.headers['set-cookie'] as unknown as string[]).map((item) => item.split(';')[0]).join('; ');
  return { token, cookie };
}

/** A user the CLI or an admin created: must change the password before using the API. */
async function userWhoMustChange(t: TestApp, password = 'initial-password') {
  const name = uniqueName('newbie');
  await t.app.get(UsersService).create({ username: name, email: `${name}@example.com`, password, mustChangePassword: true });
  return { name, password };
}

describe('self-service pages outside the API', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('GET / names the server and its version and links Swagger UI, the OpenAPI document and health, which all answer', async () => {
    const home = await t.http.get('/').expect(200);
    expect(home.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(home.headers['content-security-policy']).toContain("default-src 'none'");
    const version = (await t.http.get(t.api('/version')).expect(200)).body.version as string;
    expect(home.text).toContain(`Version ${version}`);
    const links = [...home.text.matchAll(/href="([^"]+)"/g)].map((match) => match[1]);
    expect(links).toEqual(['api/swagger', 'swagger.v1.json', 'api/healthz', 'user/settings/change_password']);
    for (const link of links) await t.http.get(`/${link}`).redirects(1).expect(200);
  });

  it("serves the default avatar every user's avatar_url points to", async () => {
    const alice = await makeUser(t);
    const avatarUrl = new URL((await t.http.get(t.api(`/users/${alice.name}`)).expect(200)).body.avatar_url as string);
    expect(avatarUrl.pathname).toBe('/assets/img/avatar_default.png');
    const avatar = await t.http.get(avatarUrl.pathname).buffer(true).expect(200);
    expect(avatar.headers['content-type']).toBe('image/png');
    expect((avatar.body as Buffer).subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]));
  });

  it('the 403 of a user who must change the password points to a form that works; afterwards the API lets them in', async () => {
    const user = await userWhoMustChange(t);
    const refused = await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(403);
    const link = new URL(/Change it at: (\S+)$/.exec(refused.body.message as string)![1]);
    expect(link.pathname).toBe(FORM);
    const { token, cookie } = await openForm(t);
    const done = await t.http
      .post(FORM)
      .set('Cookie', cookie)
      .type('form')
      .send({ _csrf: token, user_name: user.name, old_password: user.password, password: 'brand-new-password', retype: 'brand-new-password' })
      .expect(200);
    expect(done.text).toContain(`The password of ${user.name} has been changed.`);
    await t.http.get(t.api('/user')).set(withBasic(user.name, 'brand-new-password')).expect(200);
    await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(401);
  });

  it('refuses a post without the CSRF cookie, or with a token of another form, and changes nothing', async () => {
    const user = await userWhoMustChange(t);
    const fields = { user_name: user.name, old_password: user.password, password: 'brand-new-password', retype: 'brand-new-password' };
    const first = await openForm(t);
    const second = await openForm(t);
    const noCookie = await t.http
      .post(FORM)
      .type('form')
      .send({ ...fields, _csrf: first.token })
      .expect(403);
    expect(noCookie.text).toContain('The form has expired or did not come from this site.');
    await t.http
      .post(FORM)
      .set('Cookie', second.cookie)
      .type('form')
      .send({ ...fields, _csrf: first.token })
      .expect(403);
    await t.http
      .post(FORM)
      .set('Cookie', first.cookie)
      .type('form')
      .send({ ...fields, _csrf: 'forged' })
      .expect(403);
    await t.http.post(FORM).set('Cookie', first.cookie).type('form').send(fields).expect(403);
    await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(403);
  });

  it.each([
    ['a wrong current password', { old_password: 'not-the-password' }, 401, 'The user name or the current password is incorrect.'],
    ['an unknown user (the same answer)', { user_name: 'nobody-here' }, 401, 'The user name or the current password is incorrect.'],
    ['two different new passwords', { retype: 'something-else-entirely' }, 400, 'The new passwords do not match.'],
    ['a short new password', { password: 'short', retype: 'short' }, 400, 'The new password must have at least 8 characters.'],
    ['the same password again', { password: 'initial-password', retype: 'initial-password' }, 400, 'The new password must differ from the current one.'],
  ])('refuses %s, shows why, and changes nothing', async (_case, change, status, message) => {
    const user = await userWhoMustChange(t);
    const { token, cookie } = await openForm(t);
    const fields = { _csrf: token, user_name: user.name, old_password: user.password, password: 'brand-new-password', retype: 'brand-new-password', ...change };
    const refused = await t.http.post(FORM).set('Cookie', cookie).type('form').send(fields).expect(status);
    expect(refused.text).toContain(message);
    await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(403);
  });

  it('escapes what it echoes back', async () => {
    const response = await t.http.get(`${FORM}?user_name=${encodeURIComponent('<script>x</script>')}`).expect(200);
    expect(response.text).toContain('value="&lt;script&gt;x&lt;/script&gt;"');
    expect(response.text).not.toContain('<script>');
  });
});

describe('the change-password form is rate-limited', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it('answers 429 after 10 attempts a minute on one account from one address, even with the right password', async () => {
    const user = await userWhoMustChange(t);
    const other = await userWhoMustChange(t);
    const { token, cookie } = await openForm(t);
    const attempt = (userName: string, oldPassword: string) =>
      request(t.app.getHttpServer())
        .post(FORM)
        .set('Cookie', cookie)
        .type('form')
        .send({ _csrf: token, user_name: userName, old_password: oldPassword, password: 'brand-new-password', retype: 'brand-new-password' });
    for (let i = 0; i < 10; i += 1) expect((await attempt(user.name, `guess-${i}-password`)).status).toBe(401);
    const limited = await attempt(user.name.toUpperCase(), user.password);
    expect(limited.status).toBe(429);
    expect(limited.text).toContain('Too many attempts');
    await t.http.get(t.api('/user')).set(withBasic(user.name, user.password)).expect(403);
    // Another account from the same address is not locked out.
    expect((await attempt(other.name, other.password)).status).toBe(200);
  });
});
