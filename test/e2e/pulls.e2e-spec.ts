import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRepo, makeToken, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';
import { SinkRequest, WebhookSink } from '../support/webhook-sink';

const PULL_KEYS = [
  'id',
  'url',
  'number',
  'user',
  'title',
  'body',
  'labels',
  'milestone',
  'assignee',
  'assignees',
  'requested_reviewers',
  'requested_reviewers_teams',
  'state',
  'draft',
  'is_locked',
  'comments',
  'review_comments',
  'additions',
  'deletions',
  'changed_files',
  'html_url',
  'diff_url',
  'patch_url',
  'mergeable',
  'merged',
  'merged_at',
  'merge_commit_sha',
  'merged_by',
  'allow_maintainer_edit',
  'base',
  'head',
  'merge_base',
  'due_date',
  'created_at',
  'updated_at',
  'closed_at',
  'pin_order',
];

describe('pull requests: /repos/{o}/{r}/pulls, compare, refs/pull', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let sink: WebhookSink;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
    });
    base = await t.listen();
    client = new GitClient();
    sink = await new WebhookSink().start();
    [owner, writer, reader] = [await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(async () => {
    await sink?.stop();
    client?.dispose();
    await t?.close();
  });

  const pulls = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/pulls`);

  /** A repository with `main` (README) and `feature` (one more commit changing `file.txt`), pushed over HTTP. */
  async function repoWithBranches(user: TestUser, options: { private?: boolean } = {}): Promise<{ repo: Record<string, any>; work: string; remote: string }> {
    const repo = await makeRepo(t, user, { private: options.private });
    const work = await client.workingCopy('main', { 'README.md': 'hello\n', 'file.txt': 'one\ntwo\nthree\n' });
    const remote = withCredentials(base, `${repo.full_name}.git`, user.name, user.password);
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nTWO\nthree\nfour\n');
    await client.ok(['commit', '--quiet', '-am', 'change file'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    await client.ok(['checkout', '--quiet', 'main'], { cwd: work });
    return { repo, work, remote };
  }

  /** Reads the pull request until its mergeability test has run. */
  async function tested(repo: Record<string, any>, index: number, token = owner.token): Promise<Record<string, any>> {
    for (let attempt = 0; attempt < 200; attempt++) {
      const pull = (
        await t.http
          .get(`${pulls(repo)}/${index}`)
          .set(withToken(token))
          .expect(200)
      ).body;
      if (pull.merge_base !== '' && (pull.mergeable || pull.state === 'closed' || (await conflictsKnown(repo, index)))) return pull;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('the mergeability test never ran');
  }

  async function conflictsKnown(repo: Record<string, any>, index: number): Promise<boolean> {
    const rows = await t.dataSource.query('SELECT status FROM pull_request WHERE base_repo_id = ? AND repo_index = ?', [repo.id, index]);
    return rows.length > 0 && Number(rows[0].status) !== 1;
  }

  it('opens a pull request as Forgejo answers it, shares numbers with issues and shows it in both lists', async () => {
    const { repo, work } = await repoWithBranches(owner);
    expect(repo).toMatchObject({
      has_pull_requests: true,
      open_pr_counter: 0,
      allow_merge_commits: true,
      allow_rebase: true,
      allow_squash_merge: true,
      default_merge_style: 'merge',
    });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/issues`))
      .set(withToken(owner.token))
      .send({ title: 'an issue first' })
      .expect(201);
    const created = await t.http
      .post(pulls(repo))
      .set(withToken(owner.token))
      .send({ head: 'feature', base: 'main', title: 'Change the file', body: 'Please' })
      .expect(201);
    expect(Object.keys(created.body)).toEqual(PULL_KEYS);
    const featureSha = (await client.ok(['rev-parse', 'feature'], { cwd: work })).trim();
    const mainSha = (await client.ok(['rev-parse', 'main'], { cwd: work })).trim();
    expect(created.body).toMatchObject({
      number: 2,
      title: 'Change the file',
      body: 'Please',
      state: 'open',
      draft: false,
      merged: false,
      merged_at: null,
      merge_commit_sha: null,
      merged_by: null,
      mergeable: true,
      merge_base: mainSha,
      additions: 2,
      deletions: 1,
      changed_files: 1,
      url: `http://anvil.test/${repo.full_name}/pulls/2`,
      html_url: `http://anvil.test/${repo.full_name}/pulls/2`,
      diff_url: `http://anvil.test/${repo.full_name}/pulls/2.diff`,
      patch_url: `http://anvil.test/${repo.full_name}/pulls/2.patch`,
      base: { label: 'main', ref: 'main', sha: mainSha, repo_id: repo.id },
      head: { label: 'feature', ref: 'feature', sha: featureSha, repo_id: repo.id },
    });
    expect(created.body.base.repo.full_name).toBe(repo.full_name);
    expect(created.body.user.login).toBe(owner.name);

    const got = await t.http.get(`${pulls(repo)}/2`).expect(200);
    expect(got.body).toMatchObject({ number: 2, mergeable: true, head: { sha: featureSha } });
    await t.http.get(`${pulls(repo)}/1`).expect(404);
    await t.http.get(`${pulls(repo)}/99`).expect(404);
    expect((await t.http.get(`${pulls(repo)}/pinned`).expect(200)).body).toEqual([]);

    const list = await t.http.get(pulls(repo)).expect(200);
    expect(list.headers['x-total-count']).toBe('1');
    expect(list.body.map((pull: any) => pull.number)).toEqual([2]);

    const issue = await t.http.get(t.api(`/repos/${repo.full_name}/issues/2`)).expect(200);
    expect(issue.body.pull_request).toEqual({ merged: false, merged_at: null, draft: false, html_url: `http://anvil.test/${repo.full_name}/pulls/2` });
    expect(issue.body.html_url).toBe(`http://anvil.test/${repo.full_name}/pulls/2`);
    const onlyPulls = await t.http.get(t.api(`/repos/${repo.full_name}/issues?type=pulls`)).expect(200);
    expect(onlyPulls.body.map((item: any) => item.number)).toEqual([2]);
    const onlyIssues = await t.http.get(t.api(`/repos/${repo.full_name}/issues?type=issues`)).expect(200);
    expect(onlyIssues.body.map((item: any) => item.number)).toEqual([1]);
    const both = await t.http.get(t.api(`/repos/${repo.full_name}/issues`)).expect(200);
    expect(both.body.map((item: any) => item.number)).toEqual([2, 1]);

    const after = await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200);
    expect(after.body).toMatchObject({ open_pr_counter: 1, open_issues_count: 1 });

    const byBranches = await t.http.get(`${pulls(repo)}/main/feature`).expect(200);
    expect(byBranches.body.number).toBe(2);
    await t.http.get(`${pulls(repo)}/main/${owner.name}:feature`).expect(200);
    await t.http.get(`${pulls(repo)}/main/nope`).expect(404);

    // The head ref is fetchable.
    const fetched = await client.ok(['ls-remote', withCredentials(base, `${repo.full_name}.git`), 'refs/pull/2/head']);
    expect(fetched.split('\t')[0]).toBe(featureSha);
  });

  it('refuses a second open pull request of the same branches (409), head = base (422) and unknown branches (404)', async () => {
    const { repo } = await repoWithBranches(owner);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'one' }).expect(201);
    const again = await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'two' }).expect(409);
    expect(again.body.message).toMatch(
      /^pull request already exists for these targets \[id: \d+, issue_id: 1, head_repo_id: \d+, base_repo_id: \d+, head_branch: feature, base_branch: main\]$/,
    );
    const same = await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'main', base: 'main', title: 'x' }).expect(422);
    expect(same.body.message).toBe('Invalid PullRequest: There are no changes between the head and the base');
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'nope', base: 'main', title: 'x' }).expect(404);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'nope', title: 'x' }).expect(404);
    await t.http.post(pulls(repo)).send({ head: 'feature', base: 'main', title: 'x' }).expect(401);
    // A reader cannot push the head branch.
    await t.http.post(pulls(repo)).set(withToken(reader.token)).send({ head: 'feature', base: 'main', title: 'x' }).expect(403);
  });

  it('marks drafts, finds conflicts with their paths, and lists files, commits, diff and patch', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nDOS\nthree\n');
    await client.ok(['commit', '--quiet', '-am', 'conflicting change'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    const created = await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: '[wip] conflicting' }).expect(201);
    expect(created.body).toMatchObject({ draft: true, mergeable: false });
    const rows = await t.dataSource.query('SELECT status, conflicted_files FROM pull_request WHERE base_repo_id = ?', [repo.id]);
    expect(Number(rows[0].status)).toBe(0);
    expect(JSON.parse(rows[0].conflicted_files)).toEqual(['file.txt']);

    const files = await t.http.get(`${pulls(repo)}/1/files`).expect(200);
    expect(files.headers['x-total-count']).toBe('1');
    expect(files.body[0]).toMatchObject({ filename: 'file.txt', status: 'changed', additions: 2, deletions: 1, changes: 3 });
    const commits = await t.http.get(`${pulls(repo)}/1/commits`).expect(200);
    expect(commits.body.map((commit: any) => commit.commit.message.trim())).toEqual(['change file']);
    const diff = await t.http.get(`${pulls(repo)}/1.diff`).expect(200);
    expect(diff.text).toContain('diff --git a/file.txt b/file.txt');
    expect(diff.text).toContain('+TWO');
    const patch = await t.http.get(`${pulls(repo)}/1.patch`).expect(200);
    expect(patch.text).toContain('Subject: [PATCH] change file');
    await t.http.get(`${pulls(repo)}/1.zip`).expect(404);

    const compare = await t.http.get(t.api(`/repos/${repo.full_name}/compare/main...feature`)).expect(200);
    expect(compare.body.total_commits).toBe(1);
    expect(compare.body.commits[0].commit.message.trim()).toBe('change file');
  });

  it('edits title, body, state and base (PATCH 201); readers may not edit others’ pull requests', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await client.ok(['push', '--quiet', remote, 'main:other'], { cwd: work });
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'first' }).expect(201);
    const edited = await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ title: 'WIP: renamed', body: 'new body', base: 'other' })
      .expect(201);
    expect(edited.body).toMatchObject({ title: 'WIP: renamed', body: 'new body', draft: true, base: { ref: 'other' } });
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ base: 'missing' })
      .expect(404);
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(reader.token))
      .send({ title: 'mine' })
      .expect(403);
    // As Forgejo: sign-in at the door (401), then the body (422) and the pull request (404) before the
    // poster-or-writer rule (403).
    await t.http
      .patch(`${pulls(repo)}/1`)
      .send({ title: 'mine' })
      .expect(401);
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(reader.token))
      .send({ title: 5 })
      .expect(422);
    await t.http
      .patch(`${pulls(repo)}/99`)
      .set(withToken(reader.token))
      .send({ title: 'mine' })
      .expect(404);
    const closed = await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    expect(closed.body.state).toBe('closed');
    expect(closed.body.closed_at).not.toBeNull();
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_pr_counter).toBe(0);
    expect((await t.http.get(`${pulls(repo)}?state=closed`).expect(200)).body.map((pull: any) => pull.number)).toEqual([1]);
    expect((await t.http.get(pulls(repo)).expect(200)).body).toEqual([]);
    const reopened = await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'open' })
      .expect(201);
    expect(reopened.body.state).toBe('open');
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_pr_counter).toBe(1);
    void writer;
  });

  it('turns the routes off with has_pull_requests=false and keeps the merge settings settable', async () => {
    const { repo } = await repoWithBranches(owner);
    const edit = (body: object) =>
      t.http
        .patch(t.api(`/repos/${repo.full_name}`))
        .set(withToken(owner.token))
        .send(body);
    const settings = await edit({ allow_rebase: false, default_merge_style: 'squash', default_delete_branch_after_merge: true }).expect(200);
    expect(settings.body).toMatchObject({
      allow_rebase: false,
      default_merge_style: 'squash',
      default_delete_branch_after_merge: true,
      allow_merge_commits: true,
    });
    await edit({ default_merge_style: 'octopus' }).expect(422);
    const off = await edit({ has_pull_requests: false }).expect(200);
    expect(off.body).toMatchObject({ has_pull_requests: false, allow_merge_commits: false, allow_rebase: false, default_merge_style: 'merge' });
    await t.http.get(pulls(repo)).expect(404);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'x' }).expect(404);
    const on = await edit({ has_pull_requests: true }).expect(200);
    expect(on.body).toMatchObject({ has_pull_requests: true, default_merge_style: 'squash', allow_rebase: false });
    await t.http.get(pulls(repo)).expect(200);
  });

  it('hides pull requests of a private repository from strangers (404)', async () => {
    const { repo } = await repoWithBranches(owner, { private: true });
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'secret' }).expect(201);
    await t.http.get(pulls(repo)).expect(404);
    await t.http
      .get(`${pulls(repo)}/1`)
      .set(withToken(reader.token))
      .expect(404);
    expect((await tested(repo, 1)).number).toBe(1);
  });

  it('follows pushes: refs/pull/{n}/head moves, the test runs again, a deleted head branch closes it; refs/pull is not pushable', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'follow me' }).expect(201);
    await client.ok(['checkout', '--quiet', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'more.txt'), 'more\n');
    await client.ok(['add', 'more.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'more'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    const newHead = (await client.ok(['rev-parse', 'feature'], { cwd: work })).trim();
    const fetched = await client.ok(['ls-remote', remote, 'refs/pull/1/head']);
    expect(fetched.split('\t')[0]).toBe(newHead);
    let pull = await tested(repo, 1);
    for (let attempt = 0; attempt < 200 && pull.changed_files !== 2; attempt++) pull = await tested(repo, 1);
    expect(pull).toMatchObject({ head: { sha: newHead }, changed_files: 2, mergeable: true });

    const refused = await client.run(['push', remote, `${newHead}:refs/pull/1/head`], { cwd: work });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('refs/pull/ is reserved for pull requests');

    await client.ok(['push', '--quiet', remote, ':feature'], { cwd: work });
    const closed = (await t.http.get(`${pulls(repo)}/1`).expect(200)).body;
    expect(closed).toMatchObject({ state: 'closed', head: { ref: 'refs/pull/1/head', sha: newHead } });
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_pr_counter).toBe(0);
  });

  it('closes the pull requests of a deleted base branch, and only those', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await client.ok(['push', '--quiet', remote, 'main:release'], { cwd: work });
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'release', title: 'into release' }).expect(201);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'into main' }).expect(201);

    await client.ok(['push', '--quiet', remote, ':release'], { cwd: work });
    const states = async () => [(await t.http.get(`${pulls(repo)}/1`).expect(200)).body.state, (await t.http.get(`${pulls(repo)}/2`).expect(200)).body.state];
    expect(await states()).toEqual(['closed', 'open']);
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_pr_counter).toBe(1);
  });

  it('sends pull_request events (opened, edited, synchronized, closed, reopened) with Forgejo’s payload', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/hooks`))
      .set(withToken(owner.token))
      .send({ type: 'gitea', active: true, events: ['pull_request'], config: { url: `${sink.url}/pulls/${repo.name}`, content_type: 'json' } })
      .expect(201);
    const created = (await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'hooked' }).expect(201)).body;
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ title: 'hooked, renamed' })
      .expect(201);
    await client.ok(['checkout', '--quiet', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'more.txt'), 'more\n');
    await client.ok(['add', 'more.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'more'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'open' })
      .expect(201);
    const received = () => [
      ...new Map(
        sink.requests.filter((request: SinkRequest) => request.path === `/pulls/${repo.name}`).map((request) => [request.headers['x-gitea-delivery'], request]),
      ).values(),
    ];
    await sink.waitFor(() => received().length >= 5, 'pull request events');
    expect(
      received()
        .map((request) => `${request.headers['x-gitea-event']}:${request.json.action}`)
        .sort(),
    ).toEqual(['pull_request:opened', 'pull_request:edited', 'pull_request:synchronized', 'pull_request:closed', 'pull_request:reopened'].sort());
    const opened = received().find((request) => request.json.action === 'opened')!.json;
    expect(Object.keys(opened)).toEqual(['action', 'number', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review']);
    expect(opened).toMatchObject({
      number: 1,
      pull_request: { id: created.id, number: 1, title: 'hooked', head: { ref: 'feature' }, base: { ref: 'main' } },
      repository: { full_name: repo.full_name },
      sender: { login: owner.name },
    });
    expect(received().find((request) => request.json.action === 'edited')!.json.changes).toEqual({ title: { from: 'hooked' } });
    expect(received().find((request) => request.json.action === 'closed')!.json.pull_request.state).toBe('closed');
  });

  it('shows the branch tips of the moment in the list and the pull request, right after pushes move them', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'tips' }).expect(201);
    const tips = async () => ({
      main: (await client.ok(['rev-parse', 'main'], { cwd: work })).trim(),
      feature: (await client.ok(['rev-parse', 'feature'], { cwd: work })).trim(),
    });
    const shown = async () => {
      const [listed] = (await t.http.get(`${pulls(repo)}?state=open`).expect(200)).body;
      const one = (await t.http.get(`${pulls(repo)}/1`).expect(200)).body;
      return [listed, one].map((pull) => ({ main: pull.base.sha, feature: pull.head.sha, ref: pull.head.ref }));
    };
    const before = await tips();
    expect(await shown()).toEqual([
      { ...before, ref: 'feature' },
      { ...before, ref: 'feature' },
    ]);
    // Both branches move (the head twice, one push packed between), read again at once: no tip from before.
    await client.ok(['checkout', '--quiet', 'feature'], { cwd: work });
    for (const n of [1, 2]) {
      fs.writeFileSync(path.join(work, `tip-${n}.txt`), `${n}\n`);
      await client.ok(['add', '.'], { cwd: work });
      await client.ok(['commit', '--quiet', '-m', `tip ${n}`], { cwd: work });
      await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
      const now = await tips();
      expect(await shown()).toEqual([
        { ...now, ref: 'feature' },
        { ...now, ref: 'feature' },
      ]);
    }
    await client.ok(['checkout', '--quiet', 'main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'README.md'), 'moved\n');
    await client.ok(['commit', '--quiet', '-am', 'base moves'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    const after = await tips();
    expect(after.main).not.toBe(before.main);
    expect(await shown()).toEqual([
      { ...after, ref: 'feature' },
      { ...after, ref: 'feature' },
    ]);
  });

  it('tests again after a push to the base, and finds the conflict it brought', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    expect(
      (await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'soon in conflict' }).expect(201)).body
        .mergeable,
    ).toBe(true);
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nZWEI\nthree\n');
    await client.ok(['commit', '--quiet', '-am', 'base moves'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    let rows: { status: number; conflicted_files: string }[] = [];
    for (let attempt = 0; attempt < 400; attempt++) {
      rows = await t.dataSource.query('SELECT status, conflicted_files FROM pull_request WHERE base_repo_id = ?', [repo.id]);
      if (Number(rows[0].status) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(Number(rows[0].status)).toBe(0);
    expect(JSON.parse(rows[0].conflicted_files)).toEqual(['file.txt']);
    const pull = (await t.http.get(`${pulls(repo)}/1`).expect(200)).body;
    expect(pull.mergeable).toBe(false);
    expect(pull.base.sha).toBe((await client.ok(['rev-parse', 'main'], { cwd: work })).trim());
  });

  it('asks for a test of the open pull requests of a base before the push is answered, never of closed ones', async () => {
    const { repo, work, remote } = await repoWithBranches(owner);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'closed one' }).expect(201);
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'open one' }).expect(201);
    const versions = async () =>
      Object.fromEntries(
        (
          (await t.dataSource.query(
            'SELECT i.is_closed AS closed, p.check_version AS version FROM pull_request p JOIN issue i ON i.id = p.issue_id WHERE p.base_repo_id = ?',
            [repo.id],
          )) as { closed: number | string; version: number | string }[]
        ).map((row) => [Number(row.closed) ? 'closed' : 'open', Number(row.version)]),
      );
    const before = await versions();
    fs.writeFileSync(path.join(work, 'other.txt'), 'base moves\n');
    await client.ok(['add', 'other.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'base moves'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    const after = await versions();
    expect(after.open).toBeGreaterThan(before.open);
    expect(after.closed).toBe(before.closed);
  });

  it('asks the access policy: token scopes, archived repositories (423), labels and assignees for writers', async () => {
    const { repo } = await repoWithBranches(owner);
    const readOnly = await makeToken(t, owner.user, ['read:repository']);
    expect((await t.http.post(pulls(repo)).set(withToken(readOnly)).send({ head: 'feature', base: 'main', title: 'x' }).expect(403)).body.message).toContain(
      'write:repository',
    );
    await t.http.get(pulls(repo)).set(withToken(readOnly)).expect(200);
    const issueOnly = await makeToken(t, owner.user, ['read:issue']);
    await t.http.get(pulls(repo)).set(withToken(issueOnly)).expect(403);

    const label = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'deps', color: '00aabb' })
        .expect(201)
    ).body;
    const created = await t.http
      .post(pulls(repo))
      .set(withToken(owner.token))
      .send({ head: 'feature', base: 'main', title: 'labelled', labels: [label.id], assignees: [owner.name] })
      .expect(201);
    expect(created.body.labels.map((item: any) => item.name)).toEqual(['deps']);
    expect(created.body.assignees.map((item: any) => item.login)).toEqual([owner.name]);
    expect((await t.http.get(`${pulls(repo)}?labels=${label.id}`).expect(200)).body.map((pull: any) => pull.number)).toEqual([1]);
    expect((await t.http.get(`${pulls(repo)}?poster=${owner.name}`).expect(200)).body).toHaveLength(1);
    await t.http.get(`${pulls(repo)}?poster=nobody-at-all`).expect(400);
    // The Go SDK's edit sends every field: an empty `assignee`, null `assignees` and `labels` and milestone 0 change
    // nothing (Forgejo reads a pull request's `assignee` as a plain string, empty when not given).
    const goEdit = {
      title: '',
      body: null,
      base: '',
      assignee: '',
      assignees: null,
      milestone: 0,
      labels: null,
      state: 'open',
      due_date: null,
      unset_due_date: null,
      allow_maintainer_edit: null,
    };
    const untouched = await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send(goEdit)
      .expect(201);
    expect(untouched.body).toMatchObject({ title: 'labelled', base: { ref: 'main' }, state: 'open' });
    expect(untouched.body.labels.map((item: any) => item.name)).toEqual(['deps']);
    expect(untouched.body.assignees.map((item: any) => item.login)).toEqual([owner.name]);
    // An empty list still clears.
    expect(
      (
        await t.http
          .patch(`${pulls(repo)}/1`)
          .set(withToken(owner.token))
          .send({ ...goEdit, assignees: [] })
          .expect(201)
      ).body.assignees,
    ).toBeNull();
    const cleared = await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ labels: [] })
      .expect(201);
    expect(cleared.body.labels).toEqual([]);

    // The merged pull request of a commit.
    await t.http.get(t.api(`/repos/${repo.full_name}/commits/${created.body.head.sha}/pull`)).expect(404);
    await t.dataSource.query('UPDATE pull_request SET has_merged = 1, merged_commit_id = ?, merger_id = ?, merged_unix = 1700000000 WHERE base_repo_id = ?', [
      created.body.head.sha,
      owner.user.id,
      repo.id,
    ]);
    const merged = await t.http.get(t.api(`/repos/${repo.full_name}/commits/${created.body.head.sha}/pull`)).expect(200);
    expect(merged.body).toMatchObject({
      number: 1,
      merged: true,
      merge_commit_sha: created.body.head.sha,
      merged_at: '2023-11-14T22:13:20Z',
      merged_by: { login: owner.name },
    });
    expect(
      (
        await t.http
          .patch(`${pulls(repo)}/1`)
          .set(withToken(owner.token))
          .send({ state: 'closed' })
          .expect(412)
      ).body.message,
    ).toBe('cannot change state of this pull request, it was already merged');

    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ archived: true })
      .expect(200);
    await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head: 'feature', base: 'main', title: 'archived' }).expect(423);
    await t.http.get(pulls(repo)).expect(200);
  });
});
