import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { Clock } from '../../src/common/time';
import { Transactions } from '../../src/database/transactions';
import { RepositoryStore } from '../../src/repos/repository.store';
import { SshServer } from '../../src/ssh/ssh-server';
import { UsersService } from '../../src/users/users.service';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, GitOutcome } from '../support/git-client';
import { generateSshKey, runSsh, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

const GIT_FAILURE = 'fatal: Could not read from remote repository.';

describe('git over the built-in SSH server', () => {
  let t: TestApp;
  let client: GitClient;
  let port: number;
  let alice: TestUser;
  let aliceKey: SshKeyFiles;
  let aliceKeyId: number;
  let bob: TestUser;
  let bobKey: SshKeyFiles;
  /** alice's public and private repositories, each with one commit on main. */
  let pub: string;
  let priv: string;

  const sshUrl = (full: string, suffix = '.git') => `ssh://git@127.0.0.1:${port}/${full}${suffix}`;
  const asKey = (key: SshKeyFiles) => ({ GIT_SSH_COMMAND: sshCommand(key.privateKey) });

  /** The real ssh client with a raw command (or none), as git would run it. */
  const ssh = (key: SshKeyFiles, command?: string, login = 'git', options: string[] = ['-T']): Promise<GitOutcome> =>
    runSsh({ port, env: client.env() }, key, command, login, options);

  async function register(user: TestUser, key: SshKeyFiles, title: string): Promise<number> {
    const response = await t.http.post(t.api('/user/keys')).set(withToken(user.token)).send({ title, key: key.publicLine });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  async function seeded(owner: TestUser, options: { private?: boolean } = {}): Promise<string> {
    const name = uniqueName('repo');
    await makeRepo(t, owner, { name, private: options.private, autoInit: true });
    return `${owner.name}/${name}`;
  }

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    port = t.app.get(SshEndpoint).port;
    client = new GitClient();
    alice = await makeUser(t);
    aliceKey = generateSshKey(client.home, 'alice');
    aliceKeyId = await register(alice, aliceKey, 'laptop');
    bob = await makeUser(t);
    bobKey = generateSshKey(client.home, 'bob', 'ecdsa');
    await register(bob, bobKey, 'bob-key');
    pub = await seeded(alice);
    priv = await seeded(alice, { private: true });
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('server and login', () => {
    it('advertises ssh_url with the bound port, and keeps its generated ed25519 host key in DATA_DIR', async () => {
      const repo = (await t.http.get(t.api(`/repos/${pub}`))).body;
      expect(repo.ssh_url).toBe(`ssh://git@anvil.test:${port}/${pub}.git`);
      const hostKey = path.join(t.dataDir, 'ssh', 'ssh_host_ed25519_key');
      expect(fs.readFileSync(`${hostKey}.pub`, 'utf8')).toMatch(/^ssh-ed25519 /);
      expect(fs.statSync(hostKey).mode & 0o777).toBe(0o600);
    });

    it('pushes to an empty repository and clones back with a registered key', async () => {
      const name = uniqueName('empty');
      await makeRepo(t, alice, { name });
      const work = await client.workingCopy('master');
      await client.ok(['push', sshUrl(`${alice.name}/${name}`), 'master'], { cwd: work, env: asKey(aliceKey) });
      const after = (await t.http.get(t.api(`/repos/${alice.name}/${name}`)).set(withToken(alice.token))).body;
      expect(after).toMatchObject({ empty: false, default_branch: 'master' });
      expect(after.size).toBeGreaterThanOrEqual(0);
      const clone = path.join(client.home, uniqueName('clone'));
      // The scp-like form and no .git suffix work as well.
      await client.ok(['clone', '--quiet', sshUrl(`${alice.name}/${name}`, ''), clone], { env: asKey(aliceKey) });
      expect(fs.readFileSync(path.join(clone, 'README.md'), 'utf8')).toBe('hello\n');
    });

    it('replaces a transport thread that stopped with a new one on the same port', async () => {
      expect(await client.ok(['ls-remote', sshUrl(priv)], { env: asKey(aliceKey) })).toContain('refs/heads/main');
      const server = t.app.get(SshServer);
      const stopped = server['transport'];
      // As an uncaught error in the thread would end it.
      await stopped!['worker'].terminate();
      let replacement = server['transport'];
      for (let attempt = 0; attempt < 100 && (replacement === null || replacement === stopped); attempt += 1) {
        await new Promise((resolve) => setTimeout(resolve, 100));
        replacement = server['transport'];
      }
      expect(replacement).not.toBeNull();
      expect(replacement).not.toBe(stopped);
      expect(server.listeningAddress()).toBe(`127.0.0.1:${port}`);
      expect(await client.ok(['ls-remote', sshUrl(priv)], { env: asKey(aliceKey) })).toContain('refs/heads/main');
    });

    it('accepts RSA keys (signed with rsa-sha2)', async () => {
      const rsa = generateSshKey(client.home, uniqueName('rsa'), 'rsa');
      await register(alice, rsa, uniqueName('rsa-key'));
      expect(await client.ok(['ls-remote', sshUrl(priv)], { env: asKey(rsa) })).toContain('refs/heads/main');
    });

    it('refuses unknown keys and other login names: Permission denied (publickey)', async () => {
      const stranger = generateSshKey(client.home, 'stranger');
      const unknown = await client.run(['ls-remote', sshUrl(pub)], { env: asKey(stranger) });
      expect(unknown.code).toBe(128);
      expect(unknown.stderr).toContain('Permission denied (publickey)');
      expect(unknown.stderr).toContain(GIT_FAILURE);
      const otherLogin = await ssh(aliceKey, `git-upload-pack '${pub}.git'`, alice.name);
      expect(otherLogin.code).toBe(255);
      expect(otherLogin.stderr).toContain('Permission denied (publickey)');
    });

    it('locks a deleted key out on the next connection', async () => {
      const carol = await makeUser(t);
      const key = generateSshKey(client.home, uniqueName('carol'));
      const id = await register(carol, key, 'temporary');
      expect((await client.run(['ls-remote', sshUrl(pub)], { env: asKey(key) })).code).toBe(0);
      await t.http
        .delete(t.api(`/user/keys/${id}`))
        .set(withToken(carol.token))
        .expect(204);
      const after = await client.run(['ls-remote', sshUrl(pub)], { env: asKey(key) });
      expect(after.code).toBe(128);
      expect(after.stderr).toContain('Permission denied (publickey)');
    });

    it('records the key last use when a git command succeeds', async () => {
      const clock = t.app.get(Clock);
      const pinned = jest.spyOn(clock, 'nowUnix').mockReturnValue(2_000_000_000);
      try {
        await client.ok(['ls-remote', sshUrl(pub)], { env: asKey(aliceKey) });
      } finally {
        pinned.mockRestore();
      }
      const key = (await t.http.get(t.api(`/user/keys/${aliceKeyId}`)).set(withToken(alice.token))).body;
      expect(key.updated_at).toBe('2033-05-18T03:33:20Z');
    });

    it('refuses a pty, the sftp subsystem and forwarding', async () => {
      const pty = await ssh(aliceKey, undefined, 'git', ['-tt', '-o', 'LogLevel=INFO']);
      // OpenSSH gives up when a forced pty (-tt) is refused; without -tt it would go on to the greeting.
      expect(pty.stderr).toContain('PTY allocation request failed');
      const sftp = await ssh(aliceKey, 'sftp', 'git', ['-s', '-o', 'LogLevel=INFO']);
      expect(sftp.code).not.toBe(0);
      expect(sftp.stderr).toContain('subsystem request failed');
      const forward = await ssh(aliceKey, undefined, 'git', ['-W', `127.0.0.1:${port}`, '-o', 'LogLevel=INFO']);
      expect(forward.code).not.toBe(0);
      expect(forward.stderr).toMatch(/forwarding failed|open failed/);
    });
  });

  describe('audit', () => {
    it('records a connection whose keys were all refused as one failed SSH sign-in, and a success once', async () => {
      const failures = async () =>
        Number(
          (await t.dataSource.query("SELECT COUNT(*) AS n FROM audit_event WHERE action = 'sign_in' AND outcome = 'failure' AND detail LIKE '%ssh%'"))[0].n,
        );
      const before = await failures();
      const stranger = generateSshKey(client.home, uniqueName('stranger'));
      const refused = await ssh(stranger, 'nonsense');
      expect(refused.code).toBe(255);
      // The event is written when the server sees the connection close: wait for it (bounded).
      for (let tries = 0; tries < 100 && (await failures()) === before; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await failures()).toBe(before + 1);
      const greeting = await ssh(aliceKey);
      expect(greeting.code).toBe(0);
      expect(await failures()).toBe(before + 1);
      const successes = await t.dataSource.query(
        "SELECT actor_name FROM audit_event WHERE action = 'sign_in' AND outcome = 'success' AND detail LIKE '%ssh%' AND actor_name = ?",
        [alice.name],
      );
      expect(successes).toHaveLength(1);
    });
  });

  describe('greeting', () => {
    it('greets an authenticated user on stdout and exits 0', async () => {
      const greeting = await ssh(aliceKey);
      expect(greeting.code).toBe(0);
      expect(greeting.stdout).toBe(
        `Hi there, ${alice.name}! You've successfully authenticated with the key named laptop, but Anvil does not provide shell access.\n` +
          'If this is unexpected, please log in with password and setup Anvil under another user.\n',
      );
    });
  });

  describe('decision order (2.2, 2.4)', () => {
    async function refusal(key: SshKeyFiles, command: string): Promise<string> {
      const outcome = await ssh(key, command);
      expect(outcome.code).toBe(1);
      return outcome.stderr.trim();
    }

    it('tells a disabled account or one that must change its password, before anything else', async () => {
      const dave = await makeUser(t);
      const key = generateSshKey(client.home, uniqueName('dave'));
      await register(dave, key, 'dave');
      const users = t.app.get(UsersService);
      await users.edit(dave.name, { prohibitLogin: true });
      expect(await refusal(key, 'nonsense')).toBe('Anvil: Your account is disabled.');
      const greeting = await ssh(key);
      expect(greeting).toMatchObject({ code: 1, stdout: '' });
      expect(greeting.stderr.trim()).toBe('Anvil: Your account is disabled.');
      await users.edit(dave.name, { prohibitLogin: false, mustChangePassword: true });
      expect(await refusal(key, `git-upload-pack '${pub}.git'`)).toBe(
        'Anvil: You must change your password. Change it at: http://anvil.test/user/settings/change_password',
      );
    });

    it('reports command parsing errors', async () => {
      expect(await refusal(aliceKey, 'git-upload-pack')).toBe('Anvil: Too few arguments');
      expect(await refusal(aliceKey, `git-lfs-transfer '${pub}' download`)).toBe('Anvil: Unknown git command');
      expect(await refusal(aliceKey, `git-upload-pack 'just-a-name.git'`)).toBe('Anvil: Invalid repository path');
      expect(await refusal(aliceKey, `git-upload-pack '${alice.name}/a/b.git'`)).toBe('Anvil: Invalid repo name');
      expect(await refusal(aliceKey, `git-upload-pack '${pub}' ; ls`)).toBe('Anvil: Error parsing arguments');
    });

    it('refuses a command with an unbalanced quote before running git (exit 1), as Forgejo does', async () => {
      for (const command of [`git-upload-pack '${pub}`, `git-upload-pack "${pub}`, `git-upload-pack ${pub}\\`]) {
        const outcome = await ssh(aliceKey, command);
        expect(outcome.code).toBe(1);
        expect(outcome.stderr).toContain('Anvil: Error parsing arguments');
        expect(outcome.stderr).not.toContain('hung up');
      }
    });

    it('answers unknown and hidden repositories alike, on every verb', async () => {
      const unknown = `${alice.name}/nothing-here`;
      for (const verb of ['git-upload-pack', 'git-receive-pack', 'git-upload-archive']) {
        expect(await refusal(bobKey, `${verb} '${priv}.git'`)).toBe(`Anvil: Cannot find repository: ${priv}`);
        expect(await refusal(bobKey, `${verb} '${unknown}.git'`)).toBe(`Anvil: Cannot find repository: ${unknown}`);
      }
      expect(await refusal(bobKey, `git-upload-pack '/nobody-${uniqueName()}/x'`)).toMatch(/^Anvil: Cannot find repository: nobody-/);
    });

    it('keeps pull mirrors read-only', async () => {
      const mirror = await seeded(alice);
      const store = t.app.get(RepositoryStore);
      const repo = await store.findByOwnerAndName(alice.user.id, mirror.split('/')[1]);
      await t.app.get(Transactions).run((tx) => store.update(tx, repo!.id, { isMirror: true }));
      expect(await refusal(aliceKey, `git-receive-pack '${mirror}.git'`)).toBe(`Anvil: Mirror Repository ${mirror} is read-only`);
    });

    it('refuses a push without write permission, naming user and key', async () => {
      const bobKeyId = (await t.http.get(t.api('/user/keys')).set(withToken(bob.token))).body[0].id;
      expect(await refusal(bobKey, `git-receive-pack '${pub}.git'`)).toBe(
        `Anvil: User: ${bob.user.id}:${bob.name} with Key: ${bobKeyId}:bob-key is not authorized to write to ${pub}.`,
      );
      const work = await client.workingCopy('main');
      const pushed = await client.run(['push', sshUrl(pub), 'main:refs/heads/bob'], { cwd: work, env: asKey(bobKey) });
      expect(pushed.code).toBe(128);
      expect(pushed.stderr).toContain('is not authorized to write to');
      expect(pushed.stderr).toContain(GIT_FAILURE);
    });

    it('lets anyone with a key pull public repositories', async () => {
      const listed = await client.ok(['ls-remote', sshUrl(pub)], { env: asKey(bobKey) });
      expect(listed).toContain('refs/heads/main');
    });
  });

  describe('git features over SSH', () => {
    it('speaks protocol v2 through GIT_PROTOCOL', async () => {
      const traced = await client.run(['-c', 'protocol.version=2', 'ls-remote', sshUrl(pub)], { env: { ...asKey(aliceKey), GIT_TRACE_PACKET: '1' } });
      expect(traced.code).toBe(0);
      expect(traced.stderr).toContain('< version 2');
    });

    it('serves git archive --remote (upload-archive)', async () => {
      const archived = await client.run(['archive', `--remote=${sshUrl(pub)}`, '--format=tar', 'main', 'README.md'], { env: asKey(aliceKey) });
      expect(archived.code).toBe(0);
      expect(archived.stdout).toContain('README.md');
    });

    it('runs the same push rules and effects as HTTP', async () => {
      const full = await seeded(alice);
      const work = await client.workingCopy('main');
      const deletion = await client.run(['push', sshUrl(full), ':refs/heads/main'], { cwd: work, env: asKey(aliceKey) });
      expect(deletion.code).toBe(1);
      expect(deletion.stderr).toContain('remote: Anvil: branch main is the default branch and cannot be deleted');
      // A real quota group that refuses everything, for the repository owner.
      const admin = await makeUser(t, { admin: true });
      const group = uniqueName('quota');
      await t.http
        .post(t.api('/admin/quota/groups'))
        .set(withToken(admin.token))
        .send({ name: group, rules: [{ name: group, limit: 0, subjects: ['size:repos:all'] }] })
        .expect(201);
      await t.http
        .put(t.api(`/admin/quota/groups/${group}/users/${alice.name}`))
        .set(withToken(admin.token))
        .expect(204);
      try {
        const refused = await client.run(['push', sshUrl(full), 'main:refs/heads/other'], { cwd: work, env: asKey(aliceKey) });
        expect(refused.code).toBe(1);
        expect(refused.stderr).toContain('remote: Anvil: Quota exceeded');
      } finally {
        await t.http
          .delete(t.api(`/admin/quota/groups/${group}`))
          .set(withToken(admin.token))
          .expect(204);
      }
      await client.ok(['push', sshUrl(full), 'main:refs/heads/other'], { cwd: work, env: asKey(aliceKey) });
      const [owner, name] = full.split('/');
      expect(
        git(repositoryDir(t.dataDir, owner, name), 'for-each-ref', '--format=%(refname)')
          .trim()
          .split('\n'),
      ).toEqual(['refs/heads/main', 'refs/heads/other']);
    });
  });
});

describe('SSH sign-in failures under the per-address limit', () => {
  const LIMIT = 3;
  let t: TestApp;
  let client: GitClient;

  beforeAll(async () => {
    // The window is long so that no count expires while the test runs, however slow the machine.
    t = await startTestApp({ ...WITH_SSH, RATE_LIMIT_SIGN_IN_PER_IP: String(LIMIT), RATE_LIMIT_WINDOW_MS: '3600000' });
    client = new GitClient();
  });
  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('refuses an address past RATE_LIMIT_SIGN_IN_PER_IP, right key included, and records no more failures than the limit', async () => {
    const port = t.app.get(SshEndpoint).port;
    const failures = async () =>
      Number((await t.dataSource.query("SELECT COUNT(*) AS n FROM audit_event WHERE action = 'sign_in' AND outcome = 'failure' AND detail LIKE '%ssh%'"))[0].n);
    const owner = await makeUser(t);
    const key = generateSshKey(client.home, uniqueName('owner'));
    await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).send({ title: 'laptop', key: key.publicLine }).expect(201);
    expect((await runSsh({ port, env: client.env() }, key)).code).toBe(0);
    const stranger = generateSshKey(client.home, uniqueName('stranger'));
    for (let attempt = 0; attempt < 2 * LIMIT; attempt++) expect((await runSsh({ port, env: client.env() }, stranger, 'nonsense')).code).toBe(255);
    // Failures are counted when the server sees each connection close: wait until the limit's worth is in (bounded).
    for (let tries = 0; tries < 100 && (await failures()) < LIMIT; tries++) await new Promise((resolve) => setTimeout(resolve, 100));
    // The address has spent its allowance: even the right key is refused now, as a password would be over HTTP.
    const refused = await runSsh({ port, env: client.env() }, key);
    expect(refused.code).toBe(255);
    expect(await failures()).toBe(LIMIT);
    const successes = await t.dataSource.query(
      "SELECT COUNT(*) AS n FROM audit_event WHERE action = 'sign_in' AND outcome = 'success' AND detail LIKE '%ssh%' AND actor_name = ?",
      [owner.name],
    );
    expect(Number(successes[0].n)).toBe(1);
  });
});
