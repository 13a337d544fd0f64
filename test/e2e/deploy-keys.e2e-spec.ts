import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, GitOutcome } from '../support/git-client';
import { generateSshKey, runSsh, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

describe('deploy keys: /repos/{o}/{r}/keys and SSH logins with them', () => {
  let t: TestApp;
  let client: GitClient;
  let port: number;
  let owner: TestUser;
  let writer: TestUser;
  let admin: TestUser;
  let stranger: TestUser;
  /** owner's repositories with one commit on main: `pub` public, `priv` private. */
  let pub: string;
  let priv: string;

  const sshUrl = (full: string) => `ssh://git@127.0.0.1:${port}/${full}.git`;
  const asKey = (key: SshKeyFiles) => ({ GIT_SSH_COMMAND: sshCommand(key.privateKey) });
  const keys = (full: string) => t.api(`/repos/${full}/keys`);

  const ssh = (key: SshKeyFiles, command?: string): Promise<GitOutcome> => runSsh({ port, env: client.env() }, key, command);

  async function seeded(user: TestUser, options: { private?: boolean } = {}): Promise<string> {
    const name = uniqueName('repo');
    await makeRepo(t, user, { name, private: options.private, autoInit: true });
    return `${user.name}/${name}`;
  }

  async function addKey(full: string, key: SshKeyFiles, body: Record<string, unknown> = {}): Promise<Record<string, any>> {
    const response = await t.http
      .post(keys(full))
      .set(withToken(owner.token))
      .send({ title: uniqueName('key'), key: key.publicLine, ...body });
    expect(response.status).toBe(201);
    return response.body;
  }

  /** A push of one new commit on a new branch over SSH with `key`. */
  async function pushWith(key: SshKeyFiles, full: string): Promise<GitOutcome> {
    const work = await client.workingCopy(uniqueName('branch'), { [`${uniqueName('file')}.txt`]: 'x\n' });
    return client.run(['push', sshUrl(full), 'HEAD'], { cwd: work, env: asKey(key) });
  }

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    port = t.app.get(SshEndpoint).port;
    client = new GitClient();
    owner = await makeUser(t);
    writer = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    stranger = await makeUser(t);
    pub = await seeded(owner);
    priv = await seeded(owner, { private: true });
    await t.http
      .put(t.api(`/repos/${priv}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('the REST routes', () => {
    it('adds a read-only key by default and answers Forgejo DeployKey JSON; lists and gets it', async () => {
      const key = generateSshKey(client.home, uniqueName('ci'));
      const created = await addKey(priv, key, { title: 'ci' });
      expect(created).toEqual({
        id: expect.any(Number),
        key_id: created.id,
        key: key.publicLine,
        url: `http://anvil.test/api/v1/repos/${priv}/keys/${created.id}`,
        title: 'ci',
        fingerprint: expect.stringMatching(/^SHA256:/),
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        read_only: true,
      });
      const listed = await t.http.get(keys(priv)).set(withToken(owner.token)).expect(200);
      expect(listed.headers['x-total-count']).toBe('1');
      expect(listed.body).toHaveLength(1);
      // The repository owner (and a site admin) see the repository, with the key's mode as its permissions.
      expect(listed.body[0]).toMatchObject({
        id: created.id,
        read_only: true,
        repository: { full_name: priv, permissions: { admin: false, push: false, pull: true } },
      });
      const got = await t.http
        .get(t.api(`/repos/${priv}/keys/${created.id}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(got.body).toMatchObject({ id: created.id, title: 'ci', repository: { full_name: priv } });
      const byFingerprint = await t.http.get(keys(priv)).query({ fingerprint: created.fingerprint }).set(withToken(owner.token)).expect(200);
      expect(byFingerprint.body.map((k: { id: number }) => k.id)).toEqual([created.id]);
      const byOtherFingerprint = await t.http.get(keys(priv)).query({ fingerprint: 'SHA256:nothing' }).set(withToken(owner.token)).expect(200);
      expect(byOtherFingerprint.body).toEqual([]);
    });

    it('is managed by repository administrators only: 401 anonymous, 403 a writer, 404 who cannot see a private repository', async () => {
      const key = generateSshKey(client.home, uniqueName('managed'));
      await t.http.get(keys(pub)).expect(401);
      const refused = await t.http.post(keys(priv)).set(withToken(writer.token)).send({ title: 'w', key: key.publicLine }).expect(403);
      expect(refused.body.message).toBe('user should be an owner or a collaborator with admin write of a repository');
      await t.http.get(keys(priv)).set(withToken(writer.token)).expect(403);
      await t.http.get(keys(priv)).set(withToken(stranger.token)).expect(404);
      await t.http.post(keys(priv)).set(withToken(stranger.token)).send({ title: 's', key: key.publicLine }).expect(404);
      await t.http.get(keys(priv)).expect(404);
      // A site admin manages any repository's keys.
      const byAdmin = await t.http
        .post(keys(priv))
        .set(withToken(admin.token))
        .send({ title: uniqueName('a'), key: key.publicLine, read_only: false })
        .expect(201);
      expect(byAdmin.body.read_only).toBe(false);
    });

    it("refuses bad input with Forgejo's 422 messages", async () => {
      const invalid = await t.http.post(keys(pub)).set(withToken(owner.token)).send({ title: 'bad', key: 'ssh-ed25519 AAAA' }).expect(422);
      expect(invalid.body.message).toMatch(/^Invalid key content: /);
      await t.http.post(keys(pub)).set(withToken(owner.token)).send({ key: 'x' }).expect(422);
      const notBoolean = await t.http.post(keys(pub)).set(withToken(owner.token)).send({ title: 'x', key: 'x', read_only: 'yes' }).expect(422);
      expect(notBoolean.body.message).toContain('[ReadOnly]');
      const key = generateSshKey(client.home, uniqueName('twice'));
      await addKey(pub, key, { title: 'twice' });
      const again = await t.http.post(keys(pub)).set(withToken(owner.token)).send({ title: 'other', key: key.publicLine }).expect(422);
      expect(again.body.message).toBe('This key has already been added to this repository');
      const other = generateSshKey(client.home, uniqueName('named'));
      const sameName = await t.http.post(keys(pub)).set(withToken(owner.token)).send({ title: 'twice', key: other.publicLine }).expect(422);
      expect(sameName.body.message).toBe('A key with the same name already exists');
    });

    it('shares key material between repositories (one key_id) but never with a user key, either way', async () => {
      const shared = generateSshKey(client.home, uniqueName('shared'));
      const first = await addKey(pub, shared);
      const second = await addKey(priv, shared);
      expect(second.id).not.toBe(first.id);
      expect(second.key_id).toBe(first.id);
      const asUserKey = await t.http.post(t.api('/user/keys')).set(withToken(stranger.token)).send({ title: 'mine', key: shared.publicLine }).expect(422);
      expect(asUserKey.body.message).toBe('Key content has been used as non-deploy key');
      const userKey = generateSshKey(client.home, uniqueName('user'));
      await t.http
        .post(t.api('/user/keys'))
        .set(withToken(stranger.token))
        .send({ title: uniqueName('k'), key: userKey.publicLine })
        .expect(201);
      const asDeployKey = await t.http.post(keys(pub)).set(withToken(owner.token)).send({ title: 'dk', key: userKey.publicLine }).expect(422);
      expect(asDeployKey.body.message).toBe('Key content has been used as non-deploy key');
      const byKeyId = await t.http.get(keys(priv)).query({ key_id: first.id }).set(withToken(owner.token)).expect(200);
      expect(byKeyId.body.map((k: { id: number }) => k.id)).toEqual([second.id]);
    });

    it('a key of another repository is not found here; deleting an unknown id is already done (204)', async () => {
      const key = generateSshKey(client.home, uniqueName('elsewhere'));
      const onPub = await addKey(pub, key);
      await t.http
        .get(t.api(`/repos/${priv}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .delete(t.api(`/repos/${priv}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .get(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(200);
      await t.http
        .get(t.api(`/repos/${pub}/keys/abc`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .delete(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(writer.token))
        .expect(403);
      await t.http
        .delete(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .get(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .delete(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(204);
      // Both the addition and the deletion are in the audit log, by whom and on which repository.
      const audit = await t.http.get(t.api('/admin/audit')).query({ action: 'deploy_key.*', limit: 50 }).set(withToken(admin.token)).expect(200);
      const events = (audit.body as { action: string; target: { id: number }; detail: Record<string, unknown> }[]).filter(
        (event) => event.target.id === onPub.id,
      );
      expect(events.map((event) => event.action).sort()).toEqual(['deploy_key.add', 'deploy_key.delete']);
      expect(events.every((event) => event.detail.repository === pub)).toBe(true);
    });
  });

  describe('SSH logins with a deploy key', () => {
    it('a read-only key clones its repository and may not push to it', async () => {
      const key = generateSshKey(client.home, uniqueName('ro'));
      const added = await addKey(priv, key, { title: 'reader' });
      expect(await client.ok(['ls-remote', sshUrl(priv)], { env: asKey(key) })).toContain('refs/heads/main');
      const push = await pushWith(key, priv);
      expect(push.code).not.toBe(0);
      expect(push.stderr).toContain(`Anvil: Deploy Key: ${added.key_id}:reader is not authorized to write to ${priv}.`);
      const greeting = await ssh(key);
      expect(greeting.code).toBe(0);
      expect(greeting.stdout).toBe("Hi there! You've successfully authenticated with the deploy key named reader, but Anvil does not provide shell access.\n");
    });

    it('a read-write key pushes to its repository, recorded on it', async () => {
      const key = generateSshKey(client.home, uniqueName('rw'));
      await addKey(priv, key, { read_only: false });
      const push = await pushWith(key, priv);
      expect(push.code).toBe(0);
      const branches = await t.http
        .get(t.api(`/repos/${priv}/branches`))
        .set(withToken(owner.token))
        .expect(200);
      expect(branches.body.length).toBeGreaterThan(1);
    });

    it('reaches nothing else: a public repository refuses it with Forgejo words, a private one is not found', async () => {
      const key = generateSshKey(client.home, uniqueName('only'));
      const added = await addKey(priv, key, { read_only: false });
      const otherPublic = await seeded(stranger);
      const otherPrivate = await seeded(stranger, { private: true });
      const publicClone = await ssh(key, `git-upload-pack '${otherPublic}.git'`);
      expect(publicClone.code).toBe(1);
      expect(publicClone.stderr.trim()).toBe(`Anvil: Public (Deploy) Key: ${added.key_id}:${added.title} is not authorized to read ${otherPublic}.`);
      const privateClone = await ssh(key, `git-upload-pack '${otherPrivate}.git'`);
      expect(privateClone.stderr.trim()).toBe(`Anvil: Cannot find repository: ${otherPrivate}`);
      const missing = await ssh(key, `git-receive-pack '${owner.name}/nothing-here.git'`);
      expect(missing.stderr.trim()).toBe(`Anvil: Cannot find repository: ${owner.name}/nothing-here`);
      // Even the owner's own public repository: the key was not added there.
      expect((await pushWith(key, pub)).stderr).toContain('is not authorized to write to');
    });

    it('is locked out at the next connection once the key or its repository is deleted', async () => {
      const key = generateSshKey(client.home, uniqueName('gone'));
      const doomed = await seeded(owner, { private: true });
      const onDoomed = await addKey(doomed, key);
      const onPub = await addKey(pub, key);
      expect((await client.run(['ls-remote', sshUrl(doomed)], { env: asKey(key) })).code).toBe(0);
      await t.http
        .delete(t.api(`/repos/${doomed}`))
        .set(withToken(owner.token))
        .expect(204);
      const afterRepository = await ssh(key, `git-upload-pack '${doomed}.git'`);
      expect(afterRepository.stderr.trim()).toBe(`Anvil: Cannot find repository: ${doomed}`);
      expect(onDoomed.id).not.toBe(onPub.id);
      expect((await client.run(['ls-remote', sshUrl(pub)], { env: asKey(key) })).code).toBe(0);
      await t.http
        .delete(t.api(`/repos/${pub}/keys/${onPub.id}`))
        .set(withToken(owner.token))
        .expect(204);
      const afterKey = await client.run(['ls-remote', sshUrl(pub)], { env: asKey(key) });
      expect(afterKey.code).toBe(128);
      expect(afterKey.stderr).toContain('Permission denied (publickey)');
    });
  });
});
