import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, withBasic, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Secrets are never logged: the app logs at trace level to a file while every way of
 * presenting a credential is used; then every log line is scanned for every token and password created.
 */
describe('secrets never reach the log', () => {
  let t: TestApp;
  let logFile: string;
  let admin: TestUser;
  const secrets: string[] = [];

  beforeAll(async () => {
    logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-log-')), 'anvil.log');
    t = await startTestApp({ LOG_FILE: logFile, LOG_LEVEL: 'trace' });
    admin = await makeUser(t, { admin: true, password: 'admin-secret-password-1' });
    secrets.push(admin.token, admin.password);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(path.dirname(logFile), { recursive: true, force: true });
  });

  it('logs requests but none of the passwords and tokens they carried, and echoes no token into Link', async () => {
    const password = 'new-user-secret-password-2';
    await t.http
      .post(t.api('/admin/users'))
      .set(withToken(admin.token))
      .send({ username: 'logged', email: 'logged@example.com', password, must_change_password: false })
      .expect(201);
    secrets.push(password);
    const created = await t.http
      .post(t.api('/users/logged/tokens'))
      .set(withBasic('logged', password))
      .send({ name: 'cli', scopes: ['all'] })
      .expect(201);
    const token: string = created.body.sha1;
    secrets.push(token);
    for (let index = 0; index < 3; index++) await makeRepo(t, admin, { name: `r${index}` });

    const uses = [
      t.http.get(t.api('/user')).set(withToken(token)),
      t.http.get(t.api('/user')).set(withBasic('logged', token)),
      t.http.get(t.api('/user')).set(withBasic(token, '')),
      t.http.get(`${t.api('/user')}?token=${token}`),
      t.http.get(`${t.api('/user')}?%74oken=${token}`),
      t.http.get(`${t.api('/user')}?access%5Ftoken=${token}`),
      // Not a credential (names are case-sensitive), but still a secret-looking name: redacted too.
      t.http.get(`${t.api('/user')}?ACCESS_TOKEN=${admin.token}`),
      t.http.get(t.api('/user')).set(withBasic('logged', 'wrong-secret-password-3')),
      t.http.get(t.api('/no/such/path')).set(withBasic('nobody', 'unknown-secret-password-4')),
      t.http.get(`${t.api('/user/repos')}?limit=1&%74oken=${admin.token}`),
    ];
    secrets.push('wrong-secret-password-3', 'unknown-secret-password-4');
    const answers = await Promise.all(uses);
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200, 200, 401, 401, 401, 200]);
    const link = answers[answers.length - 1].headers.link as string;
    expect(link).toContain('page=2');
    expect(link).not.toContain(admin.token);
    expect(link).not.toMatch(/token=/i);

    const lines = fs
      .readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((line) => line !== '');
    expect(lines.filter((line) => line.includes('request completed')).length).toBeGreaterThanOrEqual(uses.length);
    for (const line of lines) {
      for (const secret of secrets) expect(line).not.toContain(secret);
      expect(line).not.toContain(Buffer.from(`logged:${password}`).toString('base64'));
    }
  });
});
