import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeUser, TestUser, withToken } from '../../support/factories';
import { git, repositoryDir } from '../../support/git';
import { ensureRenovate, runRenovate, RenovateRun } from '../../support/renovate';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * The real Renovate 39 (from the npm registry, installed into a cache outside the project's dependencies on first
 * use: test/support/renovate.ts) with its Gitea platform against this started server, on a repository whose
 * package.json pins an old lodash. Renovate looks lodash up in the npm registry.
 *
 * Run 1 opens "Update dependency lodash to v4.x.y" on `renovate/lodash-4.x` with the label it is configured with,
 * and the "Dependency Dashboard" issue. A commit lands on main; run 2 rebases the branch onto it and keeps the one
 * pull request. The pull request then merges through the API, and run 3 finds nothing left to do. On a second
 * repository, with `automerge` and `platformAutomerge`, Renovate schedules the merge (merge_when_checks_succeed)
 * and it lands when a CI reports the head's build as passed. On a third, Renovate onboards first ("Configure
 * Renovate"), and once that is merged opens the update with the assignee and reviewer it is configured with; a
 * person closes it, and the next run says it will ignore that version.
 *
 * SQLite only (jest.config.js leaves it out of the MariaDB run): what it adds over the replays is Renovate's own
 * sequence of calls, which does not depend on the database, and round 1 of CI has room for it on SQLite only.
 */
