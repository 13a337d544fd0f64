import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

describe('archived repositories: read-only at every door', () => {
  let t: TestApp;
  let client: GitClient;
  let baseUrl: string;
  let owner: TestUser;
  let stranger: TestUser;
  let repo: Record<string, any>;
  let sshKey: string;

  const archive = (full: string, archived: boolean, who: TestUser = owner) =>
    t.http
      .patch(t.api(`/repos/${full}`))
      .set(withToken(who.token))
      .send({ archived });

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    baseUrl = await t.listen();
    client = new GitClient();
    owner = await makeUser(t);
    stranger = await makeUser(t);
    const key = generateSshKey(client.home, 'owner');
    await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).send({ title: 'k', key: key.publicLine }).expect(201);
    sshKey = key.privateKey;
    repo = await makeRepo(t, owner, { autoInit: true });
  });
  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  it('PATCH archived: administrators only; the Repository JSON tells archived and archived_at', async () => {
    const before = await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200);
    expect(before.body).toMatchObject({ archived: false, archived_at: '1970-01-01T00:00:00Z' });
    await archive(repo.full_name, true, stranger).expect(403);
    const archived = await archive(repo.full_name, true).expect(200);
    expect(archived.body.archived).toBe(true);
    expect(Date.parse(archived.body.archived_at)).toBeGreaterThan(0);
    const search = await t.http.get(t.api(`/repos/search?q=${repo.name}&archived=true`)).expect(200);
    expect(search.body.data.map((found: { id: number }) => found.id)).toEqual([repo.id]);
    const notArchived = await t.http.get(t.api(`/repos/search?q=${repo.name}&archived=false`)).expect(200);
    expect(notArchived.body.data).toEqual([]);
  });

  it('refuses content, branch, tag, release and mirror-sync writes with 423; reads are unchanged', async () => {
    const full = repo.full_name;
    const send = (method: 'post' | 'put' | 'delete', url: string, body: object = {}) => t.http[method](t.api(url)).set(withToken(owner.token)).send(body);
    await send('post', `/repos/${full}/contents/new.txt`, { content: Buffer.from('x').toString('base64') }).expect(423);
    const readme = await t.http.get(t.api(`/repos/${full}/contents/README.md`)).expect(200);
    await send('put', `/repos/${full}/contents/README.md`, { content: Buffer.from('y').toString('base64'), sha: readme.body.sha }).expect(423);
    await send('delete', `/repos/${full}/contents/README.md`, { sha: readme.body.sha }).expect(423);
    await send('post', `/repos/${full}/branches`, { new_branch_name: 'feature' }).expect(423);
    await send('post', `/repos/${full}/tags`, { tag_name: 'v1' }).expect(423);
    await send('post', `/repos/${full}/releases`, { tag_name: 'v1', name: 'one' }).expect(423);
    await send('post', `/repos/${full}/mirror-sync`).expect(423);
    // Who may not write still gets the permission answer first.
    await t.http
      .post(t.api(`/repos/${full}/branches`))
      .set(withToken(stranger.token))
      .send({ new_branch_name: 'x' })
      .expect(403);
    await t.http.get(t.api(`/repos/${full}/branches`)).expect(200);
    await t.http.get(t.api(`/repos/${full}/raw/README.md`)).expect(200);
  });

  it('refuses git push over HTTP and SSH with Forgejo’s messages; clones still work', async () => {
    const httpUrl = withCredentials(baseUrl, `${repo.full_name}.git`, owner.name, owner.token);
    const work = path.join(client.home, 'clone-http');
    await client.ok(['clone', '--quiet', httpUrl, work]);
    fs.writeFileSync(path.join(work, 'file.txt'), 'change\n');
    await client.ok(['add', 'file.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'change'], { cwd: work });
    const httpPush = await client.run(['push', 'origin', 'HEAD:main'], { cwd: work });
    expect(httpPush.code).not.toBe(0);
    expect(httpPush.stderr).toContain('This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.');
    const port = t.app.get(SshEndpoint).port;
    const sshUrl = `ssh://git@127.0.0.1:${port}/${repo.full_name}.git`;
    const sshPush = await client.run(['push', sshUrl, 'HEAD:main'], { cwd: work, env: { GIT_SSH_COMMAND: sshCommand(sshKey) } });
    expect(sshPush.code).not.toBe(0);
    expect(sshPush.stderr).toContain(`Repo: ${repo.full_name} is archived.`);
    // Unarchived, the same push goes through.
    const unarchived = await archive(repo.full_name, false).expect(200);
    expect(unarchived.body).toMatchObject({ archived: false, archived_at: '1970-01-01T00:00:00Z' });
    await client.ok(['push', '--quiet', 'origin', 'HEAD:main'], { cwd: work });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/branches`))
      .set(withToken(owner.token))
      .send({ new_branch_name: 'after' })
      .expect(201);
  });

  it('a mirror cannot be archived (422, as Forgejo)', async () => {
    const other = await makeRepo(t, owner);
    await t.dataSource.query('UPDATE repository SET is_mirror = 1 WHERE id = ?', [other.id]);
    const refused = await archive(other.full_name, true).expect(422);
    expect(refused.body.message).toBe('repo is a mirror, cannot archive/un-archive');
  });
});
