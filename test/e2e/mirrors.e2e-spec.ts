import * as fs from 'node:fs';
import * as path from 'node:path';
import type { LoggerService } from '@nestjs/common';
import { Clock } from '../../src/common/time';
import { MirrorEntity } from '../../src/mirrors/mirror.entity';
import { MirrorRunner } from '../../src/mirrors/mirror-runner';
import { MirrorScheduler } from '../../src/mirrors/mirror-scheduler';
import { MirrorStore } from '../../src/mirrors/mirror.store';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient } from '../support/git-client';
import { GitUpstream } from '../support/git-upstream';
import { startTestApp, TestApp } from '../support/test-app';

/** Every log line the application writes through Nest's logger, to prove credentials never reach one. */
class CapturedLog implements LoggerService {
  readonly lines: string[] = [];
  private keep = (...parts: unknown[]) => this.lines.push(parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part))).join(' '));
  log = this.keep;
  error = this.keep;
  warn = this.keep;
  debug = this.keep;
  verbose = this.keep;
  fatal = this.keep;
}

/** Every file under `dir`, as text: proof that a secret is nowhere on disk. */
function treeContains(dir: string, needle: string): boolean {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const child = path.join(dir, entry.name);
    if (entry.isDirectory() ? treeContains(child, needle) : entry.isFile() && fs.readFileSync(child).includes(needle)) return true;
  }
  return false;
}

/** `ref sha` lines of every ref, sorted: two repositories with equal lists have the same refs. */
function refs(gitDir: string): string {
  return git(gitDir, 'for-each-ref', '--format=%(refname) %(objectname)').split('\n').filter(Boolean).sort().join('\n');
}

// The clone and fetch limit of this file's first app. One test waits it out against a source that stalls; every
// other migration here must finish within it while other test runs load the machine: a ceiling, not a speed.
const CLONE_TIMEOUT_MS = 10_000;

