import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, repositoryDir } from '../support/git';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';
import { SinkRequest, WebhookSink } from '../support/webhook-sink';

/**
 * Pull requests from forks (docs/pull-requests.md, "Heads in forks"): a contributor without write access forks,
 * pushes a branch over HTTP and proposes it as `owner:branch`; the head commits reach the source through the
 * network's pool; the owner merges; pushes, branch and fork deletions act on the pull requests as Forgejo's do.
 */
describe('fork pull requests: head = forkowner:branch', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let sink: WebhookSink;
  let owner: TestUser;
  let contributor: TestUser;
  let outsider: TestUser;
  const as = (user: TestUser) => withToken(user.token);

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
    });
    base = await t.listen();
    client = new GitClient();
    sink = await new WebhookSink().start();
    [owner, contributor, outsider] = [await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(async () => {
    await sink?.stop();
    client?.dispose();
    await t?.close();
  });

  const url = (user: TestUser, fullName: string) => withCredentials(base, `${fullName}.git`, user.name, user.password);
  const pulls = (fullName: string) => t.api(`/repos/${fullName}/pulls`);
  const poolDir = (name: string) => path.join(t.dataDir, 'repositories', '.pools', `${name}.git`);

  /** The source with `main` (two files), and the contributor's fork of it. */
  async function sourceAndFork(
    options: { private?: boolean; collaborator?: string } = {},
  ): Promise<{ source: Record<string, any>; fork: Record<string, any> }> {
    const source = await makeRepo(t, owner, { private: options.private });
    const work = await client.workingCopy('main', { 'README.md': 'hello\n', 'file.txt': 'one\ntwo\nthree\n' });
    await client.ok(['push', '--quiet', url(owner, source.full_name), 'main:main'], { cwd: work });
    if (options.collaborator) {
      await t.http
        .put(t.api(`/repos/${source.full_name}/collaborators/${options.collaborator}`))
        .set(as(owner))
        .send({ permission: 'read' })
        .expect(204);
    }
    const fork = (
      await t.http
        .post(t.api(`/repos/${source.full_name}/forks`))
        .set(as(contributor))
        .send({})
        .expect(202)
    ).body;
    return {
      source: (
        await t.http
          .get(t.api(`/repos/${source.full_name}`))
          .set(as(owner))
          .expect(200)
      ).body,
      fork,
    };
  }

  /** Clones the fork, commits `files` on a new `branch` and pushes it over HTTP as the contributor; the commit. */
  async function pushBranch(fork: Record<string, any>, branch: string, files: Record<string, string>, message = `change on ${branch}`): Promise<string> {
    const work = path.join(client.home, uniqueName('work'));
    await client.ok(['clone', '--quiet', url(contributor, fork.full_name), work]);
    await client.ok(['checkout', '--quiet', '-B', branch], { cwd: work });
    await client.ok(['fetch', '--quiet', 'origin'], { cwd: work });
    await client.ok(['reset', '--quiet', '--hard', `origin/${branch}`], { cwd: work }).catch(() => undefined);
    for (const [file, content] of Object.entries(files)) fs.writeFileSync(path.join(work, file), content);
    await client.ok(['add', '.'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', message], { cwd: work, env: { GIT_AUTHOR_NAME: contributor.name, GIT_AUTHOR_EMAIL: contributor.user.email } });
    await client.ok(['push', '--quiet', 'origin', `HEAD:refs/heads/${branch}`], { cwd: work });
    return (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
  }

  /** Waits until the pull request's mergeability test has run; its row. */
  async function tested(source: Record<string, any>, index: number): Promise<Record<string, any>> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query('SELECT status, head_commit_id FROM pull_request WHERE base_repo_id = ? AND repo_index = ?', [source.id, index]);
      if (Number(rows[0].status) !== 1) return rows[0];
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the mergeability test never ran');
  }

  async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const value = await read();
      if (done(value)) return value;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`never: ${what}`);
  }

  const sourceDir = (source: Record<string, any>) => repositoryDir(t.dataDir, owner.name, source.name);

  it('a contributor without write access proposes a fork branch; its commits reach the source through the pool; the owner merges', async () => {
    const { source, fork } = await sourceAndFork();
    await t.http
      .post(t.api(`/repos/${source.full_name}/hooks`))
      .set(as(owner))
      .send({ type: 'gitea', active: true, events: ['pull_request'], config: { url: `${sink.url}/fork-pulls/${source.name}`, content_type: 'json' } })
      .expect(201);
    const commit = await pushBranch(fork, 'fix', { 'file.txt': 'one\nTWO\nthree\n' }, 'Fix the second line');

    // The same branch name in the source is not what `contributor:fix` names, and `owner/name:branch` is no user.
    await t.http.post(pulls(source.full_name)).set(as(contributor)).send({ head: 'fix', base: 'main', title: 'x' }).expect(404);
    await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${fork.full_name}:fix`, base: 'main', title: 'x' })
      .expect(404);
    await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${outsider.name}:fix`, base: 'main', title: 'x' })
      .expect(404);
    await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${contributor.name}:nope`, base: 'main', title: 'x' })
      .expect(404);
    // Only who may push the fork proposes its branches.
    const refused = await t.http
      .post(pulls(source.full_name))
      .set(as(outsider))
      .send({ head: `${contributor.name}:fix`, base: 'main', title: 'x' })
      .expect(403);
    expect(refused.body.message).toBe('user should have a permission to push to the head branch');

    const compared = await t.http
      .get(t.api(`/repos/${source.full_name}/compare/main...${contributor.name}:fix`))
      .set(as(outsider))
      .expect(200);
    expect(compared.body.total_commits).toBe(1);
    expect(compared.body.commits[0].sha).toBe(commit);

    const created = await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${contributor.name}:fix`, base: 'main', title: 'Fix the file' })
      .expect(201);
    expect(created.body).toMatchObject({
      number: 1,
      state: 'open',
      head: { label: 'fix', ref: 'fix', sha: commit, repo_id: fork.id, repo: { full_name: fork.full_name, fork: true } },
      base: { label: 'main', ref: 'main', repo_id: source.id, repo: { full_name: source.full_name } },
    });
    const again = await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${contributor.name}:fix`, base: 'main', title: 'again' })
      .expect(409);
    expect(again.body.message).toContain(`head_repo_id: ${fork.id}, base_repo_id: ${source.id}, head_branch: fix, base_branch: main`);

    // The head ref is in the source; the commit is in the pool (fetched from the fork: that branch only), and
    // the source holds no copy of its own.
    const pool = (await t.dataSource.query('SELECT object_pool FROM repository WHERE id = ?', [source.id]))[0].object_pool as string;
    expect(git(sourceDir(source), 'rev-parse', 'refs/pull/1/head').trim()).toBe(commit);
    expect(git(poolDir(pool), 'rev-parse', `refs/members/${fork.id}/heads/fix`).trim()).toBe(commit);
    expect(fs.existsSync(path.join(sourceDir(source), 'objects', commit.slice(0, 2), commit.slice(2)))).toBe(false);

    for (const head of [`${contributor.name}:fix`, `${fork.full_name}:fix`]) {
      const found = await t.http
        .get(t.api(`/repos/${source.full_name}/pulls/main/${head}`))
        .set(as(owner))
        .expect(200);
      expect(found.body.number).toBe(1);
    }
    await t.http
      .get(t.api(`/repos/${source.full_name}/pulls/main/fix`))
      .set(as(owner))
      .expect(404);
    expect(Number((await tested(source, 1)).status)).toBe(2);

    // A push to the fork's branch moves the head ref in the source, re-tests and says `synchronized`.
    const second = await pushBranch(fork, 'fix', { 'extra.txt': 'extra\n' }, 'Add extra');
    await waitFor(
      () => Promise.resolve(git(sourceDir(source), 'rev-parse', 'refs/pull/1/head').trim()),
      (sha) => sha === second,
      'refs/pull/1/head moved',
    );
    expect((await tested(source, 1)).head_commit_id).toBe(second);
    const shown = await t.http
      .get(`${pulls(source.full_name)}/1`)
      .set(as(owner))
      .expect(200);
    expect(shown.body).toMatchObject({ mergeable: true, changed_files: 2, head: { sha: second } });
    const files = await t.http
      .get(`${pulls(source.full_name)}/1/files`)
      .set(as(owner))
      .expect(200);
    expect(files.body.map((file: { filename: string }) => file.filename).sort()).toEqual(['extra.txt', 'file.txt']);
    const received = () => sink.requests.filter((request: SinkRequest) => request.path === `/fork-pulls/${source.name}`);
    await sink.waitFor(() => received().some((request) => request.json.action === 'synchronized'), 'synchronized');
    const synchronizedEvent = received().find((request) => request.json.action === 'synchronized')!.json;
    expect(synchronizedEvent.pull_request.head).toMatchObject({ ref: 'fix', sha: second, repo: { full_name: fork.full_name } });
    expect(synchronizedEvent.sender.login).toBe(contributor.name);

    // Only writers of the source merge; the owner merges, and the commits land in the source.
    await t.http
      .post(`${pulls(source.full_name)}/1/merge`)
      .set(as(contributor))
      .send({ Do: 'merge' })
      .expect(405);
    const mainBefore = git(sourceDir(source), 'rev-parse', 'refs/heads/main').trim();
    await t.http
      .post(`${pulls(source.full_name)}/1/merge`)
      .set(as(owner))
      .send({ Do: 'merge', delete_branch_after_merge: true })
      .expect(200);
    const merged = git(sourceDir(source), 'cat-file', 'commit', 'refs/heads/main');
    expect(merged).toContain(`parent ${mainBefore}\nparent ${second}\n`);
    expect(merged).toContain(`Merge pull request 'Fix the file' (#1) from ${fork.full_name}:fix into main`);
    // The merger may not push to the contributor's fork: its branch stays.
    expect(git(repositoryDir(t.dataDir, contributor.name, fork.name), 'rev-parse', 'refs/heads/fix').trim()).toBe(second);
    const after = await t.http
      .get(`${pulls(source.full_name)}/1`)
      .set(as(owner))
      .expect(200);
    expect(after.body).toMatchObject({ merged: true, state: 'closed', merged_by: { login: owner.name } });

    // Squash, with maintainer edits allowed: the owner may update the head and delete the fork's branch.
    await pushBranch(fork, 'feature', { 'feature.txt': 'feature\n' }, 'Add a feature');
    const squashPull = (
      await t.http
        .post(pulls(source.full_name))
        .set(as(contributor))
        .send({ head: `${contributor.name}:feature`, base: 'main', title: 'Feature' })
        .expect(201)
    ).body;
    await tested(source, squashPull.number);
    await t.http
      .post(`${pulls(source.full_name)}/${squashPull.number}/update`)
      .set(as(owner))
      .expect(403);
    await t.http
      .patch(`${pulls(source.full_name)}/${squashPull.number}`)
      .set(as(owner))
      .send({ allow_maintainer_edit: true })
      .expect(403);
    await t.http
      .patch(`${pulls(source.full_name)}/${squashPull.number}`)
      .set(as(contributor))
      .send({ allow_maintainer_edit: true })
      .expect(201);
    // The base moved on (the first merge): the update merges it into the fork's branch, in the fork.
    await t.http
      .post(`${pulls(source.full_name)}/${squashPull.number}/update`)
      .set(as(owner))
      .expect(200);
    const forkDir = repositoryDir(t.dataDir, contributor.name, fork.name);
    const updated = git(forkDir, 'cat-file', 'commit', 'refs/heads/feature');
    expect(updated).toContain(`Merge branch 'main' into feature`);
    const updatedHead = git(forkDir, 'rev-parse', 'refs/heads/feature').trim();
    await waitFor(
      () => Promise.resolve(git(sourceDir(source), 'rev-parse', `refs/pull/${squashPull.number}/head`).trim()),
      (sha) => sha === updatedHead,
      'head ref after update',
    );
    await tested(source, squashPull.number);
    const mainBeforeSquash = git(sourceDir(source), 'rev-parse', 'refs/heads/main').trim();
    await t.http
      .post(`${pulls(source.full_name)}/${squashPull.number}/merge`)
      .set(as(owner))
      .send({ Do: 'squash', delete_branch_after_merge: true })
      .expect(200);
    const squashed = git(sourceDir(source), 'cat-file', 'commit', 'refs/heads/main');
    expect(squashed).toContain(`parent ${mainBeforeSquash}\n`);
    expect(squashed).not.toContain(`parent ${updatedHead}`);
    expect(squashed).toMatch(new RegExp(`^author ${contributor.name} `, 'm'));
    expect(git(sourceDir(source), 'show', 'refs/heads/main:feature.txt')).toBe('feature\n');
    expect(git(forkDir, 'for-each-ref', 'refs/heads/feature').trim()).toBe('');

    // Rebase: the fork's commits replayed onto the source's main.
    const rebaseCommit = await pushBranch(fork, 'rebased', { 'rebased.txt': 'rebased\n' }, 'Add rebased');
    const rebasePull = (
      await t.http
        .post(pulls(source.full_name))
        .set(as(contributor))
        .send({ head: `${contributor.name}:rebased`, base: 'main', title: 'Rebased' })
        .expect(201)
    ).body;
    await tested(source, rebasePull.number);
    await t.http
      .post(`${pulls(source.full_name)}/${rebasePull.number}/merge`)
      .set(as(owner))
      .send({ Do: 'rebase' })
      .expect(200);
    const rebased = git(sourceDir(source), 'cat-file', 'commit', 'refs/heads/main');
    expect(rebased).toContain('Add rebased');
    expect(git(sourceDir(source), 'rev-parse', 'refs/heads/main').trim()).not.toBe(rebaseCommit);

    // Deleting the fork's branch closes its pull request.
    await pushBranch(fork, 'doomed', { 'doomed.txt': 'doomed\n' });
    const doomed = (
      await t.http
        .post(pulls(source.full_name))
        .set(as(contributor))
        .send({ head: `${contributor.name}:doomed`, base: 'main', title: 'Doomed' })
        .expect(201)
    ).body;
    const deleter = path.join(client.home, uniqueName('deleter'));
    await client.ok(['init', '--quiet', deleter]);
    await client.ok(['push', '--quiet', url(contributor, fork.full_name), ':refs/heads/doomed'], { cwd: deleter });
    await waitFor(
      () =>
        t.http
          .get(`${pulls(source.full_name)}/${doomed.number}`)
          .set(as(owner))
          .then((response) => response.body.state),
      (state) => state === 'closed',
      'closed on branch deletion',
    );

    // Deleting the fork closes its open pull requests; they keep their head ref, and the source stays whole.
    const lastCommit = await pushBranch(fork, 'last', { 'last.txt': 'last\n' });
    const last = (
      await t.http
        .post(pulls(source.full_name))
        .set(as(contributor))
        .send({ head: `${contributor.name}:last`, base: 'main', title: 'Last' })
        .expect(201)
    ).body;
    await t.http
      .delete(t.api(`/repos/${fork.full_name}`))
      .set(as(contributor))
      .expect(204);
    const orphan = await waitFor(
      () =>
        t.http
          .get(`${pulls(source.full_name)}/${last.number}`)
          .set(as(owner))
          .then((response) => response.body),
      (body) => body.state === 'closed',
      'closed on fork deletion',
    );
    expect(orphan.head).toMatchObject({ label: 'last', ref: `refs/pull/${last.number}/head`, sha: lastCommit, repo_id: -1, repo: null });
    git(sourceDir(source), 'fsck', '--full', '--no-dangling');
    const clone = path.join(client.home, uniqueName('clone'));
    await client.ok(['clone', '--quiet', '--mirror', url(owner, source.full_name), clone]);
    await client.ok(['fsck', '--full', '--strict'], { cwd: clone });
    expect((await client.ok(['rev-parse', `refs/pull/${last.number}/head`], { cwd: clone })).trim()).toBe(lastCommit);
    await t.http
      .get(`${pulls(source.full_name)}/1`)
      .set(as(owner))
      .expect(200);
  });

  it('a private source: its readers propose from their private forks; outsiders see nothing of it', async () => {
    const { source, fork } = await sourceAndFork({ private: true, collaborator: contributor.name });
    expect(fork.private).toBe(true);
    const commit = await pushBranch(fork, 'topic', { 'topic.txt': 'topic\n' });
    const created = await t.http
      .post(pulls(source.full_name))
      .set(as(contributor))
      .send({ head: `${contributor.name}:topic`, base: 'main', title: 'Topic' })
      .expect(201);
    expect(created.body.head).toMatchObject({ sha: commit, repo: { full_name: fork.full_name, private: true } });
    await t.http
      .get(`${pulls(source.full_name)}/1`)
      .set(as(outsider))
      .expect(404);
    await t.http.get(`${pulls(source.full_name)}/1`).expect(404);
    await t.http
      .get(t.api(`/repos/${source.full_name}/compare/main...${contributor.name}:topic`))
      .set(as(outsider))
      .expect(404);
    await t.http
      .get(t.api(`/repos/${source.full_name}/pulls/main/${contributor.name}:topic`))
      .set(as(outsider))
      .expect(404);
    await t.http
      .post(pulls(source.full_name))
      .set(as(outsider))
      .send({ head: `${contributor.name}:topic`, base: 'main', title: 'x' })
      .expect(404);
    // The owner reads the private fork's head through the pull request and merges it.
    await tested(source, 1);
    const seen = await t.http
      .get(`${pulls(source.full_name)}/1`)
      .set(as(owner))
      .expect(200);
    expect(seen.body).toMatchObject({ mergeable: true, head: { sha: commit } });
    await t.http
      .post(`${pulls(source.full_name)}/1/merge`)
      .set(as(owner))
      .send({ Do: 'merge' })
      .expect(200);
    expect(git(sourceDir(source), 'show', 'refs/heads/main:topic.txt')).toBe('topic\n');
  });
});
