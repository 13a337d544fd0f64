import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { GitClient } from '../support/git-client';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { generateSshKey, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp } from '../support/test-app';

describe('git over the built-in SSH server', () => {
  let t: TestApp;
  let client: GitClient;
  let port: number;
  let alice: TestUser;
  let aliceKey: SshKeyFiles;

  const sshUrl = (owner: string, repo: string) => `ssh://git@127.0.0.1:${port}/${owner}/${repo}.git`;
  const asKey = (key: SshKeyFiles) => ({ GIT_SSH_COMMAND: sshCommand(key.privateKey) });

  async function register(user: TestUser, key: SshKeyFiles, title: string): Promise<number> {
    const response = await t.http.post(t.api('/user/keys')).set(withToken(user.token)).send({ title, key: key.publicLine });
    expect(response.status).toBe(201);
    return response.body.id;
  }

  beforeAll(async () => {
    t = await startTestApp();
    port = t.app.get(SshEndpoint).port;
    client = new GitClient();
    alice = await makeUser(t);
    aliceKey = generateSshKey(client.home, 'alice');
    await register(alice, aliceKey, 'laptop');
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('pushes and clones with a registered key', async () => {
    const repo = await makeRepo(t, alice, { name: 'over-ssh' });
    expect(repo.ssh_url).toBe(`ssh://git@anvil.test:${port}/${alice.name}/over-ssh.git`);
    const work = await client.workingCopy('main');
    await client.ok(['push', sshUrl(alice.name, 'over-ssh'), 'main'], { cwd: work, env: asKey(aliceKey) });
    const after = await t.http.get(t.api(`/repos/${alice.name}/over-ssh`)).set(withToken(alice.token));
    expect(after.body).toMatchObject({ empty: false, default_branch: 'main' });
    const clone = path.join(client.home, 'clone-ssh');
    await client.ok(['clone', '--quiet', sshUrl(alice.name, 'over-ssh'), clone], { env: asKey(aliceKey) });
    expect(fs.readFileSync(path.join(clone, 'README.md'), 'utf8')).toBe('hello\n');
  });
});
