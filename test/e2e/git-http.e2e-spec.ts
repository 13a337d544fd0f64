import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Clock } from '../../src/common/time';
import { CommitGraphs } from '../../src/git/commit-graphs';
import { Transactions } from '../../src/database/transactions';
import { RepositoryStore } from '../../src/repos/repository.store';
import { UsersService } from '../../src/users/users.service';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withBasic, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

const NO_CACHE = {
  expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  pragma: 'no-cache',
  'cache-control': 'no-cache, max-age=0, must-revalidate',
};

describe('git over smart HTTP', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let alice: TestUser;
  let bob: TestUser;
  /** alice's public repository with one commit on main. */
  let pub: string;
  /** alice's private repository with one commit on main. */
  let priv: string;

  const infoRefs = (repoPath: string, service = 'git-upload-pack') => `/${repoPath}/info/refs?service=${service}`;
  const repoJson = async (full: string) => (await t.http.get(t.api(`/repos/${full}`)).set(withToken(alice.token))).body;

  async function seeded(owner: TestUser, options: { private?: boolean; org?: string } = {}): Promise<string> {
    const name = uniqueName('repo');
    await makeRepo(t, owner, { name, private: options.private, autoInit: true, org: options.org });
    return `${options.org ?? owner.name}/${name}`;
  }

  function expectText(response: { status: number; text: string; headers: Record<string, string> }, status: number, text: string): void {
    expect({ status: response.status, text: response.text }).toEqual({ status, text });
    expect(response.headers['content-type']).toBe('text/plain; charset=utf-8');
  }

  function expectChallenge(response: { status: number; text: string; headers: Record<string, string> }, text: string): void {
    expectText(response, 401, text);
    expect(response.headers['www-authenticate']).toBe('Basic realm="Anvil"');
  }

  /** The body as text, whatever its content type. */
  const text = (request: import('supertest').Test) =>
    request.buffer(true).parse((res, done) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => done(null, Buffer.concat(chunks).toString('utf8')));
    });

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    alice = await makeUser(t);
    bob = await makeUser(t);
    pub = await seeded(alice);
    priv = await seeded(alice, { private: true });
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('routes and wire format (1.1, 1.2)', () => {
    it('advertises refs to anonymous callers of a public repository, with the no-cache headers', async () => {
      const response = await text(t.http.get(infoRefs(pub)));
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/x-git-upload-pack-advertisement');
      expect(response.headers).toMatchObject(NO_CACHE);
      const body = response.body as string;
      expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
      expect(body).toContain('refs/heads/main');
    });

    it('answers HEAD with the same status and headers and no body', async () => {
      const response = await t.http.head(infoRefs(pub));
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/x-git-upload-pack-advertisement');
      expect(response.text ?? '').toBe('');
    });

    it('finds the repository with or without .git and in any case', async () => {
      const [owner, name] = pub.split('/');
      for (const variant of [`${owner}/${name}`, `${owner.toUpperCase()}/${name.toUpperCase()}.git`]) {
        expect((await t.http.get(infoRefs(variant))).status).toBe(200);
      }
      // Only one `.git` is removed, and only in lower case.
      expect((await t.http.get(infoRefs(`${pub}.GIT`)).set(withToken(alice.token))).status).toBe(404);
      expect((await t.http.get(infoRefs(`${pub}.git.git`)).set(withToken(alice.token))).status).toBe(404);
    });

    it('refuses other methods with 405', async () => {
      expect((await t.http.get(`/${pub}/git-upload-pack`)).status).toBe(405);
      expect((await t.http.get(`/${pub}/git-receive-pack`)).status).toBe(405);
      expect((await t.http.post(infoRefs(pub))).status).toBe(405);
      expect((await t.http.put(`/${pub}/git-upload-pack`)).status).toBe(405);
    });

    it('refuses dumb HTTP with 403 and serves no dumb paths', async () => {
      expectText(await t.http.get(`/${pub}/info/refs`), 403, 'Dumb HTTP protocol is not supported');
      expectText(await t.http.get(infoRefs(pub, 'git-upload-archive')), 403, 'Dumb HTTP protocol is not supported');
      expect((await t.http.get(`/${pub}/HEAD`)).status).toBe(404);
      expect((await t.http.get(`/${pub}/objects/info/packs`)).status).toBe(404);
      expect((await t.http.post(`/${pub}/git-upload-archive`)).status).toBe(404);
    });

    it('refuses an RPC with another content type (415) or content encoding (415), and a corrupt gzip body (400)', async () => {
      const rpc = `/${pub}/git-upload-pack`;
      expectText(await t.http.post(rpc).set('Content-Type', 'application/json').send('{}'), 415, 'Unsupported Media Type');
      expectText(
        await t.http.post(rpc).set('Content-Type', 'application/x-git-upload-pack-request').set('Content-Encoding', 'br').send('0000'),
        415,
        'Unsupported Media Type',
      );
      expectText(
        await t.http.post(rpc).set('Content-Type', 'application/x-git-upload-pack-request').set('Content-Encoding', 'gzip').send('not gzip at all'),
        400,
        'Bad Request',
      );
    });

    it('inflates gzip request bodies', async () => {
      const head = git(repositoryDir(t.dataDir, ...(pub.split('/') as [string, string])), 'rev-parse', 'refs/heads/main').trim();
      const want = `want ${head}\n`;
      const request = `${(want.length + 4).toString(16).padStart(4, '0')}${want}00000009done\n`;
      const response = await t.http
        .post(`/${pub}/git-upload-pack`)
        .set('Content-Type', 'application/x-git-upload-pack-request')
        .set('Content-Encoding', 'gzip')
        .buffer(true)
        .parse((res, done) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => done(null, Buffer.concat(chunks)));
        })
        .send(gzipSync(Buffer.from(request)));
      expect(response.status).toBe(200);
      expect(response.headers['content-type']).toBe('application/x-git-upload-pack-result');
      expect(response.headers).toMatchObject(NO_CACHE);
      const body = (response.body as Buffer).toString('latin1');
      expect(body.startsWith('0008NAK\n')).toBe(true);
      expect(body).toContain('PACK');
    });

    it('passes a valid Git-Protocol header to git (protocol v2) and ignores an invalid one', async () => {
      const v2 = await text(t.http.get(infoRefs(pub)).set('Git-Protocol', 'version=2'));
      expect((v2.body as string).startsWith('001e# service=git-upload-pack\n0000000eversion 2\n')).toBe(true);
      const bogus = await text(t.http.get(infoRefs(pub)).set('Git-Protocol', 'version=2; rm -rf /'));
      const body = bogus.body as string;
      expect(body.startsWith('001e# service=git-upload-pack\n0000')).toBe(true);
      expect(body).not.toContain('version 2');
    });

    it('streams a chunked upload sent with Expect: 100-continue', async () => {
      const url = new URL(`/${pub}/git-upload-pack`, base);
      const result = await new Promise<{ status: number; continued: boolean; body: string }>((resolve, reject) => {
        let continued = false;
        const request = http.request(url, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-git-upload-pack-request', Expect: '100-continue', 'Transfer-Encoding': 'chunked' },
        });
        request.on('continue', () => {
          continued = true;
          request.write('00');
          request.end('00');
        });
        request.on('response', (response) => {
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('end', () => resolve({ status: response.statusCode ?? 0, continued, body: Buffer.concat(chunks).toString('utf8') }));
        });
        request.on('error', reject);
      });
      // A lone flush packet wants nothing: git answers with an empty result.
      expect(result).toEqual({ status: 200, continued: true, body: '' });
    });
  });

  describe('authentication and the decision order (1.3, 1.4)', () => {
    it('answers present but wrong credentials with 401 and the challenge, even on a public repository', async () => {
      const wrong = 'Credentials are incorrect or have expired.';
      expectChallenge(await t.http.get(infoRefs(pub)).set(withBasic(alice.name, 'wrong-password')), wrong);
      expectChallenge(await t.http.get(infoRefs(pub)).set(withToken('0'.repeat(40))), wrong);
      expectChallenge(await t.http.get(infoRefs(pub)).set('Authorization', 'Basic !!!'), wrong);
      expectChallenge(await t.http.get(`${infoRefs(pub)}&token=${'1'.repeat(40)}`), wrong);
    });

    it('challenges anonymous callers wherever credentials could help, without telling what exists', async () => {
      expectChallenge(await t.http.get(infoRefs(priv)), 'Unauthorized');
      expectChallenge(await t.http.get(infoRefs(`${alice.name}/no-such-repo`)), 'Unauthorized');
      expectChallenge(await t.http.get(infoRefs(`${uniqueName('nobody')}/x`)), 'Unauthorized');
      expectChallenge(await t.http.get(infoRefs(pub, 'git-receive-pack')), 'Unauthorized');
      expectChallenge(await t.http.post(`/${pub}/git-receive-pack`).set('Content-Type', 'application/x-git-receive-pack-request'), 'Unauthorized');
    });

    it('refuses disabled accounts and accounts that must change their password with 403', async () => {
      const carol = await makeUser(t);
      const users = t.app.get(UsersService);
      await users.edit(carol.name, { prohibitLogin: true });
      expectText(await t.http.get(infoRefs(pub)).set(withBasic(carol.name, carol.password)), 403, 'Your account is disabled.');
      expectText(await t.http.get(infoRefs(pub)).set(withToken(carol.token)), 403, 'Your account is disabled.');
      await users.edit(carol.name, { prohibitLogin: false, active: false });
      expectText(await t.http.get(infoRefs(pub)).set(withToken(carol.token)), 403, 'Your account is disabled.');
      await users.edit(carol.name, { active: true, mustChangePassword: true });
      expectText(
        await t.http.get(infoRefs(pub)).set(withToken(carol.token)),
        403,
        'You must change your password. Change it at: http://anvil.test/user/settings/change_password',
      );
      // Account state comes before the dumb-HTTP check (step 2 before step 3).
      expectText(await t.http.get(`/${pub}/info/refs`).set(withToken(carol.token)), 403, expect.stringContaining('You must change') as unknown as string);
    });

    it('lets public pulls through whatever the token scopes or the caller (step 5)', async () => {
      const userOnly = await makeToken(t, bob.user, ['read:user']);
      const publicOnly = await makeToken(t, bob.user, ['public-only', 'read:repository']);
      expect((await t.http.get(infoRefs(pub)).set(withToken(userOnly))).status).toBe(200);
      expect((await t.http.get(infoRefs(pub)).set(withToken(publicOnly))).status).toBe(200);
    });

    it('checks token scopes before existence (step 7)', async () => {
      const userOnly = await makeToken(t, alice.user, ['read:user']);
      const readOnly = await makeToken(t, alice.user, ['read:repository']);
      const message = (level: string) => `token does not have at least one of required scope(s): [${level}:repository]`;
      expectText(await t.http.get(infoRefs(priv)).set(withToken(userOnly)), 403, message('read'));
      expectText(await t.http.get(infoRefs(`${alice.name}/nothing-here`)).set(withToken(userOnly)), 403, message('read'));
      expectText(await t.http.get(infoRefs(pub, 'git-receive-pack')).set(withToken(readOnly)), 403, message('write'));
      expect((await t.http.get(infoRefs(priv)).set(withToken(readOnly))).status).toBe(200);
    });

    it('answers 404 for unknown and hidden repositories, pushes to unknown names included (step 8)', async () => {
      expectText(await t.http.get(infoRefs(priv)).set(withToken(bob.token)), 404, 'Repository not found');
      expectText(await t.http.get(infoRefs(`${alice.name}/nothing-here`)).set(withToken(bob.token)), 404, 'Repository not found');
      expectText(await t.http.get(infoRefs(`${uniqueName('nobody')}/x`)).set(withToken(bob.token)), 404, 'Repository not found');
      expectText(await t.http.get(infoRefs(`${bob.name}/not-yet`, 'git-receive-pack')).set(withToken(bob.token)), 404, 'Repository not found');
      expectText(await t.http.get(infoRefs(`${pub}.wiki`)).set(withToken(alice.token)), 404, 'Repository not found');
    });

    it('limits public-only tokens to public repositories (step 9)', async () => {
      const publicOnly = await makeToken(t, alice.user, ['public-only', 'write:repository']);
      expectText(await t.http.get(infoRefs(priv)).set(withToken(publicOnly)), 403, 'token scope is limited to public repos');
      expect((await t.http.get(infoRefs(pub, 'git-receive-pack')).set(withToken(publicOnly))).status).toBe(200);
    });

    it("judges a public-only token by the repository alone: a limited owner's public repository is not refused (step 9)", async () => {
      const limited = await makeUser(t, { visibility: 'limited' });
      const repository = await seeded(limited);
      const publicOnly = await makeToken(t, limited.user, ['public-only', 'write:repository']);
      expect((await t.http.get(infoRefs(repository, 'git-receive-pack')).set(withToken(publicOnly))).status).toBe(200);
    });

    it('keeps pull mirrors read-only (step 10)', async () => {
      const mirror = await seeded(alice);
      const repo = await t.app.get(RepositoryStore).findByOwnerAndName(alice.user.id, mirror.split('/')[1]);
      await t.app.get(Transactions).run((tx) => t.app.get(RepositoryStore).update(tx, repo!.id, { isMirror: true }));
      expectText(await t.http.get(infoRefs(mirror, 'git-receive-pack')).set(withToken(alice.token)), 403, 'mirror repository is read-only');
      expect((await t.http.get(infoRefs(mirror)).set(withToken(alice.token))).status).toBe(200);
    });

    it('refuses a push without write permission before git runs (step 11)', async () => {
      expectText(await t.http.get(infoRefs(pub, 'git-receive-pack')).set(withToken(bob.token)), 403, `User '${bob.name}' is not allowed to push to '${pub}'.`);
      expectText(
        await t.http.post(`/${pub}/git-receive-pack`).set(withToken(bob.token)).set('Content-Type', 'application/x-git-receive-pack-request').send('0000'),
        403,
        `User '${bob.name}' is not allowed to push to '${pub}'.`,
      );
    });

    it('lets owners of the owning organisation and site admins push, but not admins with a public-only token', async () => {
      const org = await makeOrg(t, alice.user);
      const orgRepo = await seeded(alice, { org: org.name });
      const privateOrgRepo = await seeded(alice, { org: org.name, private: true });
      const admin = await makeUser(t, { admin: true });
      for (const full of [orgRepo, privateOrgRepo]) {
        expect((await t.http.get(infoRefs(full, 'git-receive-pack')).set(withToken(alice.token))).status).toBe(200);
        expect((await t.http.get(infoRefs(full, 'git-receive-pack')).set(withToken(admin.token))).status).toBe(200);
      }
      const adminPublicOnly = await makeToken(t, admin.user, ['public-only', 'write:repository']);
      expectText(
        await t.http.get(infoRefs(orgRepo, 'git-receive-pack')).set(withToken(adminPublicOnly)),
        403,
        `User '${admin.name}' is not allowed to push to '${orgRepo}'.`,
      );
      // Without admin powers the private repository is out of sight.
      expect((await t.http.get(infoRefs(privateOrgRepo, 'git-receive-pack')).set(withToken(adminPublicOnly))).status).toBe(404);
    });
  });

  describe('with the real git client', () => {
    it('accepts every credential carrier git can send', async () => {
      const work = await client.workingCopy('main', { 'a.txt': 'a\n' });
      const target = await seeded(alice, { private: true });
      const forms = [
        withCredentials(base, `${target}.git`, alice.name, alice.password),
        withCredentials(base, `${target}.git`, 'x', alice.token),
        withCredentials(base, `${target}.git`, alice.token, ''),
        withCredentials(base, `${target}.git`, alice.token, 'x-oauth-basic'),
      ];
      for (const [index, url] of forms.entries()) {
        await client.ok(['push', '--force', url, `main:refs/heads/carrier${index}`], { cwd: work });
        await client.ok(['ls-remote', url]);
      }
      const plain = new URL(`${target}.git`, base).toString();
      await client.ok(['-c', `http.extraHeader=Authorization: token ${alice.token}`, 'ls-remote', plain]);
      const refs = git(repositoryDir(t.dataDir, alice.name, target.split('/')[1]), 'for-each-ref', '--format=%(refname)', 'refs/heads/carrier*');
      expect(refs.trim().split('\n')).toEqual(['refs/heads/carrier0', 'refs/heads/carrier1', 'refs/heads/carrier2', 'refs/heads/carrier3']);
    });

    it('shows git users the messages of 1.5', async () => {
      const anonymous = await client.run(['ls-remote', new URL(priv, base).toString()]);
      expect(anonymous.code).toBe(128);
      expect(anonymous.stderr).toContain('could not read Username');

      const wrong = await client.run(['ls-remote', withCredentials(base, priv, alice.name, 'wrong-password')]);
      expect(wrong.code).toBe(128);
      expect(wrong.stderr).toContain('remote: Credentials are incorrect or have expired.');
      expect(wrong.stderr).toContain('fatal: Authentication failed for');

      const hidden = await client.run(['ls-remote', withCredentials(base, priv, bob.name, bob.password)]);
      expect(hidden.code).toBe(128);
      expect(hidden.stderr).toContain('remote: Repository not found');
      expect(hidden.stderr).toMatch(/fatal: repository '.*' not found/);

      const work = await client.workingCopy('main');
      const forbidden = await client.run(['push', withCredentials(base, pub, bob.name, bob.password), 'main:refs/heads/bob'], { cwd: work });
      expect(forbidden.code).toBe(128);
      expect(forbidden.stderr).toContain(`remote: User '${bob.name}' is not allowed to push to '${pub}'.`);
      expect(forbidden.stderr).toContain('The requested URL returned error: 403');
    });
  });

  describe('push effects', () => {
    const url = (full: string) => withCredentials(base, `${full}.git`, alice.name, alice.password);

    async function emptyRepo(): Promise<string> {
      const name = uniqueName('empty');
      await makeRepo(t, alice, { name });
      return `${alice.name}/${name}`;
    }

    it('makes an empty repository non-empty: default branch by current default, main, master, then push order', async () => {
      const work = await client.workingCopy('work');
      const cases: [string[], string][] = [
        [['feature', 'master', 'main'], 'main'],
        [['feature', 'master'], 'master'],
        [['zeta', 'alpha'], 'zeta'],
      ];
      for (const [branches, expected] of cases) {
        const full = await emptyRepo();
        await client.ok(['push', url(full), ...branches.map((branch) => `work:refs/heads/${branch}`)], { cwd: work });
        expect(await repoJson(full)).toMatchObject({ empty: false, default_branch: expected });
        const [owner, name] = full.split('/');
        expect(git(repositoryDir(t.dataDir, owner, name), 'symbolic-ref', 'HEAD').trim()).toBe(`refs/heads/${expected}`);
      }
    });

    it('writes the commit graph after the push, in the background', async () => {
      const full = await emptyRepo();
      const [owner, name] = full.split('/');
      const dir = repositoryDir(t.dataDir, owner, name);
      const work = await client.workingCopy('graph', { 'a.txt': 'one' });
      await client.ok(['push', url(full), 'graph:refs/heads/main'], { cwd: work });
      await t.app.get(CommitGraphs).settled(dir);
      // A new repository has no graph until the write that follows its first push; git verifies the one written.
      expect(fs.existsSync(path.join(dir, 'objects', 'info', 'commit-graphs', 'commit-graph-chain'))).toBe(true);
      git(dir, 'commit-graph', 'verify');
    });

    it('keeps the current default branch when it is pushed', async () => {
      const full = await emptyRepo();
      await t.http
        .patch(t.api(`/repos/${full}`))
        .set(withToken(alice.token))
        .send({ default_branch: 'develop' })
        .expect(200);
      const work = await client.workingCopy('work');
      await client.ok(['push', url(full), 'work:refs/heads/main', 'work:refs/heads/develop'], { cwd: work });
      expect(await repoJson(full)).toMatchObject({ empty: false, default_branch: 'develop' });
    });

    it('leaves a repository empty after a push of tags only', async () => {
      const full = await emptyRepo();
      const work = await client.workingCopy('work');
      await client.ok(['tag', 'v1'], { cwd: work });
      await client.ok(['push', url(full), 'refs/tags/v1'], { cwd: work });
      expect(await repoJson(full)).toMatchObject({ empty: true });
    });

    it('updates size and updated_at before git push returns, for deletions too', async () => {
      const full = await emptyRepo();
      const clock = t.app.get(Clock);
      const pinned = jest.spyOn(clock, 'nowUnix').mockReturnValue(2_000_000_000);
      try {
        const work = await client.workingCopy('main', { 'data.bin': randomBytes(64 * 1024).toString('base64') });
        await client.ok(['push', url(full), 'main', 'main:refs/heads/extra'], { cwd: work });
        const pushed = await repoJson(full);
        expect(pushed.updated_at).toBe('2033-05-18T03:33:20Z');
        expect(pushed.size).toBeGreaterThanOrEqual(48);
        pinned.mockReturnValue(2_000_000_100);
        await client.ok(['push', url(full), ':refs/heads/extra'], { cwd: work });
        expect((await repoJson(full)).updated_at).toBe('2033-05-18T03:35:00Z');
      } finally {
        pinned.mockRestore();
      }
    });

    it('refuses deleting the default branch, refs/for/* and hidden refs/pull/*', async () => {
      const full = await seeded(alice);
      const work = await client.workingCopy('main');
      const deletion = await client.run(['push', url(full), ':refs/heads/main'], { cwd: work });
      expect(deletion.code).toBe(1);
      expect(deletion.stderr).toContain('remote: Anvil: branch main is the default branch and cannot be deleted');
      expect(deletion.stderr).toContain('(pre-receive hook declined)');
      const agit = await client.run(['push', url(full), 'main:refs/for/main'], { cwd: work });
      expect(agit.code).toBe(1);
      expect(agit.stderr).toContain('remote: Anvil: refs/for/ (AGit pull requests) is not supported');
      const hidden = await client.run(['push', url(full), 'main:refs/pull/1/head'], { cwd: work });
      expect(hidden.code).toBe(1);
      expect(hidden.stderr).toContain('deny updating a hidden ref');
      const [owner, name] = full.split('/');
      expect(git(repositoryDir(t.dataDir, owner, name), 'for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
    });

    it('never runs hooks from the repository directory', async () => {
      const full = await emptyRepo();
      const [owner, name] = full.split('/');
      const hook = path.join(repositoryDir(t.dataDir, owner, name), 'hooks', 'pre-receive');
      fs.writeFileSync(hook, '#!/bin/sh\necho planted >&2\nexit 1\n', { mode: 0o755 });
      const work = await client.workingCopy('main');
      const pushed = await client.run(['push', url(full), 'main'], { cwd: work });
      expect(pushed.code).toBe(0);
      expect(pushed.stderr).not.toContain('planted');
    });

    describe('over quota (a real quota group)', () => {
      let admin: TestUser;
      const asAdmin = () => withToken(admin.token);

      beforeAll(async () => {
        admin = await makeUser(t, { admin: true });
      });

      async function groupFor(target: string, limit: number): Promise<string> {
        const group = uniqueName('quota');
        await t.http
          .post(t.api('/admin/quota/groups'))
          .set(asAdmin())
          .send({ name: group, rules: [{ name: group, limit, subjects: ['size:repos:all'] }] })
          .expect(201);
        await t.http
          .put(t.api(`/admin/quota/groups/${group}/users/${target}`))
          .set(asAdmin())
          .expect(204);
        return group;
      }

      it('refuses any push that writes into a repository of an owner over quota, and allows pushes of deletions only', async () => {
        const org = await makeOrg(t, alice.user);
        const full = await seeded(alice, { org: org.name });
        const [owner, name] = full.split('/');
        const dir = repositoryDir(t.dataDir, owner, name);
        // Branches made behind the quota's back, to delete later.
        git(dir, 'update-ref', 'refs/heads/old', git(dir, 'rev-parse', 'refs/heads/main').trim());
        git(dir, 'update-ref', 'refs/heads/old2', git(dir, 'rev-parse', 'refs/heads/main').trim());
        // The organisation owns the repository: its quota decides, not the pusher's.
        const group = await groupFor(org.name, 0);
        const work = await client.workingCopy('main');
        const refused = await client.run(['push', url(full), 'main:refs/heads/more'], { cwd: work });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('remote: Anvil: Quota exceeded');
        expect(refused.stderr).toContain('(pre-receive hook declined)');
        const mixed = await client.run(['push', url(full), ':refs/heads/old', 'main:refs/heads/new'], { cwd: work });
        expect(mixed.code).toBe(1);
        expect(mixed.stderr).toContain('Anvil: Quota exceeded');
        await client.ok(['push', url(full), ':refs/heads/old', ':refs/heads/old2'], { cwd: work });
        expect(git(dir, 'for-each-ref', '--format=%(refname)').trim()).toBe('refs/heads/main');
        await t.http
          .delete(t.api(`/admin/quota/groups/${group}`))
          .set(asAdmin())
          .expect(204);
        await client.ok(['push', url(full), 'main:refs/heads/more'], { cwd: work });
      });

      it('caps a push at what the quota has left (receive.maxInputSize), and counts an accepted push at once', async () => {
        const owner = await makeUser(t);
        const name = uniqueName('grow');
        await makeRepo(t, owner, { name });
        const sized = (await t.http.get(t.api(`/repos/${owner.name}/${name}`)).set(withToken(owner.token))).body.size * 1024;
        await groupFor(owner.name, sized + 64 * 1024);
        const ownerUrl = withCredentials(base, `${owner.name}/${name}.git`, owner.name, owner.password);
        // A pack larger than the 64 KiB left is refused while it arrives: nothing of it is kept.
        const large = await client.workingCopy('main', { 'data.bin': randomBytes(256 * 1024).toString('base64') });
        const tooLarge = await client.run(['push', ownerUrl, 'main'], { cwd: large });
        expect(tooLarge.code).not.toBe(0);
        expect(tooLarge.stderr).toMatch(/pack exceeds maximum allowed size/);
        const after = (await t.http.get(t.api(`/repos/${owner.name}/${name}`)).set(withToken(owner.token))).body;
        expect(after.empty).toBe(true);
        // One that fits is accepted and its size counted at once.
        const fits = await client.workingCopy('main', { 'data.bin': randomBytes(16 * 1024).toString('base64') });
        await client.ok(['push', ownerUrl, 'main'], { cwd: fits });
        const grown = (await t.http.get(t.api(`/repos/${owner.name}/${name}`)).set(withToken(owner.token))).body;
        expect(grown.empty).toBe(false);
        expect(grown.size * 1024).toBeGreaterThan(sized);
      });
    });
  });

  describe('large and partial transfers', () => {
    it('pushes a 5 MiB blob and clones it back', async () => {
      const full = await seeded(alice);
      const blob = randomBytes(5 * 1024 * 1024);
      const work = await client.workingCopy('main');
      fs.writeFileSync(path.join(work, 'big.bin'), blob);
      await client.ok(['add', 'big.bin'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', 'big'], { cwd: work });
      const url = withCredentials(base, `${full}.git`, alice.name, alice.password);
      await client.ok(['push', '--force', url, 'main'], { cwd: work });
      expect((await repoJson(full)).size).toBeGreaterThanOrEqual(5 * 1024);
      const clone = path.join(client.home, uniqueName('big-clone'));
      await client.ok(['clone', '--quiet', url, clone]);
      expect(fs.readFileSync(path.join(clone, 'big.bin')).equals(blob)).toBe(true);
    });

    it('clones with protocol v2 and partially (--filter=blob:none)', async () => {
      const url = new URL(`${pub}.git`, base).toString();
      const traced = await client.run(['-c', 'protocol.version=2', 'ls-remote', url], { env: { GIT_TRACE_PACKET: '1' } });
      expect(traced.code).toBe(0);
      expect(traced.stderr).toContain('< version 2');
      const clone = path.join(client.home, uniqueName('partial'));
      await client.ok(['-c', 'protocol.version=2', 'clone', '--quiet', '--no-checkout', '--filter=blob:none', url, clone]);
      const missing = await client.ok(['rev-list', '--objects', '--missing=print', 'HEAD'], { cwd: clone });
      expect(missing.split('\n').some((line) => line.startsWith('?'))).toBe(true);
      await client.ok(['checkout', '--quiet', 'main'], { cwd: clone });
      expect(fs.existsSync(path.join(clone, 'README.md'))).toBe(true);
    });
  });
});

describe('git over smart HTTP under a ROOT_URL with a path', () => {
  it('serves the git routes under that path only', async () => {
    const t = await startTestApp({ ROOT_URL: 'http://anvil.test/forge/' });
    try {
      const owner = await makeUser(t);
      const repo = await makeRepo(t, owner, { autoInit: true });
      expect(repo.clone_url).toBe(`http://anvil.test/forge/${repo.full_name}.git`);
      const served = await t.http.get(`/forge/${repo.full_name}.git/info/refs?service=git-upload-pack`);
      expect(served.status).toBe(200);
      expect(served.headers['content-type']).toBe('application/x-git-upload-pack-advertisement');
      expect((await t.http.get(`/${repo.full_name}.git/info/refs?service=git-upload-pack`)).status).toBe(404);
    } finally {
      await t.close();
    }
  });
});
