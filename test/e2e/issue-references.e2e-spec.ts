import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { CommitReferences } from '../../src/issues/commit-references';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

type Entry = { type: string; body: string; ref_commit_sha: string; user: { login: string } };

describe('issue references and mentions', () => {
  let t: TestApp;
  let client: GitClient;
  let baseUrl: string;
  let owner: TestUser;
  let outsider: TestUser;

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    baseUrl = await t.listen();
    client = new GitClient();
    owner = await makeUser(t);
    outsider = await makeUser(t);
  });
  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  const issues = (full: string) => t.api(`/repos/${full}/issues`);
  const open = async (full: string, title: string, extra: object = {}) =>
    (
      await t.http
        .post(issues(full))
        .set(withToken(owner.token))
        .send({ title, ...extra })
        .expect(201)
    ).body.number as number;
  const timeline = async (full: string, index: number): Promise<Entry[]> =>
    (
      await t.http
        .get(`${issues(full)}/${index}/timeline`)
        .set(withToken(owner.token))
        .expect(200)
    ).body;
  const state = async (full: string, index: number): Promise<string> =>
    (
      await t.http
        .get(`${issues(full)}/${index}`)
        .set(withToken(owner.token))
        .expect(200)
    ).body.state;

  /** The reading runs after the push is answered: wait (a ceiling, not a speed) until `check` holds. */
  async function eventually(check: () => Promise<boolean>): Promise<void> {
    for (let tries = 0; tries < 300; tries++) {
      if (await check()) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('condition never held');
  }
  const commitRefs = async (full: string, index: number) => (await timeline(full, index)).filter((entry) => entry.type === 'commit_ref');

  async function commitAndPush(work: string, message: string, branch = 'main', env: Record<string, string> = {}, remote = 'origin'): Promise<string> {
    fs.writeFileSync(path.join(work, 'change.txt'), `${message}\n${Math.random()}\n`);
    await client.ok(['add', 'change.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', message], { cwd: work });
    await client.ok(['push', '--quiet', remote, `HEAD:refs/heads/${branch}`], { cwd: work, env });
    return (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  }

  async function cloned(full: string, user = owner): Promise<string> {
    const work = path.join(client.home, `clone-${full.replace('/', '-')}-${user.name}`);
    await client.ok(['clone', '--quiet', withCredentials(baseUrl, `${full}.git`, user.name, user.token), work]);
    return work;
  }

  it('closes and reopens issues from the default branch over HTTP, with commit_ref entries on every issue named', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const full: string = repo.full_name;
    const [first, second] = [await open(full, 'first'), await open(full, 'second')];
    const work = await cloned(full);
    // The milestone's counts follow a close by commit too.
    const milestone = (
      await t.http
        .post(t.api(`/repos/${full}/milestones`))
        .set(withToken(owner.token))
        .send({ title: 'm' })
        .expect(201)
    ).body;
    await t.http
      .patch(t.api(`/repos/${full}/issues/${first}`))
      .set(withToken(owner.token))
      .send({ milestone: milestone.id })
      .expect(201);

    const sha = await commitAndPush(work, `Fixes #${first}, see #${second} and #99\n\nbody`);
    await eventually(async () => (await state(full, first)) === 'closed');
    const entries = await timeline(full, first);
    expect(entries.map((entry) => entry.type)).toEqual(['milestone', 'commit_ref', 'close']);
    expect(entries[1]).toMatchObject({
      body: `<a href="/${full}/commit/${sha}">Fixes #${first}, see #${second} and #99</a>`,
      ref_commit_sha: sha,
      user: { login: owner.name },
    });
    expect(entries[2]).toMatchObject({ ref_commit_sha: sha, user: { login: owner.name } });
    await eventually(async () => (await commitRefs(full, second)).length === 1);
    expect(await state(full, second)).toBe('open');
    expect((await t.http.get(t.api(`/repos/${full}`)).expect(200)).body.open_issues_count).toBe(1);
    expect((await t.http.get(t.api(`/repos/${full}/milestones/${milestone.id}`)).expect(200)).body).toMatchObject({ open_issues: 0, closed_issues: 1 });

    const again = await commitAndPush(work, `reopens #${first}`);
    await eventually(async () => (await state(full, first)) === 'open');
    expect((await timeline(full, first)).map((entry) => [entry.type, entry.ref_commit_sha])).toEqual([
      ['milestone', ''],
      ['commit_ref', sha],
      ['close', sha],
      ['commit_ref', again],
      ['reopen', again],
    ]);
  });

  it('closes from another branch only the issues whose ref names it; a commit is referenced once per issue', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const full: string = repo.full_name;
    const plain = await open(full, 'plain');
    const onBranch = await open(full, 'on branch', { ref: 'feature' });
    const work = await cloned(full);

    const sha = await commitAndPush(work, `fix #${plain}, closes #${onBranch}`, 'feature');
    await eventually(async () => (await state(full, onBranch)) === 'closed');
    await eventually(async () => (await commitRefs(full, plain)).length === 1);
    expect(await state(full, plain)).toBe('open');

    // The same commit pushed to the default branch: the issue now closes, without a second commit_ref.
    await client.ok(['push', '--quiet', 'origin', 'HEAD:refs/heads/main'], { cwd: work });
    await eventually(async () => (await state(full, plain)) === 'closed');
    expect((await commitRefs(full, plain)).map((entry) => entry.ref_commit_sha)).toEqual([sha]);
  });

  it('references issues of other repositories the pusher may read, and closes them only as a writer', async () => {
    const target = await makeRepo(t, outsider, { autoInit: true });
    const hidden = await makeRepo(t, outsider, { private: true });
    const targetIssue = (await t.http.post(issues(target.full_name)).set(withToken(outsider.token)).send({ title: 'theirs' }).expect(201)).body.number;
    await t.http.post(issues(hidden.full_name)).set(withToken(outsider.token)).send({ title: 'secret' }).expect(201);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const work = await cloned(repo.full_name);
    const mine = await open(repo.full_name, 'mine');

    const sha = await commitAndPush(work, `closes ${target.full_name}#${targetIssue}, fixes ${hidden.full_name}#1\n\nresolves #${mine}`);
    await eventually(async () => (await state(repo.full_name, mine)) === 'closed');
    // Local references are read before those into other repositories (Forgejo's order), so wait for the latter.
    const theirTimeline = async () => (await t.http.get(`${issues(target.full_name)}/${targetIssue}/timeline`).expect(200)).body as Entry[];
    await eventually(async () => (await theirTimeline()).length > 0);
    const theirs = await theirTimeline();
    expect(theirs.map((entry) => [entry.type, entry.ref_commit_sha])).toEqual([['commit_ref', sha]]);
    expect(await state(target.full_name, targetIssue)).toBe('open');
    expect(
      (
        await t.http
          .get(`${issues(hidden.full_name)}/1/timeline`)
          .set(withToken(outsider.token))
          .expect(200)
      ).body,
    ).toEqual([]);

    // As a writer of the other repository, the keyword closes its issue too.
    await t.http
      .put(t.api(`/repos/${target.full_name}/collaborators/${owner.name}`))
      .set(withToken(outsider.token))
      .send({ permission: 'write' })
      .expect(204);
    await commitAndPush(work, `closes ${target.full_name}#${targetIssue}`);
    await eventually(async () => (await state(target.full_name, targetIssue)) === 'closed');
  });

  it('reads pushes over SSH and commits made through the contents API', async () => {
    const key = generateSshKey(client.home, 'owner-key');
    await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).send({ title: 'key', key: key.publicLine }).expect(201);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const full: string = repo.full_name;
    const [bySsh, byApi] = [await open(full, 'ssh'), await open(full, 'api')];
    const work = await cloned(full);
    const port = t.app.get(SshEndpoint).port;
    await client.ok(['remote', 'add', 'ssh', `ssh://git@127.0.0.1:${port}/${full}.git`], { cwd: work });
    await commitAndPush(work, `Resolved #${bySsh}`, 'main', { GIT_SSH_COMMAND: sshCommand(key.privateKey) }, 'ssh');
    await eventually(async () => (await state(full, bySsh)) === 'closed');

    const written = await t.http
      .post(t.api(`/repos/${full}/contents/notes.txt`))
      .set(withToken(owner.token))
      .send({ content: Buffer.from('notes').toString('base64'), message: `Closes #${byApi}` })
      .expect(201);
    await eventually(async () => (await state(full, byApi)) === 'closed');
    expect((await commitRefs(full, byApi)).map((entry) => entry.ref_commit_sha)).toEqual([written.body.commit.sha]);
  });

  it('reads a pushed branch a stopped instance left claimed, once its claim has run out', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const full: string = repo.full_name;
    const index = await open(full, 'left behind');
    const work = await cloned(full);
    fs.writeFileSync(path.join(work, 'left.txt'), 'left\n');
    await client.ok(['add', 'left.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', `fixes #${index}`], { cwd: work });
    const sha = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    const before = (await client.ok(['rev-parse', 'HEAD~1'], { cwd: work })).trim();
    // The row a push leaves, as an instance that stopped while holding it would leave it: claimed, claim expired.
    const [pusherRow] = await t.dataSource.query(`SELECT id FROM ${t.dataSource.driver.escape('user')} WHERE lower_name = ?`, [owner.name.toLowerCase()]);
    await client.ok(['push', '--quiet', 'origin', `HEAD:refs/heads/parked`], { cwd: work });
    await t.dataSource.query(
      'INSERT INTO issue_push (repo_id, pusher_id, ref, before_sha, after_sha, attempts, claimed_until, created_unix) VALUES (?, ?, ?, ?, ?, 0, 1, 1)',
      [repo.id, pusherRow.id, 'refs/heads/main', before, sha],
    );
    await t.app.get(CommitReferences).drain();
    await eventually(async () => (await state(full, index)) === 'closed');
    await eventually(async () => Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM issue_push WHERE repo_id = ?', [repo.id]))[0].n) === 0);
  });

  it('records @mentions of users who may read the issues, for mentioned_by', async () => {
    const reader = await makeUser(t);
    const repo = await makeRepo(t, owner, { private: true });
    const full: string = repo.full_name;
    await t.http
      .put(t.api(`/repos/${full}/collaborators/${reader.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'read' })
      .expect(204);
    const inBody = await open(full, 'body', { body: `cc @${reader.name} and @${outsider.name}` });
    const inComment = await open(full, 'comment');
    await t.http
      .post(`${issues(full)}/${inComment}/comments`)
      .set(withToken(owner.token))
      .send({ body: `@${reader.name}: look` })
      .expect(201);
    const byEdit = await open(full, 'edit', { body: 'nobody yet' });
    await t.http
      .patch(`${issues(full)}/${byEdit}`)
      .set(withToken(owner.token))
      .send({ body: `now @${reader.name.toUpperCase()}.` })
      .expect(201);
    await open(full, 'none', { body: `mail ${reader.name}@example.com` });

    const numbers = async (name: string) =>
      (await t.http.get(issues(full)).query({ mentioned_by: name }).set(withToken(owner.token)).expect(200)).body.map(
        (issue: { number: number }) => issue.number,
      );
    expect(await numbers(reader.name)).toEqual([byEdit, inComment, inBody]);
    // The outsider cannot read this private repository: their mention is not recorded.
    expect(await numbers(outsider.name)).toEqual([]);
    // An edit that drops the mention keeps it recorded.
    await t.http
      .patch(`${issues(full)}/${byEdit}`)
      .set(withToken(owner.token))
      .send({ body: 'gone' })
      .expect(201);
    expect(await numbers(reader.name)).toEqual([byEdit, inComment, inBody]);
  });
});
