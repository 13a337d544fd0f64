import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { AuditService } from '../../src/audit/audit.service';
import { runCli } from '../../src/cli/cli';
import { loadConfig } from '../../src/config/config';
import { recordSecrets } from '../support/e2e-log';
import { makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { generateSshKey } from '../support/ssh-keys';
import { startTestApp, TestApp } from '../support/test-app';

interface AuditEventJson {
  id: number;
  action: string;
  outcome: string;
  actor: { id: number; login: string };
  address: string;
  target: { type: string; id: number; name: string };
  detail: Record<string, unknown>;
  created: string;
}

/**
 * A scripted session of admin and user actions through a trusted proxy (loopback), each client named by
 * X-Forwarded-For: the audit log must name the right actor and address for each, in order, and hold none of
 * the secrets that went by (passwords, tokens, private keys, hook secrets), neither in the table nor in the log.
 */
describe('audit log', () => {
  let t: TestApp;
  let logFile: string;
  let admin: TestUser;
  let plain: TestUser;
  const ADMIN_ADDRESS = '203.0.113.5';
  const USER_ADDRESS = '198.51.100.9';
  const secrets: string[] = [];
  const bobPassword = `bob-password-${Math.random().toString(36).slice(2)}`;
  const hookSecret = `hook-secret-${Math.random().toString(36).slice(2)}`;
  const hookAuthorization = `Bearer hook-auth-${Math.random().toString(36).slice(2)}`;
  let bobToken = '';
  let privateKey = '';
  const bob = uniqueName('bob');
  const orgName = uniqueName('org');
  const originalRepo = uniqueName('repo');
  let repoName = originalRepo;
  const renamed = uniqueName('renamed');

  const asAdmin = (request: import('supertest').Test) => request.set(withToken(admin.token)).set('X-Forwarded-For', `10.9.9.9, ${ADMIN_ADDRESS}`);
  const asBob = (request: import('supertest').Test) => request.set(withToken(bobToken)).set('X-Forwarded-For', USER_ADDRESS);
  const audit = async (query: Record<string, string> = {}) => {
    const answer = await asAdmin(t.http.get(t.api('/admin/audit')).query({ limit: '50', ...query })).expect(200);
    return { events: answer.body as AuditEventJson[], headers: answer.headers };
  };

  beforeAll(async () => {
    logFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-audit-log-')), 'anvil.log');
    t = await startTestApp({ LOG_FILE: logFile, LOG_LEVEL: 'info', REVERSE_PROXY_AUTH_ENABLED: 'true', WEBHOOK_ALLOWED_HOSTS: '*' });
    admin = await makeUser(t, { admin: true });
    plain = await makeUser(t);
    secrets.push(bobPassword, hookSecret, hookAuthorization, admin.token, plain.token, admin.password);
    recordSecrets(bobPassword, hookSecret, hookAuthorization);
  });
  afterAll(async () => {
    await t.close();
    fs.rmSync(path.dirname(logFile), { recursive: true, force: true });
  });

  it('records a scripted session of admin and user actions with the right actor, address and target', async () => {
    // Admin: a user, made an admin and back.
    await asAdmin(t.http.post(t.api('/admin/users')))
      .send({ username: bob, email: `${bob}@example.com`, password: bobPassword, must_change_password: false })
      .expect(201);
    await asAdmin(t.http.patch(t.api(`/admin/users/${bob}`)))
      .send({ login_name: bob, source_id: 0, admin: true })
      .expect(200);
    await asAdmin(t.http.patch(t.api(`/admin/users/${bob}`)))
      .send({ login_name: bob, source_id: 0, admin: false })
      .expect(200);
    // Bob signs in with his password to make a token, then works with it.
    const created = await t.http
      .post(t.api(`/users/${bob}/tokens`))
      .set(withBasic(bob, bobPassword))
      .set('X-Forwarded-For', USER_ADDRESS)
      .send({ name: 'laptop', scopes: ['all'] })
      .expect(201);
    bobToken = created.body.sha1;
    secrets.push(bobToken);
    recordSecrets(bobToken);
    const keys = generateSshKey(fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-audit-key-')), 'bob');
    privateKey = fs.readFileSync(keys.privateKey, 'utf8');
    const publicKey = keys.publicLine;
    secrets.push(privateKey.split('\n').filter((line) => line !== '' && !line.startsWith('-----'))[0]);
    const key = await asBob(t.http.post(t.api('/user/keys')))
      .send({ title: 'laptop key', key: publicKey })
      .expect(201);
    await asBob(t.http.delete(t.api(`/user/keys/${key.body.id}`))).expect(204);
    const repo = await asBob(t.http.post(t.api('/user/repos')))
      .send({ name: repoName, private: true })
      .expect(201);
    await asBob(t.http.patch(t.api(`/repos/${bob}/${repoName}`)))
      .send({ name: renamed, private: false, archived: true })
      .expect(200);
    repoName = renamed;
    await asBob(t.http.put(t.api(`/repos/${bob}/${repoName}/collaborators/${plain.name}`)))
      .send({ permission: 'read' })
      .expect(204);
    await asBob(t.http.delete(t.api(`/repos/${bob}/${repoName}/collaborators/${plain.name}`))).expect(204);
    const hook = await asBob(t.http.post(t.api(`/repos/${bob}/${repoName}/hooks`)))
      .send({
        type: 'gitea',
        config: { url: 'http://hooks.example.com/receive?key=abc', content_type: 'json', secret: hookSecret },
        authorization_header: hookAuthorization,
        active: true,
      })
      .expect(201);
    await asBob(t.http.patch(t.api(`/repos/${bob}/${repoName}/hooks/${hook.body.id}`)))
      .send({ config: { secret: `${hookSecret}-2` }, active: false })
      .expect(200);
    await asBob(t.http.delete(t.api(`/repos/${bob}/${repoName}/hooks/${hook.body.id}`))).expect(204);
    // Admin: an organisation, its owners team gets bob; quota.
    await asAdmin(t.http.post(t.api('/orgs')))
      .send({ username: orgName })
      .expect(201);
    const teams = await asAdmin(t.http.get(t.api(`/orgs/${orgName}/teams`))).expect(200);
    await asAdmin(t.http.put(t.api(`/teams/${teams.body[0].id}/members/${bob}`))).expect(204);
    await asAdmin(t.http.delete(t.api(`/teams/${teams.body[0].id}/members/${bob}`))).expect(204);
    await asAdmin(t.http.post(t.api('/admin/quota/rules')))
      .send({ name: 'audit-rule', limit: 1024, subjects: ['size:all'] })
      .expect(201);
    await asAdmin(t.http.post(t.api('/admin/quota/groups')))
      .send({ name: 'audit-group', rules: [{ name: 'audit-rule' }] })
      .expect(201);
    await asAdmin(t.http.put(t.api(`/admin/quota/groups/audit-group/users/${bob}`))).expect(204);
    // A failed sign-in, a sign-in by the gateway, then bob cleans up and the admin deletes him.
    await t.http.get(t.api('/user')).set(withBasic(bob, 'not-the-password')).set('X-Forwarded-For', USER_ADDRESS).expect(401);
    await t.http.get(t.api('/user')).set('X-WEBAUTH-USER', plain.name).set('X-Forwarded-For', '192.0.2.44').expect(200);
    await asBob(t.http.delete(t.api(`/users/${bob}/tokens/laptop`)))
      .set(withBasic(bob, bobPassword))
      .expect(204);
    await t.http
      .delete(t.api(`/repos/${bob}/${repoName}`))
      .set(withToken(admin.token))
      .set('X-Forwarded-For', ADMIN_ADDRESS)
      .expect(204);
    await asAdmin(t.http.delete(t.api(`/admin/quota/groups/audit-group/users/${bob}`))).expect(204);
    await asAdmin(t.http.delete(t.api(`/admin/users/${bob}`))).expect(204);
    expect(repo.body.id).toBeGreaterThan(0);

    const { events } = await audit();
    // The session starts with bob's creation (the factories' users came before, with no actor).
    const all = [...events].reverse();
    const session = all.slice(all.findIndex((event) => event.action === 'user.create' && event.target.name === bob));
    const find = (action: string, predicate: (event: AuditEventJson) => boolean = () => true) => {
      const found = session.find((event) => event.action === action && predicate(event));
      if (!found) throw new Error(`no ${action} event in ${JSON.stringify(session.map((event) => event.action))}`);
      return found;
    };
    const byAdmin = { actor: { id: admin.user.id, login: admin.name }, address: ADMIN_ADDRESS, outcome: 'success' };
    const byBob = { actor: { login: bob }, address: USER_ADDRESS, outcome: 'success' };
    expect(find('user.create')).toMatchObject({ ...byAdmin, target: { type: 'user', name: bob } });
    expect(find('user.edit', (event) => event.detail.admin === true && event.target.name === bob)).toMatchObject({
      ...byAdmin,
      detail: { fields: ['admin'], admin: true },
    });
    expect(find('user.edit', (event) => event.detail.admin === false && event.target.name === bob)).toMatchObject(byAdmin);
    expect(find('sign_in', (event) => event.detail.carrier === 'basic' && event.outcome === 'success')).toMatchObject({
      ...byBob,
      target: { type: 'user', name: bob },
    });
    expect(find('token.create')).toMatchObject({ ...byBob, target: { type: 'token', name: `${bob}/laptop` }, detail: { scopes: 'all' } });
    expect(find('ssh_key.add')).toMatchObject({ ...byBob, target: { type: 'ssh_key' }, detail: { title: 'laptop key' } });
    expect(find('ssh_key.delete')).toMatchObject(byBob);
    expect(find('repository.create')).toMatchObject({ ...byBob, target: { type: 'repository', name: `${bob}/${originalRepo}` } });
    expect(find('repository.rename').detail.from).toBe(`${bob}/${originalRepo}`);
    expect(find('repository.rename')).toMatchObject({ ...byBob, target: { name: `${bob}/${renamed}` } });
    expect(find('repository.visibility')).toMatchObject({ ...byBob, detail: { visibility: 'public' } });
    expect(find('repository.create').detail).toMatchObject({ visibility: 'private' });
    expect(find('repository.archive')).toMatchObject({ ...byBob, target: { name: `${bob}/${renamed}` } });
    expect(find('collaborator.add')).toMatchObject({ ...byBob, detail: { collaborator: plain.name, permission: 'read' } });
    expect(find('collaborator.remove')).toMatchObject({ ...byBob, detail: { collaborator: plain.name } });
    expect(find('hook.create')).toMatchObject({ ...byBob, target: { type: 'hook' }, detail: { host: 'hooks.example.com', active: true } });
    expect(find('hook.edit').detail.fields).toEqual(expect.arrayContaining(['signing_key', 'isActive']));
    expect(find('hook.delete')).toMatchObject(byBob);
    expect(find('organization.create')).toMatchObject({ ...byAdmin, target: { type: 'organization', name: orgName }, detail: { owner: admin.name } });
    expect(find('team.member_add')).toMatchObject({ ...byAdmin, target: { type: 'team', name: 'Owners' }, detail: { member: bob } });
    expect(find('team.member_remove')).toMatchObject({ ...byAdmin, detail: { member: bob } });
    expect(find('quota.rule_create')).toMatchObject({ ...byAdmin, target: { type: 'quota_rule', name: 'audit-rule' } });
    expect(find('quota.group_create')).toMatchObject({ ...byAdmin, target: { type: 'quota_group', name: 'audit-group' }, detail: { rules: ['audit-rule'] } });
    expect(find('quota.group_user_add')).toMatchObject({ ...byAdmin, detail: { user: bob } });
    expect(find('quota.group_user_remove')).toMatchObject(byAdmin);
    expect(find('sign_in', (event) => event.outcome === 'failure')).toMatchObject({
      actor: { id: 0, login: '' },
      address: USER_ADDRESS,
      target: { name: bob },
      detail: { carrier: 'basic' },
    });
    expect(find('sign_in', (event) => event.detail.carrier === 'reverse-proxy')).toMatchObject({ actor: { login: plain.name }, address: '192.0.2.44' });
    expect(find('token.delete')).toMatchObject({ ...byBob, target: { name: `${bob}/laptop` } });
    expect(find('repository.delete')).toMatchObject({ actor: { login: admin.name }, address: ADMIN_ADDRESS, target: { name: `${bob}/${renamed}` } });
    expect(find('user.delete')).toMatchObject({ ...byAdmin, target: { type: 'user', name: bob } });
    // In the order they happened (the list is newest first).
    const order = [
      'user.create',
      'token.create',
      'repository.create',
      'hook.delete',
      'organization.create',
      'quota.group_create',
      'token.delete',
      'user.delete',
    ];
    const positions = order.map((action) => session.findIndex((event) => event.action === action));
    expect(positions).toEqual([...positions].sort((a, b) => a - b));
  });

  it('writes every event as one JSON log line, after its commit, and nothing of a change refused', async () => {
    // A refused change (a duplicate repository name) leaves neither an event nor a line.
    const owner = await makeUser(t);
    const name = uniqueName('dup');
    await t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name }).expect(201);
    await t.http.post(t.api('/user/repos')).set(withToken(owner.token)).send({ name }).expect(409);
    const { events } = await audit({ action: 'repository.create', target: `${owner.name}/${name}` });
    expect(events).toHaveLength(1);
    // The log is written asynchronously by pino: wait for the line of the last event.
    const lines = async () => {
      for (let attempt = 0; ; attempt++) {
        const parsed = fs
          .readFileSync(logFile, 'utf8')
          .split('\n')
          .filter((line) => line.includes('"audit"'))
          .map((line) => JSON.parse(line) as { msg: string; audit: { id: number; action: string; address: string; actor: { name: string } } });
        if (parsed.some((line) => line.audit.id === events[0].id) || attempt > 200) return parsed;
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    };
    const logged = await lines();
    expect(logged.filter((line) => line.audit.action === 'repository.create' && line.audit.id === events[0].id)).toHaveLength(1);
    const all = await audit({ limit: '50' });
    for (const event of all.events) {
      const line = logged.find((entry) => entry.audit.id === event.id);
      expect(line).toMatchObject({ msg: 'audit event', audit: { action: event.action, address: event.address, actor: { name: event.actor.login } } });
    }
  });

  it('filters by actor, action, family, target and time, newest first, with Forgejo-style paging headers', async () => {
    const byBob = await audit({ actor: bob.toUpperCase() });
    expect(byBob.events.length).toBeGreaterThan(3);
    expect(byBob.events.every((event) => event.actor.login === bob)).toBe(true);
    const repositories = await audit({ action: 'repository.*' });
    expect(new Set(repositories.events.map((event) => event.action))).toEqual(
      new Set(['repository.create', 'repository.rename', 'repository.visibility', 'repository.archive', 'repository.delete']),
    );
    const renames = await audit({ action: 'repository.rename', target: `repository:${bob}/${renamed}` });
    expect(renames.events).toHaveLength(1);
    expect((await audit({ target: `user:${bob}`, action: 'user.delete' })).events).toHaveLength(1);
    const ids = byBob.events.map((event) => event.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
    // Time: everything so far is before a minute from now, nothing since then.
    const later = new Date(Date.now() + 60_000).toISOString();
    expect((await audit({ since: later })).events).toHaveLength(0);
    expect((await audit({ before: later, actor: bob })).events.length).toBe(byBob.events.length);
    // Paging: two per page, X-Total-Count and Link as every list.
    const first = await audit({ actor: bob, limit: '2', page: '1' });
    expect(first.events).toHaveLength(2);
    expect(Number(first.headers['x-total-count'])).toBe(byBob.events.length);
    expect(first.headers.link).toContain('rel="next"');
    const second = await audit({ actor: bob, limit: '2', page: '2' });
    expect(second.events.map((event) => event.id)).toEqual(ids.slice(2, 4));
    // Bad input is a 422.
    await asAdmin(t.http.get(t.api('/admin/audit')).query({ since: 'yesterday' })).expect(422);
    await asAdmin(t.http.get(t.api('/admin/audit')).query({ action: 'no such action' })).expect(422);
  });

  it('names the admin command line as the actor of its commands, and the admin behind a sudo', async () => {
    const env: Record<string, string> = { DATA_DIR: t.dataDir, ROOT_URL: t.config.rootUrl, LOG_LEVEL: 'silent' };
    if (t.config.database.type === 'mysql') {
      const db = t.config.database;
      env.DATABASE_URL = `mysql://${db.username}:${db.password}@${db.host}:${db.port}/${db.database}`;
    }
    const name = uniqueName('cliuser');
    const password = `cli-password-${Math.random().toString(36).slice(2)}`;
    secrets.push(password);
    recordSecrets(password);
    const out: string[] = [];
    const code = await runCli(['admin', 'user', 'create', '--username', name, '--password', password, '--email', `${name}@example.com`], loadConfig(env), {
      out: (line) => out.push(line),
      err: (line) => out.push(line),
    });
    expect(code).toBe(0);
    const created = await audit({ action: 'user.create', target: `user:${name}` });
    expect(created.events).toHaveLength(1);
    expect(created.events[0]).toMatchObject({ actor: { id: 0, login: 'cli' }, address: 'local' });
    expect((await audit({ actor: 'cli' })).events.length).toBeGreaterThanOrEqual(1);
    // Sudo: the event is the sudo target's, and says which admin acted.
    const repo = uniqueName('sudo');
    await asAdmin(t.http.post(t.api('/user/repos')).set('Sudo', plain.name))
      .send({ name: repo })
      .expect(201);
    const sudo = await audit({ action: 'repository.create', target: `${plain.name}/${repo}` });
    expect(sudo.events[0]).toMatchObject({ actor: { login: plain.name }, address: ADMIN_ADDRESS, detail: { sudo_by: admin.name } });
  });

  it('is for site admins only', async () => {
    await t.http.get(t.api('/admin/audit')).set(withToken(plain.token)).expect(403);
    await t.http.get(t.api('/admin/audit')).expect(401);
  });

  it('holds no secret: not in the table, not in the log', async () => {
    const rows = JSON.stringify(await t.dataSource.query('SELECT * FROM audit_event'));
    const log = fs.readFileSync(logFile, 'utf8');
    expect(rows.length).toBeGreaterThan(1000);
    for (const secret of [...secrets, `${hookSecret}-2`, 'hook-auth-', 'key=abc']) {
      expect(secret.length).toBeGreaterThan(4);
      expect(rows).not.toContain(secret);
      expect(log).not.toContain(secret);
    }
  });

  it('prunes events older than AUDIT_RETENTION_DAYS, once per hour over all instances', async () => {
    const service = t.app.get(AuditService);
    const before = (await audit()).headers['x-total-count'];
    expect(Number(before)).toBeGreaterThan(0);
    // Nothing is old enough now.
    const now = await service.pruneExpired(Date.now());
    expect(now === 0 || now === null).toBe(true);
    // The hour's turn is taken: another call in the same hour does nothing.
    expect(await service.pruneExpired(Date.now() + 400 * 86_400_000)).toBeNull();
    // A turn an hour later, a year and more ahead, removes everything there was.
    await t.dataSource.query("UPDATE lease SET expires_at = 0 WHERE name = 'audit:prune'");
    expect(await service.pruneExpired(Date.now() + 400 * 86_400_000)).toBe(Number(before));
  });
});