describe('client journey: the real Renovate 39 (Gitea platform)', () => {
  let t: TestApp;
  let bot: TestUser;
  let base: string;
  let renovate: string;
  let workDir: string;

  const api = (url: string, repo = 'webapp') => t.api(`/repos/${bot.name}/${repo}${url}`);
  const get = async (url: string, repo = 'webapp') => (await t.http.get(api(url, repo)).set(withToken(bot.token)).expect(200)).body;
  const gitDir = (repo = 'webapp') => repositoryDir(t.dataDir, bot.name, repo);
  /**
   * Waits until none of the repository's pull requests waits for its mergeability test (status 1): a push only
   * asks for the test, which runs in the background, so Renovate's run can end before it does.
   */
  const mergeabilityTested = async (repo = 'webapp') => {
    const { id } = await get('', repo);
    for (let attempt = 0; attempt < 1200; attempt++) {
      const [row] = await t.dataSource.query('SELECT COUNT(*) AS waiting FROM pull_request WHERE base_repo_id = ? AND status = 1', [id]);
      if (Number(row.waiting) === 0) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('the mergeability tests never ran');
  };
  const renovateOn = (repo: string, env: Record<string, string> = {}) =>
    runRenovate({
      dir: renovate,
      workDir,
      endpoint: `${base}api/v1`,
      token: bot.token,
      repository: `${bot.name}/${repo}`,
      env: {
        RENOVATE_DEPENDENCY_DASHBOARD: 'true',
        RENOVATE_LABELS: JSON.stringify(['dependencies']),
        RENOVATE_REBASE_WHEN: 'behind-base-branch',
        // No hourly or concurrent limit in the way of the one pull request.
        RENOVATE_PR_HOURLY_LIMIT: '0',
        RENOVATE_PR_CONCURRENT_LIMIT: '0',
        ...env,
      },
    });
  // A minimum release age makes Renovate report it on the branch as a commit status (lodash's releases are old).
  const renovateOnce = () => renovateOn('webapp', { RENOVATE_MINIMUM_RELEASE_AGE: '3 days' });
  /** A repository whose package.json pins lodash 4.17.0, with the label Renovate is configured to set. */
  const makeProject = async (repo: string) => {
    await t.http.post(t.api('/user/repos')).set(withToken(bot.token)).send({ name: repo, auto_init: true }).expect(201);
    const packageJson = { name: repo, version: '1.0.0', private: true, dependencies: { lodash: '4.17.0' } };
    await t.http
      .post(api('/contents/package.json', repo))
      .set(withToken(bot.token))
      .send({ content: Buffer.from(`${JSON.stringify(packageJson, null, 2)}\n`).toString('base64'), message: 'Add package.json', branch: 'main' })
      .expect(201);
    await t.http.post(api('/labels', repo)).set(withToken(bot.token)).send({ name: 'dependencies', color: '#0366d6' }).expect(201);
  };

  beforeAll(async () => {
    renovate = await ensureRenovate();
    t = await startTestApp();
    base = await t.listen();
    bot = await makeUser(t, { name: 'renovate-bot' });
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-renovate-run-'));
    await makeProject('webapp');
  }, 600_000);

  afterAll(async () => {
    await t?.close();
    // ANVIL_RENOVATE_KEEP=1 keeps Renovate's debug logs (renovate-N.log) and clones for reading.
    if (workDir && process.env.ANVIL_RENOVATE_KEEP !== '1') fs.rmSync(workDir, { recursive: true, force: true });
  });

  /** The update's version, read from the title: "Update dependency lodash to v4.18.1" → "4.18.1". */
  let version: string;
  let firstHead: string;

  const branchSha = (branch: string, repo = 'webapp') => git(gitDir(repo), 'rev-parse', `refs/heads/${branch}`).trim();
  /** The runs warn only about what a self-hosted Renovate without github.com credentials always warns about. */
  const expectNoTrouble = (result: RenovateRun) => {
    const expected = [/^RE2 not usable/, /^No github\.com token has been configured/];
    expect({ code: result.code, warnings: result.warnings.filter((warning) => !expected.some((pattern) => pattern.test(warning))) }).toEqual({
      code: 0,
      warnings: [],
    });
  };

  it('run 1 opens the lodash update with its label and the dependency dashboard', async () => {
    const result = await renovateOnce();
    expectNoTrouble(result);
    // The platform's version gate: Renovate read /version as Forgejo 10.
    expect(result.log).toContain('Forgejo version: 10.');

    const pulls = await get('/pulls?state=all');
    expect(pulls).toHaveLength(1);
    const pull = pulls[0];
    expect(pull).toMatchObject({
      number: expect.any(Number),
      title: expect.stringMatching(/^Update dependency lodash to v4\.\d+\.\d+$/),
      state: 'open',
      draft: false,
      mergeable: true,
      user: { login: bot.name },
      head: { ref: 'renovate/lodash-4.x' },
      base: { ref: 'main' },
      changed_files: 1,
    });
    expect(pull.labels.map((label: { name: string }) => label.name)).toEqual(['dependencies']);
    version = /v(\d+\.\d+\.\d+)$/.exec(pull.title)![1];
    expect(version).not.toBe('4.17.0');
    // The branch changes lodash's version in package.json, and nothing else, in one commit by Renovate's author.
    const files = (await get(`/pulls/${pull.number}/files`)).map((file: { filename: string }) => file.filename);
    expect(files).toEqual(['package.json']);
    const onBranch = JSON.parse(git(gitDir(), 'show', 'refs/heads/renovate/lodash-4.x:package.json'));
    expect(onBranch.dependencies).toEqual({ lodash: version });
    expect(git(gitDir(), 'log', '-1', '--format=%an <%ae>|%s', 'refs/heads/renovate/lodash-4.x').trim()).toBe(
      `Renovate Bot <renovate@example.com>|${pull.title}`,
    );
    firstHead = branchSha('renovate/lodash-4.x');
    // Renovate's own check on the branch, set through the statuses API and read back through the combined status.
    const combined = await get(`/commits/${firstHead}/status`);
    expect(combined).toMatchObject({ state: 'success', sha: firstHead, total_count: 1 });
    expect(combined.statuses).toEqual([
      expect.objectContaining({ context: 'renovate/stability-days', status: 'success', creator: expect.objectContaining({ login: bot.name }) }),
    ]);
    expect(pull.head.sha).toBe(firstHead);
    expect(git(gitDir(), 'rev-parse', `refs/pull/${pull.number}/head`).trim()).toBe(firstHead);
    expect(git(gitDir(), 'rev-parse', `${firstHead}^`).trim()).toBe(branchSha('main'));

    // The dashboard: one open issue of Renovate's, listing the open update.
    const issues = await get('/issues?state=all&type=issues');
    expect(issues.map((issue: { title: string; state: string }) => [issue.title, issue.state])).toEqual([['Dependency Dashboard', 'open']]);
    expect(issues[0].body).toContain('renovate/lodash-4.x');
    expect(issues[0].user.login).toBe(bot.name);
  }, 600_000);

  it('run 2, after a commit on main, rebases the branch onto it and keeps the one pull request', async () => {
    const readme = await get('/contents/README.md?ref=main');
    await t.http
      .put(api('/contents/README.md'))
      .set(withToken(bot.token))
      .send({
        content: Buffer.from('# webapp\n\nNow with a changelog.\n').toString('base64'),
        message: 'Describe the project',
        branch: 'main',
        sha: readme.sha,
      })
      .expect(200);
    const main = branchSha('main');
    expect(git(gitDir(), 'merge-base', main, firstHead).trim()).not.toBe(main);

    const result = await renovateOnce();
    expectNoTrouble(result);
    const rebased = branchSha('renovate/lodash-4.x');
    expect(rebased).not.toBe(firstHead);
    // The one Renovate commit, now on top of main's new commit.
    expect(git(gitDir(), 'rev-parse', `${rebased}^`).trim()).toBe(main);
    expect(git(gitDir(), 'log', '-1', '--format=%s', rebased).trim()).toBe(`Update dependency lodash to v${version}`);

    await mergeabilityTested();
    const pulls = await get('/pulls?state=all');
    expect(pulls.map((pull: { title: string; state: string }) => [pull.title, pull.state])).toEqual([[`Update dependency lodash to v${version}`, 'open']]);
    expect(pulls[0]).toMatchObject({ head: { sha: rebased }, mergeable: true });
    expect(git(gitDir(), 'rev-parse', `refs/pull/${pulls[0].number}/head`).trim()).toBe(rebased);
    expect((await get('/issues?state=all&type=issues')).map((issue: { title: string }) => issue.title)).toEqual(['Dependency Dashboard']);
  }, 600_000);

  it('the pull request merges through the API; run 3 then proposes nothing new', async () => {
    await mergeabilityTested();
    const [pull] = await get('/pulls?state=open');
    await t.http
      .post(api(`/pulls/${pull.number}/merge`))
      .set(withToken(bot.token))
      .send({ Do: 'merge', head_commit_id: pull.head.sha, delete_branch_after_merge: true })
      .expect(200);
    const merged = await get(`/pulls/${pull.number}`);
    expect(merged).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: branchSha('main') });
    expect(JSON.parse(git(gitDir(), 'show', 'main:package.json')).dependencies).toEqual({ lodash: version });
    expect(git(gitDir(), 'branch', '--list', 'renovate/*').trim()).toBe('');

    const result = await renovateOnce();
    expectNoTrouble(result);
    expect((await get('/pulls?state=all')).map((p: { number: number; state: string }) => [p.number, p.state])).toEqual([[pull.number, 'closed']]);
    expect(git(gitDir(), 'branch', '--list', 'renovate/*').trim()).toBe('');
    const [dashboard] = await get('/issues?state=all&type=issues');
    expect(dashboard).toMatchObject({ title: 'Dependency Dashboard', state: 'open' });
    expect(dashboard.body).not.toContain('renovate/lodash-4.x');
  }, 600_000);

  it('with automerge, Renovate schedules the merge on the platform and it lands when the head’s check passes', async () => {
    await makeProject('service');
    const result = await renovateOn('service', { RENOVATE_AUTOMERGE: 'true', RENOVATE_PLATFORM_AUTOMERGE: 'true' });
    expectNoTrouble(result);
    // Forgejo 10 or later: Renovate asks for the merge with merge_when_checks_succeed when it opens the pull request.
    expect(result.log).toContain('Gitea-native automerge: success');
    const [pull] = await get('/pulls?state=all', 'service');
    expect(pull).toMatchObject({ title: expect.stringMatching(/^Update dependency lodash to v4\.\d+\.\d+$/), state: 'open', merged: false });
    const proposed = /v(\d+\.\d+\.\d+)$/.exec(pull.title)![1];
    // Scheduled, not merged: the head has no status yet.
    await t.http
      .get(api(`/pulls/${pull.number}/merge`, 'service'))
      .set(withToken(bot.token))
      .expect(404);

    // A CI reports the head's build as passed: the scheduled merge runs, and deletes the branch as Renovate asked.
    await t.http
      .post(api(`/statuses/${pull.head.sha}`, 'service'))
      .set(withToken(bot.token))
      .send({ state: 'success', context: 'ci/build', description: 'passed' })
      .expect(201);
    expect(await get(`/pulls/${pull.number}`, 'service')).toMatchObject({ state: 'closed', merged: true, merged_by: { login: bot.name } });
    expect(JSON.parse(git(gitDir('service'), 'show', 'main:package.json')).dependencies).toEqual({ lodash: proposed });
    expect(git(gitDir('service'), 'branch', '--list', 'renovate/*').trim()).toBe('');

    // The next run finds the update done.
    expectNoTrouble(await renovateOn('service', { RENOVATE_AUTOMERGE: 'true', RENOVATE_PLATFORM_AUTOMERGE: 'true' }));
    expect((await get('/pulls?state=all', 'service')).map((p: { number: number; state: string }) => [p.number, p.state])).toEqual([[pull.number, 'closed']]);
  }, 600_000);

  it('onboarding first; then the update with its assignee and reviewer; closed by a person, it is ignored', async () => {
    await makeProject('tools');
    const developer = await makeUser(t, { name: 'developer' });
    await t.http.put(api('/collaborators/developer', 'tools')).set(withToken(bot.token)).send({ permission: 'write' }).expect(204);
    const settings = {
      RENOVATE_ONBOARDING: 'true',
      RENOVATE_REQUIRE_CONFIG: 'required',
      RENOVATE_ASSIGNEES: JSON.stringify([developer.name]),
      RENOVATE_REVIEWERS: JSON.stringify([developer.name]),
    };

    expectNoTrouble(await renovateOn('tools', settings));
    const [onboarding] = await get('/pulls?state=all', 'tools');
    expect(onboarding).toMatchObject({ title: 'Configure Renovate', state: 'open', head: { ref: 'renovate/configure' }, base: { ref: 'main' } });
    expect(onboarding.body).toContain('Welcome to [Renovate]');
    expect(JSON.parse(git(gitDir('tools'), 'show', 'refs/heads/renovate/configure:renovate.json'))).toHaveProperty('$schema');
    // Nothing but the onboarding pull request before the configuration is in.
    expect((await get('/pulls?state=all', 'tools')).map((pull: { number: number }) => pull.number)).toEqual([onboarding.number]);
    await t.http
      .post(api(`/pulls/${onboarding.number}/merge`, 'tools'))
      .set(withToken(bot.token))
      .send({ Do: 'merge', delete_branch_after_merge: true })
      .expect(200);

    expectNoTrouble(await renovateOn('tools', settings));
    const update = (await get('/pulls?state=open', 'tools'))[0];
    expect(update).toMatchObject({ title: expect.stringMatching(/^Update dependency lodash to v4\.\d+\.\d+$/), head: { ref: 'renovate/lodash-4.x' } });
    // Forgejo 10: assignees go with the pull request and the reviewer is requested through requested_reviewers.
    expect(update.assignees.map((user: { login: string }) => user.login)).toEqual([developer.name]);
    expect(update.requested_reviewers.map((user: { login: string }) => user.login)).toEqual([developer.name]);

    // Closed unmerged by a person: the next run comments that it will ignore this version, deletes its branch and
    // opens nothing new.
    await t.http
      .patch(api(`/pulls/${update.number}`, 'tools'))
      .set(withToken(developer.token))
      .send({ state: 'closed' })
      .expect(201);
    expectNoTrouble(await renovateOn('tools', settings));
    const comments = await get(`/issues/${update.number}/comments`, 'tools');
    expect(comments.map((comment: { user: { login: string }; body: string }) => [comment.user.login, comment.body.split('\n')[0]])).toEqual([
      [bot.name, '### Renovate Ignore Notification'],
    ]);
    expect(git(gitDir('tools'), 'branch', '--list', 'renovate/*').trim()).toBe('');
    expect((await get('/pulls?state=all', 'tools')).map((pull: { number: number; state: string }) => [pull.number, pull.state])).toEqual([
      [update.number, 'closed'],
      [onboarding.number, 'closed'],
    ]);
  }, 600_000);
});