describe('migrations and pull mirrors', () => {
  let t: TestApp;
  let client: GitClient;
  let upstream: GitUpstream;
  let alice: TestUser;
  const log = new CapturedLog();
  let now = 0;

  beforeAll(async () => {
    t = await startTestApp({ ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.mirrors.cloneTimeoutMs = CLONE_TIMEOUT_MS;
      config.mirrors.fetchTimeoutMs = CLONE_TIMEOUT_MS;
      config.mirrors.tickMs = 0;
    });
    t.app.useLogger(log);
    // Logs stay buffered until the app listens or flushes; this test reads them as they are written.
    t.app.flushLogs();
    // The schedule is driven by this pinned clock, never by waiting.
    now = Math.floor(Date.now() / 1000);
    jest.spyOn(t.app.get(Clock), 'nowUnix').mockImplementation(() => now);
    client = new GitClient();
    upstream = await GitUpstream.start();
    alice = await makeUser(t);
  });
  afterAll(async () => {
    await upstream.close();
    client.dispose();
    await t.close();
  });

  const migrate = (user: TestUser, body: Record<string, unknown>) => t.http.post(t.api('/repos/migrate')).set(withToken(user.token)).send(body);
  const runner = () => t.app.get(MirrorRunner);
  const mirrorSync = (user: TestUser | null, owner: string, repo: string) => {
    const request = t.http.post(t.api(`/repos/${owner}/${repo}/mirror-sync`));
    return user ? request.set(withToken(user.token)) : request;
  };
  const getRepo = async (owner: string, repo: string) =>
    (
      await t.http
        .get(t.api(`/repos/${owner}/${repo}`))
        .set(withToken(alice.token))
        .expect(200)
    ).body;

  /** A bare repository `name` on the upstream, filled from a working copy; returns the working copy. */
  async function seed(name: string, files: Record<string, string> = { 'README.md': 'hello\n' }, branch = 'main', server = upstream): Promise<string> {
    await client.ok(['init', '--bare', '--quiet', '--initial-branch', branch, server.dir(name)]);
    const work = await client.workingCopy(branch, files);
    await client.ok(['push', '--quiet', server.dir(name), `${branch}:${branch}`], { cwd: work });
    return work;
  }

  async function commit(work: string, file: string, content: string): Promise<void> {
    fs.writeFileSync(path.join(work, file), content);
    await client.ok(['add', file], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', `change ${file}`], { cwd: work });
  }

  async function syncAndWait(owner: string, repo: string): Promise<void> {
    const response = await mirrorSync(alice, owner, repo).expect(200);
    expect(response.text).toBe('');
    await runner().whenIdle();
  }

  describe('POST /repos/migrate: body rules', () => {
    it.each([
      [{ repo_name: 'x' }, '[CloneAddr]: Required'],
      [{ clone_addr: 'http://example.com/x' }, '[RepoName]: Required'],
      [{ clone_addr: 'http://example.com/x', repo_name: 'bad name' }, '[RepoName]: AlphaDashDot'],
      [{ clone_addr: 'http://example.com/x', repo_name: 'a'.repeat(101) }, '[RepoName]: MaxSize'],
      [{ clone_addr: 'http://example.com/x', repo_name: 'ok', description: 'd'.repeat(2049) }, '[Description]: MaxSize'],
      [{ clone_addr: 'http://example.com/x', repo_name: 'ok', mirror: true, mirror_interval: 'soon' }, 'time: invalid duration "soon"'],
      [
        { clone_addr: 'http://example.com/x', repo_name: 'ok', mirror: true, mirror_interval: '5m' },
        'invalid mirror interval: 5m0s is below minimum interval: 10m0s',
      ],
      [
        { clone_addr: 'http://example.com/x', repo_name: 'ok', mirror: true, mirror_interval: '-1h' },
        'invalid mirror interval: -1h0m0s is below minimum interval: 10m0s',
      ],
    ])('%j → 422 %s', async (body, message) => {
      const response = await migrate(alice, body).expect(422);
      expect(response.body.message).toBe(message);
    });

    it('needs sign-in and write:repository', async () => {
      await t.http
        .post(t.api('/repos/migrate'))
        .send({ clone_addr: upstream.url('x'), repo_name: 'x' })
        .expect(401);
    });
  });

  describe('POST /repos/migrate: owner, quota, permission, URL (10.7, 3.1)', () => {
    it('reports an unknown owner by name or by id', async () => {
      expect((await migrate(alice, { clone_addr: 'http://example.com/x', repo_name: 'x', repo_owner: 'nobody-here' }).expect(422)).body.message).toBe(
        'user does not exist [uid: 0, name: nobody-here]',
      );
      expect((await migrate(alice, { clone_addr: 'http://example.com/x', repo_name: 'x', uid: 987654 }).expect(422)).body.message).toBe(
        'user does not exist [uid: 987654, name: ]',
      );
    });

    it('refuses another user (403) and an organisation the caller does not own (403)', async () => {
      const bob = await makeUser(t);
      const org = await makeOrg(t, bob.user);
      expect((await migrate(alice, { clone_addr: 'http://example.com/x', repo_name: 'x', repo_owner: bob.name }).expect(403)).body.message).toBe(
        'Given user is not an organization.',
      );
      expect((await migrate(alice, { clone_addr: 'http://example.com/x', repo_name: 'x', repo_owner: org.name }).expect(403)).body.message).toBe(
        'Given user is not owner of organization.',
      );
    });

    it('checks quota on the owner (413) after the owner and before the permission', async () => {
      const admin = await makeUser(t, { admin: true });
      const erin = await makeUser(t);
      const bob = await makeUser(t);
      const group = uniqueName('grp');
      await t.http
        .post(t.api('/admin/quota/groups'))
        .set(withToken(admin.token))
        .send({ name: group, rules: [{ name: uniqueName('rule'), limit: 0, subjects: ['size:repos:all'] }] })
        .expect(201);
      await t.http
        .put(t.api(`/admin/quota/groups/${group}/users/${erin.name}`))
        .set(withToken(admin.token))
        .expect(204);
      const seen = upstream.seen.length;
      const own = await migrate(erin, { clone_addr: upstream.url('any'), repo_name: uniqueName('q') }).expect(413);
      expect(own.body).toMatchObject({ message: 'quota exceeded', username: erin.name });
      // Another user's caller is told about the quota first, as Forgejo orders it.
      await migrate(bob, { clone_addr: upstream.url('any'), repo_name: uniqueName('q'), repo_owner: erin.name }).expect(413);
      expect(upstream.seen.length).toBe(seen);
    });

    it.each([
      ['http://u:p@127.0.0.1/x.git', 'The URL contains credentials.'],
      ['http://u@127.0.0.1/x.git', 'The URL contains credentials.'],
      ['http://127.0.0.1:99999/x', "migration/cloning from 'http://127.0.0.1:99999/x' is not allowed: the provided url is invalid"],
      ['ssh://git@example.com/x.git', "migration/cloning from 'example.com' is not allowed: the provided url protocol is not allowed"],
      ['git@example.com:o/x.git', "migration/cloning from 'example.com' is not allowed: the provided url protocol is not allowed"],
      ['/etc', 'You are not allowed to import local repositories.'],
      ['file:///etc', 'You are not allowed to import local repositories.'],
    ])('clone_addr %s → 422 %s', async (address, message) => {
      expect((await migrate(alice, { clone_addr: address, repo_name: uniqueName('r') }).expect(422)).body.message).toBe(message);
    });

    it('refuses unspecified and link-local addresses even with local networks allowed', async () => {
      for (const address of [
        'http://0.0.0.0/x.git',
        'http://169.254.169.254/x.git',
        'http://[::ffff:169.254.169.254]/x.git',
        'http://[fe80::1]/x.git',
        'http://224.0.0.1/x.git',
      ]) {
        expect((await migrate(alice, { clone_addr: address, repo_name: uniqueName('r') }).expect(422)).body.message).toBe(
          'You can not import from disallowed hosts.',
        );
      }
      expect((await migrate(alice, { clone_addr: 'http://no-such-host.invalid/x.git', repo_name: uniqueName('r') }).expect(422)).body.message).toBe(
        'You can not import from disallowed hosts.',
      );
    });

    it('answers 409 for a taken name before contacting the source', async () => {
      const taken = await makeRepo(t, alice);
      const before = upstream.seen.length;
      await seed('for-conflict');
      expect((await migrate(alice, { clone_addr: upstream.url('for-conflict'), repo_name: taken.name }).expect(409)).body.message).toBe(
        'The repository with the same name already exists.',
      );
      expect(upstream.seen.length).toBe(before);
    });
  });

  describe('migration results', () => {
    it('copies every ref of the source into a plain repository without remote', async () => {
      const work = await seed('plain', { 'a.txt': 'a\n', 'b.txt': 'b\n' }, 'trunk');
      await client.ok(['tag', 'v1'], { cwd: work });
      await client.ok(['push', '--quiet', upstream.dir('plain'), 'v1', 'trunk:refs/heads/other', 'trunk:refs/pull/1/head'], { cwd: work });
      const name = uniqueName('plain');
      const response = await migrate(alice, { clone_addr: ` ${upstream.url('plain')} `, repo_name: name, description: 'imported', private: true }).expect(201);
      expect(response.body).toMatchObject({
        name,
        full_name: `${alice.name}/${name}`,
        description: 'imported',
        private: true,
        mirror: false,
        empty: false,
        default_branch: 'trunk',
        original_url: upstream.url('plain'),
        mirror_interval: '',
        mirror_updated: '0001-01-01T00:00:00Z',
        permissions: { admin: true, push: true, pull: true },
        watchers_count: 1,
      });
      expect(response.body.size).toBeGreaterThan(0);
      const dir = repositoryDir(t.dataDir, alice.name, name);
      expect(refs(dir)).toBe(refs(upstream.dir('plain')));
      expect(git(dir, 'remote').trim()).toBe('');
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/trunk');
      expect((await getRepo(alice.name, name)).name).toBe(name);
    });

    it('creates a pull mirror with its interval, tag refspec and no credentials in its config', async () => {
      await seed('mirrored');
      const name = uniqueName('mirror');
      const response = await migrate(alice, { clone_addr: upstream.url('mirrored'), repo_name: name, mirror: true, mirror_interval: '1h30m' }).expect(201);
      expect(response.body).toMatchObject({ mirror: true, mirror_interval: '1h30m0s', empty: false, default_branch: 'main' });
      expect(response.body.mirror_updated).toBe(new Date(now * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
      const dir = repositoryDir(t.dataDir, alice.name, name);
      expect(git(dir, 'config', '--get-all', 'remote.origin.fetch').trim().split('\n')).toEqual(['+refs/*:refs/*', '+refs/tags/*:refs/tags/*']);
      expect(git(dir, 'config', 'http.followRedirects').trim()).toBe('false');
      const mirror = await t.app.get(MirrorStore).findByRepository(response.body.id);
      expect(mirror).toMatchObject({ intervalSeconds: 5400, nextUpdateUnix: now + 5400, credentials: '' });
      // The interval is ignored without `mirror`.
      const plain = await migrate(alice, { clone_addr: upstream.url('mirrored'), repo_name: uniqueName('p'), mirror_interval: 'nonsense' }).expect(201);
      expect(plain.body.mirror_interval).toBe('');
    });

    it('imports an empty source as empty on `main`', async () => {
      await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'trunk', upstream.dir('empty')]);
      const name = uniqueName('empty');
      const response = await migrate(alice, { clone_addr: upstream.url('empty'), repo_name: name, mirror: true, mirror_interval: '0' }).expect(201);
      expect(response.body).toMatchObject({ empty: true, default_branch: 'main', mirror_interval: '0s' });
      expect((await t.app.get(MirrorStore).findByRepository(response.body.id))!.nextUpdateUnix).toBe(0);
    });

    it('reports a missing source as Migration failed and leaves nothing behind', async () => {
      const name = uniqueName('missing');
      const response = await migrate(alice, { clone_addr: upstream.url('does-not-exist'), repo_name: name }).expect(422);
      expect(response.body.message).toMatch(/^Migration failed: .+\.$/);
      await t.http
        .get(t.api(`/repos/${alice.name}/${name}`))
        .set(withToken(alice.token))
        .expect(404);
      expect(fs.existsSync(repositoryDir(t.dataDir, alice.name, name))).toBe(false);
      expect(fs.readdirSync(path.join(t.dataDir, 'repositories', '.incoming'))).toEqual([]);
    });
  });

  describe('sources that redirect, stall or need credentials', () => {
    let redirect: GitUpstream;
    let stall: GitUpstream;
    let locked: GitUpstream;
    const password = 'upstream-secret-Pa55';

    beforeAll(async () => {
      locked = await GitUpstream.start({ kind: 'basic', username: 'carol', password });
      redirect = await GitUpstream.start({ kind: 'redirect', location: upstream.baseUrl.replace(/\/$/, '') });
      stall = await GitUpstream.start({ kind: 'stall' });
    });
    afterAll(async () => {
      await Promise.all([redirect.close(), stall.close(), locked.close()]);
    });

    it('never follows a redirect', async () => {
      await seed('target');
      const before = upstream.seen.length;
      const response = await migrate(alice, { clone_addr: redirect.url('target'), repo_name: uniqueName('r') }).expect(422);
      expect(response.body.message).toMatch(/^Migration failed: .+\.$/);
      expect(redirect.seen.length).toBeGreaterThan(0);
      expect(upstream.seen.length).toBe(before);
    });

    it('gives up on a source that stalls, leaving nothing behind', async () => {
      const name = uniqueName('stalled');
      const response = await migrate(alice, { clone_addr: stall.url('x'), repo_name: name }).expect(422);
      expect(response.body.message).toBe(`Migration failed: clone timed out after ${CLONE_TIMEOUT_MS / 1000} s.`);
      expect(stall.seen.length).toBeGreaterThan(0);
      await t.http
        .get(t.api(`/repos/${alice.name}/${name}`))
        .set(withToken(alice.token))
        .expect(404);
      expect(fs.readdirSync(path.join(t.dataDir, 'repositories', '.incoming'))).toEqual([]);
    });

    it('reports refused credentials as Authentication failed', async () => {
      await seed('private', { 'secret.txt': 's\n' }, 'main', locked);
      const none = await migrate(alice, { clone_addr: locked.url('private'), repo_name: uniqueName('r') }).expect(422);
      expect(none.body.message).toMatch(/^Authentication failed: .+\.$/);
      const wrong = await migrate(alice, {
        clone_addr: locked.url('private'),
        repo_name: uniqueName('r'),
        auth_username: 'carol',
        auth_password: 'wrong-password',
      }).expect(422);
      expect(wrong.body.message).toMatch(/^Authentication failed: .+\.$/);
      expect(wrong.text).not.toContain('wrong-password');
    });

    it('fetches with stored credentials that appear nowhere but the encrypted column', async () => {
      const work = await seed('private2', { 'secret.txt': 's\n' }, 'main', locked);
      const name = uniqueName('locked');
      const response = await migrate(alice, {
        clone_addr: locked.url('private2'),
        repo_name: name,
        mirror: true,
        auth_username: 'carol',
        auth_password: password,
      }).expect(201);
      expect(response.text).not.toContain(password);
      expect(locked.seen.some((seen) => seen.authorization === `Basic ${Buffer.from(`carol:${password}`).toString('base64')}`)).toBe(true);

      await commit(work, 'more.txt', 'more\n');
      await client.ok(['push', '--quiet', locked.dir('private2'), 'main'], { cwd: work });
      await syncAndWait(alice.name, name);
      const dir = repositoryDir(t.dataDir, alice.name, name);
      expect(refs(dir)).toBe(refs(locked.dir('private2')));

      const row = await t.dataSource.getRepository(MirrorEntity).findOneByOrFail({ repoId: response.body.id });
      expect(row.credentials).toMatch(/^v1:/);
      expect(row.credentials).not.toContain(password);
      expect(treeContains(dir, password)).toBe(false);
      expect(treeContains(dir, Buffer.from(`carol:${password}`).toString('base64'))).toBe(false);
      for (const view of [`/repos/${alice.name}/${name}`, `/repos/search?q=${name}`, `/user/repos`]) {
        const body = (await t.http.get(t.api(view)).set(withToken(alice.token)).expect(200)).text;
        expect(body).not.toContain(password);
        expect(body).not.toContain('carol');
      }
      // The failed attempts above were logged, without the secret.
      expect(log.lines.some((line) => line.includes('migration clone failed'))).toBe(true);
      expect(log.lines.join('\n')).not.toContain(password);
      expect(log.lines.join('\n')).not.toContain('wrong-password');
    });

    it('uses auth_token as the password of oauth2', async () => {
      const tokenServer = await GitUpstream.start({ kind: 'basic', username: 'oauth2', password: 'tok-123456' });
      try {
        await seed('tokened', undefined, 'main', tokenServer);
        await migrate(alice, { clone_addr: tokenServer.url('tokened'), repo_name: uniqueName('tok'), auth_token: 'tok-123456' }).expect(201);
      } finally {
        await tokenServer.close();
      }
    });
  });

  describe('POST /repos/{owner}/{repo}/mirror-sync and the sync procedure', () => {
    let work: string;
    let name: string;
    let mirrorDir: string;

    beforeAll(async () => {
      work = await seed('followed', { 'a.txt': '1\n' });
      await client.ok(['branch', 'feature'], { cwd: work });
      await client.ok(['tag', 'v1'], { cwd: work });
      await client.ok(['tag', 'v2'], { cwd: work });
      await client.ok(['push', '--quiet', upstream.dir('followed'), 'feature', 'v1', 'v2'], { cwd: work });
      name = uniqueName('followed');
      await migrate(alice, { clone_addr: upstream.url('followed'), repo_name: name, mirror: true }).expect(201);
      mirrorDir = repositoryDir(t.dataDir, alice.name, name);
    });

    it('checks 404, 401, 403 and 400 in order, and answers 200 with an empty body', async () => {
      const bob = await makeUser(t);
      await mirrorSync(alice, alice.name, 'no-such-repo').expect(404);
      expect((await mirrorSync(null, alice.name, name).expect(401)).body.message).toBe('token is required');
      expect((await mirrorSync(bob, alice.name, name).expect(403)).body.message).toBe('user should have a permission to write to a repo');
      const plain = await makeRepo(t, alice);
      expect((await mirrorSync(alice, alice.name, plain.name).expect(400)).body.message).toBe('Repository is not a mirror');
      const ok = await mirrorSync(alice, alice.name, name).expect(200);
      expect(ok.text).toBe('');
      expect(ok.headers['content-type']).toBeUndefined();
      await runner().whenIdle();
    });

    it('follows a forced update, a deleted branch and a deleted tag', async () => {
      await client.ok(['reset', '--quiet', '--hard', 'HEAD'], { cwd: work });
      fs.writeFileSync(path.join(work, 'a.txt'), 'rewritten\n');
      await client.ok(['commit', '--quiet', '--amend', '-am', 'rewritten'], { cwd: work });
      await client.ok(['push', '--quiet', '--force', upstream.dir('followed'), 'main', ':feature', ':refs/tags/v1'], { cwd: work });
      now += 5;
      await syncAndWait(alice.name, name);
      expect(refs(mirrorDir)).toBe(refs(upstream.dir('followed')));
      expect(git(mirrorDir, 'show-ref').includes('refs/heads/feature')).toBe(false);
      expect(git(mirrorDir, 'show-ref').includes('refs/tags/v1')).toBe(false);
      const repo = await getRepo(alice.name, name);
      const newest = Number(git(upstream.dir('followed'), 'log', '-1', '--format=%ct', 'main').trim());
      expect(repo.updated_at).toBe(new Date(newest * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
      expect(repo.mirror_updated).toBe(new Date(now * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z'));
    });

    it('runs two syncs in quick succession and ends with the latest upstream state', async () => {
      await commit(work, 'b.txt', 'b\n');
      await client.ok(['push', '--quiet', upstream.dir('followed'), 'main'], { cwd: work });
      await mirrorSync(alice, alice.name, name).expect(200);
      await mirrorSync(alice, alice.name, name).expect(200);
      await runner().whenIdle();
      expect(refs(mirrorDir)).toBe(refs(upstream.dir('followed')));
    });

    it('keeps the mirror unchanged when its upstream vanished, and retries in 10 minutes', async () => {
      const before = { refs: refs(mirrorDir), repo: await getRepo(alice.name, name) };
      const parked = `${upstream.dir('followed')}.away`;
      fs.renameSync(upstream.dir('followed'), parked);
      try {
        now += 60;
        await syncAndWait(alice.name, name);
        expect(refs(mirrorDir)).toBe(before.refs);
        const after = await getRepo(alice.name, name);
        expect(after.mirror_updated).toBe(before.repo.mirror_updated);
        expect(after.size).toBe(before.repo.size);
        expect(after.updated_at).toBe(before.repo.updated_at);
        expect((await t.app.get(MirrorStore).findByRepository(after.id))!.nextUpdateUnix).toBe(now + 600);
        expect(log.lines.some((line) => line.includes(`sync of mirror ${alice.name}/${name} failed`))).toBe(true);
      } finally {
        fs.renameSync(parked, upstream.dir('followed'));
      }
    });

    it('rechecks the host policy before each sync, and contacts nothing it refuses', async () => {
      await commit(work, 'policy.txt', 'p\n');
      await client.ok(['push', '--quiet', upstream.dir('followed'), 'main'], { cwd: work });
      const before = { refs: refs(mirrorDir), repo: await getRepo(alice.name, name) };
      const seen = upstream.seen.length;
      t.config.allowLocalNetworks = false;
      try {
        now += 1;
        await syncAndWait(alice.name, name);
      } finally {
        t.config.allowLocalNetworks = true;
      }
      expect(upstream.seen.length).toBe(seen);
      expect(refs(mirrorDir)).toBe(before.refs);
      expect((await getRepo(alice.name, name)).mirror_updated).toBe(before.repo.mirror_updated);
      expect((await t.app.get(MirrorStore).findByRepository(before.repo.id))!.nextUpdateUnix).toBe(now + 600);
      await syncAndWait(alice.name, name);
      expect(refs(mirrorDir)).toBe(refs(upstream.dir('followed')));
    });

    it('fills an empty mirror: default branch main before master', async () => {
      await client.ok(['init', '--bare', '--quiet', upstream.dir('late')]);
      const emptyName = uniqueName('late');
      await migrate(alice, { clone_addr: upstream.url('late'), repo_name: emptyName, mirror: true }).expect(201);
      const late = await client.workingCopy('master', { 'x.txt': 'x\n' });
      await client.ok(['push', '--quiet', upstream.dir('late'), 'master', 'master:zeta', 'master:main'], { cwd: late });
      await syncAndWait(alice.name, emptyName);
      const repo = await getRepo(alice.name, emptyName);
      expect(repo).toMatchObject({ empty: false, default_branch: 'main' });
      expect(repo.size).toBeGreaterThan(0);
      expect(git(repositoryDir(t.dataDir, alice.name, emptyName), 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
    });

    it('accepts mirror_interval on PATCH for a mirror only, with the same rules', async () => {
      const patch = (repo: string, body: object) =>
        t.http
          .patch(t.api(`/repos/${alice.name}/${repo}`))
          .set(withToken(alice.token))
          .send(body);
      expect((await patch(name, { mirror_interval: '2h' }).expect(200)).body.mirror_interval).toBe('2h0m0s');
      expect((await t.app.get(MirrorStore).findByRepository((await getRepo(alice.name, name)).id))!.nextUpdateUnix).toBe(now + 7200);
      expect((await patch(name, { mirror_interval: '1m' }).expect(422)).body.message).toBe('invalid mirror interval: 1m0s is below minimum interval: 10m0s');
      expect((await patch(name, { mirror_interval: 'x' }).expect(422)).body.message).toBe('time: invalid duration "x"');
      expect((await getRepo(alice.name, name)).mirror_interval).toBe('2h0m0s');
      const plain = await makeRepo(t, alice);
      expect((await patch(plain.name, { mirror_interval: '1h' }).expect(422)).body.message).toBe('repo is not a mirror, can not change mirror interval');
    });
  });

  describe('the scheduler', () => {
    it('syncs due mirrors on a tick, and only due ones', async () => {
      const work = await seed('scheduled');
      const name = uniqueName('sched');
      const created = await migrate(alice, { clone_addr: upstream.url('scheduled'), repo_name: name, mirror: true, mirror_interval: '10m' }).expect(201);
      await commit(work, 'later.txt', 'later\n');
      await client.ok(['push', '--quiet', upstream.dir('scheduled'), 'main'], { cwd: work });
      const scheduler = t.app.get(MirrorScheduler);
      const mirrorDir = repositoryDir(t.dataDir, alice.name, name);

      now += 599;
      await scheduler.tick();
      await runner().whenIdle();
      expect(refs(mirrorDir)).not.toBe(refs(upstream.dir('scheduled')));

      now += 1;
      expect(await scheduler.tick()).toBeGreaterThanOrEqual(1);
      await runner().whenIdle();
      expect(refs(mirrorDir)).toBe(refs(upstream.dir('scheduled')));
      expect((await t.app.get(MirrorStore).findByRepository(created.body.id))!.nextUpdateUnix).toBe(now + 600);
    });

    it('picks due mirrors oldest first, 50 at most, and not those claimed elsewhere', async () => {
      const store = t.app.get(MirrorStore);
      const due = await store.findDue(now + 10 ** 6, 50, []);
      expect(due.length).toBeLessThanOrEqual(50);
      expect((await store.findDue(now + 10 ** 6, 2, [])).map((mirror) => mirror.repoId)).toEqual(due.slice(0, 2).map((mirror) => mirror.repoId));
      const updated = [];
      for (const mirror of due) {
        const row = await t.dataSource.query('SELECT mirror_updated_unix AS u FROM repository WHERE id = ?', [mirror.repoId]);
        updated.push(Number(row[0].u));
      }
      expect(updated).toEqual([...updated].sort((a, b) => a - b));
      expect(due.length).toBeGreaterThan(0);
      const first = due[0].repoId;
      expect(await store.claim(first, 'other-process', now, now + 100)).toBe(true);
      expect((await store.findDue(now + 50, 50, [])).map((mirror) => mirror.repoId)).not.toContain(first);
      // A second holder cannot take a live claim; once expired, it can.
      expect(await store.claim(first, 'third-process', now + 50, now + 150)).toBe(false);
      expect(await store.claim(first, 'third-process', now + 101, now + 200)).toBe(true);
      await store.release(first, 'third-process', null);
      expect(await store.claim(first, 'other-process', now, now + 1)).toBe(true);
      await store.release(first, 'other-process', null);
    });

    it('does not sync a mirror another process has claimed, until that claim ends', async () => {
      const work = await seed('claimed');
      const name = uniqueName('claimed');
      const created = await migrate(alice, { clone_addr: upstream.url('claimed'), repo_name: name, mirror: true }).expect(201);
      await commit(work, 'c.txt', 'c\n');
      await client.ok(['push', '--quiet', upstream.dir('claimed'), 'main'], { cwd: work });
      const store = t.app.get(MirrorStore);
      const dir = repositoryDir(t.dataDir, alice.name, name);
      expect(await store.claim(created.body.id, 'another-anvil', now, now + 900)).toBe(true);
      const outcomes: string[] = [];
      const stop = runner().onSynced((repoId, outcome) => repoId === created.body.id && outcomes.push(outcome));
      try {
        await syncAndWait(alice.name, name);
        expect(outcomes).toEqual(['busy']);
        expect(refs(dir)).not.toBe(refs(upstream.dir('claimed')));
        // A refused request is tried again a little later: on a slow machine that retry may also find the claim
        // (busy again) or come after the release (a second sync). Nothing syncs while the claim holds; after it, a
        // request syncs.
        await store.release(created.body.id, 'another-anvil', null);
        const released = outcomes.length;
        await syncAndWait(alice.name, name);
        expect(outcomes.slice(0, released).every((outcome) => outcome === 'busy')).toBe(true);
        expect(outcomes.every((outcome) => outcome === 'busy' || outcome === 'synced')).toBe(true);
        expect(outcomes[outcomes.length - 1]).toBe('synced');
        expect(refs(dir)).toBe(refs(upstream.dir('claimed')));
      } finally {
        stop();
      }
    });

    it('skips the mirrors of an owner over quota and leaves them due', async () => {
      const admin = await makeUser(t, { admin: true });
      const dave = await makeUser(t);
      const work = await seed('quota-src');
      const name = uniqueName('q');
      await migrate(dave, { clone_addr: upstream.url('quota-src'), repo_name: name, mirror: true, mirror_interval: '10m' }).expect(201);
      const group = uniqueName('grp');
      await t.http
        .post(t.api('/admin/quota/groups'))
        .set(withToken(admin.token))
        .send({ name: group, rules: [{ name: uniqueName('rule'), limit: 0, subjects: ['size:repos:all'] }] })
        .expect(201);
      await t.http
        .put(t.api(`/admin/quota/groups/${group}/users/${dave.name}`))
        .set(withToken(admin.token))
        .expect(204);
      await commit(work, 'q.txt', 'q\n');
      await client.ok(['push', '--quiet', upstream.dir('quota-src'), 'main'], { cwd: work });
      now += 601;
      await t.app.get(MirrorScheduler).tick();
      await runner().whenIdle();
      const dir = repositoryDir(t.dataDir, dave.name, name);
      expect(refs(dir)).not.toBe(refs(upstream.dir('quota-src')));
      const repo = (
        await t.http
          .get(t.api(`/repos/${dave.name}/${name}`))
          .set(withToken(dave.token))
          .expect(200)
      ).body;
      const mirror = await t.app.get(MirrorStore).findByRepository(repo.id);
      expect(mirror!.nextUpdateUnix).toBeLessThanOrEqual(now);
      // mirror-sync on an owner over quota for size:git:all is 413.
      await t.http
        .post(t.api(`/repos/${dave.name}/${name}/mirror-sync`))
        .set(withToken(dave.token))
        .expect(413);
    });
  });
});

describe('host policy with ALLOW_LOCAL_NETWORKS=false', () => {
  let t: TestApp;
  let upstream: GitUpstream;

  beforeAll(async () => {
    t = await startTestApp({ ALLOW_LOCAL_NETWORKS: 'false' }, (config) => {
      config.mirrors.tickMs = 0;
    });
    upstream = await GitUpstream.start();
  });
  afterAll(async () => {
    await upstream.close();
    await t.close();
  });

  it('refuses loopback and private sources without contacting them', async () => {
    const user = await makeUser(t);
    const localhostUrl = upstream.url('x').replace('127.0.0.1', 'localhost');
    for (const address of [
      upstream.url('x'),
      localhostUrl,
      'http://10.0.0.1/x.git',
      'http://[::1]/x.git',
      'http://[::ffff:127.0.0.1]/x.git',
      'git://192.168.1.1/x.git',
    ]) {
      const response = await t.http
        .post(t.api('/repos/migrate'))
        .set(withToken(user.token))
        .send({ clone_addr: address, repo_name: uniqueName('r') })
        .expect(422);
      expect(response.body.message).toBe('You can not import from disallowed hosts.');
    }
    expect(upstream.seen).toEqual([]);
  });
});

describe('shutdown while a sync runs', () => {
  it('waits for the sync (bounded), then stops its fetch without changing a ref', async () => {
    const t = await startTestApp({ ALLOW_LOCAL_NETWORKS: 'true', GIT_DRAIN_TIMEOUT: '1' }, (config) => {
      config.mirrors.tickMs = 0;
    });
    const upstream = await GitUpstream.start();
    const client = new GitClient();
    let closed = false;
    try {
      const user = await makeUser(t);
      await client.ok(['init', '--bare', '--quiet', '--initial-branch', 'main', upstream.dir('src')]);
      const work = await client.workingCopy('main', { 'a.txt': 'a\n' });
      await client.ok(['push', '--quiet', upstream.dir('src'), 'main'], { cwd: work });
      const name = uniqueName('m');
      await t.http
        .post(t.api('/repos/migrate'))
        .set(withToken(user.token))
        .send({ clone_addr: upstream.url('src'), repo_name: name, mirror: true })
        .expect(201);
      const dir = repositoryDir(t.dataDir, user.name, name);
      const before = refs(dir);
      fs.writeFileSync(path.join(work, 'b.txt'), 'b\n');
      await client.ok(['add', 'b.txt'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'b'], { cwd: work });
      await client.ok(['push', '--quiet', upstream.dir('src'), 'main'], { cwd: work });
      upstream.setMode({ kind: 'stall' });
      const outcomes: string[] = [];
      let refsWhenStopped = '';
      t.app.get(MirrorRunner).onSynced((_repoId, outcome) => {
        outcomes.push(outcome);
        refsWhenStopped = refs(dir);
      });
      const seenBefore = upstream.seen.length;
      await t.http
        .post(t.api(`/repos/${user.name}/${name}/mirror-sync`))
        .set(withToken(user.token))
        .expect(200);
      // The fetch has reached the stalling source before the server is told to stop.
      while (upstream.seen.length === seenBefore) await new Promise((resolve) => setImmediate(resolve));
      expect(t.app.get(MirrorRunner).activeCount).toBe(1);
      await t.close();
      closed = true;
      expect(outcomes).toEqual(['stopped']);
      expect(refsWhenStopped).toBe(before);
    } finally {
      if (!closed) await t.close();
      await upstream.close();
      client.dispose();
    }
  });
});
