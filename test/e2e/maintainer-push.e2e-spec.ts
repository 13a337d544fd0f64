import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

/**
 * Maintainers on a fork's pull request branch (docs/pull-requests.md, "Maintainers on the head branch"): when the
 * poster of a pull request from a fork allows maintainers to edit, a writer of the base repository who does not
 * write the fork may push to that one branch of the fork, over HTTP, over SSH and through the contents API;
 * nothing else of the fork, and nothing once the pull request is closed or the poster takes the permission back.
 */
describe('maintainers push to the head branch of a pull request from a fork', () => {
  let t: TestApp;
  let base: string;
  let sshPort: number;
  let client: GitClient;
  let owner: TestUser;
  let contributor: TestUser;
  let maintainer: TestUser;
  let maintainerKey: SshKeyFiles;
  let reader: TestUser;
  const as = (user: TestUser) => withToken(user.token);

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    base = await t.listen();
    sshPort = t.app.get(SshEndpoint).port;
    client = new GitClient();
    [owner, contributor, maintainer, reader] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
    maintainerKey = generateSshKey(client.home, 'maintainer');
    await t.http.post(t.api('/user/keys')).set(as(maintainer)).send({ title: 'maintainer', key: maintainerKey.publicLine }).expect(201);
  });
  afterAll(async () => {
    client?.dispose();
    await t?.close();
  });

  const httpUrl = (user: TestUser, fullName: string) => withCredentials(base, `${fullName}.git`, user.name, user.password);
  const sshUrl = (fullName: string) => `ssh://git@127.0.0.1:${sshPort}/${fullName}.git`;

  interface Scenario {
    source: string;
    fork: string;
    /** The pull request's number in the source. */
    index: number;
  }

  /**
   * The owner's source (main; `maintainer` writes it, `reader` reads it), the contributor's fork with branches
   * `fix` and `other`, and the contributor's pull request `contributor:fix` → main, maintainers allowed to edit.
   */
  async function scenario(): Promise<Scenario> {
    const source = (await makeRepo(t, owner)).full_name as string;
    const work = await client.workingCopy('main', { 'README.md': 'hello\n', 'file.txt': 'one\n' });
    await client.ok(['push', '--quiet', httpUrl(owner, source), 'main:main'], { cwd: work });
    for (const [user, permission] of [
      [maintainer, 'write'],
      [reader, 'read'],
    ] as const) {
      await t.http
        .put(t.api(`/repos/${source}/collaborators/${user.name}`))
        .set(as(owner))
        .send({ permission })
        .expect(204);
    }
    const fork = (
      await t.http
        .post(t.api(`/repos/${source}/forks`))
        .set(as(contributor))
        .send({})
        .expect(202)
    ).body.full_name as string;
    await client.ok(['push', '--quiet', httpUrl(contributor, fork), 'main:refs/heads/fix', 'main:refs/heads/other'], { cwd: work });
    const pull = await t.http
      .post(t.api(`/repos/${source}/pulls`))
      .set(as(contributor))
      .send({ head: `${contributor.name}:fix`, base: 'main', title: 'Fix' })
      .expect(201);
    await setMaintainerEdit({ source, fork, index: pull.body.number }, true);
    return { source, fork, index: pull.body.number };
  }

  async function setMaintainerEdit(s: Scenario, allowed: boolean): Promise<void> {
    const edited = await t.http
      .patch(t.api(`/repos/${s.source}/pulls/${s.index}`))
      .set(as(contributor))
      .send({ allow_maintainer_edit: allowed })
      .expect(201);
    expect(edited.body.allow_maintainer_edit).toBe(allowed);
  }

  /** A clone of the fork (read as `user`) with one new commit on top of `branch`; the working copy. */
  async function commitOn(s: Scenario, user: TestUser, branch: string): Promise<string> {
    const work = path.join(client.home, uniqueName('work'));
    await client.ok(['clone', '--quiet', '--branch', branch, httpUrl(user, s.fork), work]);
    fs.writeFileSync(path.join(work, 'file.txt'), `${uniqueName('line')}\n`);
    await client.ok(['commit', '--quiet', '-am', `change by ${user.name}`], { cwd: work });
    return work;
  }

  const headOf = async (s: Scenario, branch: string) =>
    (
      await t.http
        .get(t.api(`/repos/${s.fork}/branches/${branch}`))
        .set(as(contributor))
        .expect(200)
    ).body.commit.id as string;
  const localHead = async (work: string) => (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();

  /** PUT …/contents/file.txt on `branch` of the fork as `user`. */
  async function writeFile(s: Scenario, user: TestUser, branch: string, extra: Record<string, unknown> = {}) {
    const current = await t.http
      .get(t.api(`/repos/${s.fork}/contents/file.txt?ref=${branch}`))
      .set(as(contributor))
      .expect(200);
    return t.http
      .put(t.api(`/repos/${s.fork}/contents/file.txt`))
      .set(as(user))
      .send({ branch, sha: current.body.sha, content: Buffer.from(`${uniqueName('api')}\n`).toString('base64'), message: 'through the API', ...extra });
  }

  it('over HTTP: the head branch only; other branches, tags, creations and deletions are refused, as are readers of the base', async () => {
    const s = await scenario();
    const work = await commitOn(s, maintainer, 'fix');
    await client.ok(['push', '--quiet', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/fix'], { cwd: work });
    expect(await headOf(s, 'fix')).toBe(await localHead(work));

    const before = await headOf(s, 'other');
    const other = await client.run(['push', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/other'], { cwd: work });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(`Anvil: User '${maintainer.name}' is not allowed to push to branch 'other' in '${s.fork}'.`);
    expect(await headOf(s, 'other')).toBe(before);

    // One refused ref refuses the whole push: `fix` does not move along with a tag.
    const fixBefore = await headOf(s, 'fix');
    await client.ok(['commit', '--quiet', '--allow-empty', '-m', 'more'], { cwd: work });
    await client.ok(['tag', 'v1'], { cwd: work });
    const tag = await client.run(['push', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/fix', 'refs/tags/v1'], { cwd: work });
    expect(tag.code).not.toBe(0);
    expect(tag.stderr).toContain(`Anvil: User '${maintainer.name}' is not allowed to push to repository '${s.fork}'.`);
    expect(await headOf(s, 'fix')).toBe(fixBefore);

    const created = await client.run(['push', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/new-branch'], { cwd: work });
    expect(created.code).not.toBe(0);
    expect(created.stderr).toContain(`is not allowed to push to branch 'new-branch'`);
    const deleted = await client.run(['push', httpUrl(maintainer, s.fork), ':refs/heads/fix'], { cwd: work });
    expect(deleted.code).not.toBe(0);
    expect(deleted.stderr).toContain(`is not allowed to push to branch 'fix'`);
    expect(await headOf(s, 'fix')).toBe(fixBefore);

    // A reader of the base is no maintainer: refused before git starts.
    const readerWork = await commitOn(s, reader, 'fix');
    const byReader = await client.run(['push', httpUrl(reader, s.fork), 'HEAD:refs/heads/fix'], { cwd: readerWork });
    expect(byReader.code).not.toBe(0);
    expect(byReader.stderr).toContain(`User '${reader.name}' is not allowed to push to '${s.fork}'.`);
    expect(await headOf(s, 'fix')).toBe(fixBefore);
  });

  it('over SSH: the head branch is pushed, another branch of the fork is refused', async () => {
    const s = await scenario();
    const env = { GIT_SSH_COMMAND: sshCommand(maintainerKey.privateKey) };
    const work = await commitOn(s, maintainer, 'fix');
    await client.ok(['push', '--quiet', sshUrl(s.fork), 'HEAD:refs/heads/fix'], { cwd: work, env });
    expect(await headOf(s, 'fix')).toBe(await localHead(work));
    const before = await headOf(s, 'other');
    const other = await client.run(['push', sshUrl(s.fork), 'HEAD:refs/heads/other'], { cwd: work, env });
    expect(other.code).not.toBe(0);
    expect(other.stderr).toContain(`is not allowed to push to branch 'other' in '${s.fork}'.`);
    expect(await headOf(s, 'other')).toBe(before);
  });

  it('through the contents API: the head branch is written; another branch, a new branch and readers get 403', async () => {
    const s = await scenario();
    const written = await writeFile(s, maintainer, 'fix');
    expect(written.status).toBe(200);
    expect(await headOf(s, 'fix')).toBe(written.body.commit.sha);

    const other = await writeFile(s, maintainer, 'other');
    expect(other.status).toBe(403);
    expect(other.body.message).toBe('user should have a permission to write to this branch');
    const newBranch = await writeFile(s, maintainer, 'fix', { new_branch: 'from-fix' });
    expect(newBranch.status).toBe(403);
    const byReader = await writeFile(s, reader, 'fix');
    expect(byReader.status).toBe(403);
    expect(await headOf(s, 'fix')).toBe(written.body.commit.sha);
    await t.http
      .get(t.api(`/repos/${s.fork}/branches/from-fix`))
      .set(as(contributor))
      .expect(404);
  });

  it('the permission goes when the poster switches it off, and when the pull request is closed, at every door', async () => {
    const s = await scenario();
    const env = { GIT_SSH_COMMAND: sshCommand(maintainerKey.privateKey) };
    const work = await commitOn(s, maintainer, 'fix');
    const before = await headOf(s, 'fix');
    const refusedEverywhere = async () => {
      const overHttp = await client.run(['push', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/fix'], { cwd: work });
      expect(overHttp.code).not.toBe(0);
      expect(overHttp.stderr).toContain(`User '${maintainer.name}' is not allowed to push to '${s.fork}'.`);
      const overSshOutcome = await client.run(['push', sshUrl(s.fork), 'HEAD:refs/heads/fix'], { cwd: work, env });
      expect(overSshOutcome.code).not.toBe(0);
      expect(overSshOutcome.stderr).toContain(`is not authorized to write to ${s.fork}.`);
      expect((await writeFile(s, maintainer, 'fix')).status).toBe(403);
      expect(await headOf(s, 'fix')).toBe(before);
    };

    await setMaintainerEdit(s, false);
    await refusedEverywhere();

    await setMaintainerEdit(s, true);
    await t.http
      .patch(t.api(`/repos/${s.source}/pulls/${s.index}`))
      .set(as(contributor))
      .send({ state: 'closed' })
      .expect(201);
    await refusedEverywhere();

    // Reopened, it lends the branch again.
    await t.http
      .patch(t.api(`/repos/${s.source}/pulls/${s.index}`))
      .set(as(contributor))
      .send({ state: 'open' })
      .expect(201);
    await client.ok(['push', '--quiet', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/fix'], { cwd: work });
    expect(await headOf(s, 'fix')).toBe(await localHead(work));
  });

  it('a poster who no longer writes the fork has nothing to lend', async () => {
    // The fork is forker's; the poster writes it as a collaborator, opens the pull request and allows edits.
    const [forker, poster] = [await makeUser(t), await makeUser(t)];
    const source = (await makeRepo(t, owner)).full_name as string;
    const work = await client.workingCopy('main', { 'file.txt': 'one\n' });
    await client.ok(['push', '--quiet', httpUrl(owner, source), 'main:main'], { cwd: work });
    await t.http
      .put(t.api(`/repos/${source}/collaborators/${maintainer.name}`))
      .set(as(owner))
      .send({ permission: 'write' })
      .expect(204);
    const fork = (
      await t.http
        .post(t.api(`/repos/${source}/forks`))
        .set(as(forker))
        .send({})
        .expect(202)
    ).body.full_name as string;
    await t.http
      .put(t.api(`/repos/${fork}/collaborators/${poster.name}`))
      .set(as(forker))
      .send({ permission: 'write' })
      .expect(204);
    await client.ok(['push', '--quiet', httpUrl(poster, fork), 'main:refs/heads/fix'], { cwd: work });
    const pull = await t.http
      .post(t.api(`/repos/${source}/pulls`))
      .set(as(poster))
      .send({ head: `${forker.name}:fix`, base: 'main', title: 'Fix' })
      .expect(201);
    await t.http
      .patch(t.api(`/repos/${source}/pulls/${pull.body.number}`))
      .set(as(poster))
      .send({ allow_maintainer_edit: true })
      .expect(201);
    const s = { source, fork, index: pull.body.number };
    const mine = await commitOn(s, maintainer, 'fix');
    await client.ok(['push', '--quiet', httpUrl(maintainer, fork), 'HEAD:refs/heads/fix'], { cwd: mine });

    await t.http
      .delete(t.api(`/repos/${fork}/collaborators/${poster.name}`))
      .set(as(forker))
      .expect(204);
    await client.ok(['commit', '--quiet', '--allow-empty', '-m', 'after the poster left'], { cwd: mine });
    const refused = await client.run(['push', httpUrl(maintainer, fork), 'HEAD:refs/heads/fix'], { cwd: mine });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain(`User '${maintainer.name}' is not allowed to push to '${fork}'.`);
    const current = await t.http
      .get(t.api(`/repos/${fork}/contents/file.txt?ref=fix`))
      .set(as(forker))
      .expect(200);
    const written = await t.http
      .put(t.api(`/repos/${fork}/contents/file.txt`))
      .set(as(maintainer))
      .send({ branch: 'fix', sha: current.body.sha, content: Buffer.from('api\n').toString('base64') });
    expect(written.status).toBe(403);
  });

  it("the fork's branch protection still applies to a maintainer", async () => {
    const s = await scenario();
    await t.http
      .post(t.api(`/repos/${s.fork}/branch_protections`))
      .set(as(contributor))
      .send({ rule_name: 'fix', enable_push: true })
      .expect(201);
    const before = await headOf(s, 'fix');
    const work = await commitOn(s, maintainer, 'fix');
    const pushed = await client.run(['push', httpUrl(maintainer, s.fork), 'HEAD:refs/heads/fix'], { cwd: work });
    expect(pushed.code).not.toBe(0);
    expect(pushed.stderr).toContain('Anvil: Not allowed to push to protected branch fix');
    const written = await writeFile(s, maintainer, 'fix');
    expect(written.status).toBe(403);
    expect(await headOf(s, 'fix')).toBe(before);
    // The fork's own writer still pushes there.
    const own = await commitOn(s, contributor, 'fix');
    await client.ok(['push', '--quiet', httpUrl(contributor, s.fork), 'HEAD:refs/heads/fix'], { cwd: own });
    expect(await headOf(s, 'fix')).toBe(await localHead(own));
  });
});
