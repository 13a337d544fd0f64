import { makeRepo, makeUser, TestUser, withToken } from '../../support/factories';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * Renovate's Gitea platform:
 * initPlatform (GET /user, GET /version), getRepos (autodiscovery through /repos/search with uid and
 * archived=false), and initRepo up to the point where it needs pull requests: GET /repos/{o}/{r}, then its
 * checks in its order (archived, mirror, pull and push permission, empty, an allowed merge method) and the
 * config file read through the contents API. `initRepoOutcome` below repeats initRepo's decisions on the JSON
 * Anvil answers.
 */
function initRepoOutcome(repo: Record<string, any>): string {
  if (repo.archived) return 'REPOSITORY_ARCHIVED';
  if (repo.mirror) return 'REPOSITORY_MIRRORED';
  if (!repo.permissions.pull || !repo.permissions.push) return 'REPOSITORY_ACCESS_FORBIDDEN';
  if (repo.empty) return 'REPOSITORY_EMPTY';
  if (repo.allow_rebase) return 'rebase';
  if (repo.allow_rebase_explicit) return 'rebase-merge';
  if (repo.allow_squash_merge) return 'squash';
  if (repo.allow_merge_commits) return 'merge';
  return 'REPOSITORY_BLOCKED';
}

describe('client journey: Renovate (Gitea platform) repository initialisation', () => {
  let t: TestApp;
  let bot: TestUser;
  let other: TestUser;

  const get = (url: string, who: TestUser = bot) => t.http.get(t.api(url)).set(withToken(who.token));

  beforeAll(async () => {
    t = await startTestApp();
    bot = await makeUser(t);
    other = await makeUser(t);
  });
  afterAll(() => t.close());

  it('initPlatform and autodiscovery', async () => {
    const user = (await get('/user').expect(200)).body;
    expect(user).toMatchObject({ id: bot.user.id, login: bot.name, email: bot.email });
    // Renovate takes a version holding `gitea-` for Forgejo's and compares the part before `+gitea-`.
    const version = (await get('/version').expect(200)).body.version as string;
    expect(version).toContain('gitea-');
    expect(Number(version.split('+gitea-')[0].split('.')[0])).toBeGreaterThanOrEqual(10);
    const active = await makeRepo(t, bot, { autoInit: true });
    const shelved = await makeRepo(t, bot, { autoInit: true });
    await t.http
      .patch(t.api(`/repos/${shelved.full_name}`))
      .set(withToken(bot.token))
      .send({ archived: true })
      .expect(200);
    const found = (await get(`/repos/search?uid=${user.id}&archived=false&limit=50`).expect(200)).body;
    expect(found.ok).toBe(true);
    const names = found.data.map((repo: { full_name: string }) => repo.full_name);
    expect(names).toContain(active.full_name);
    expect(names).not.toContain(shelved.full_name);
    expect(found.data.every((repo: { mirror: boolean }) => repo.mirror === false)).toBe(true);
  });

  it('initRepo reads every field it checks and finds pull requests on, with rebase as the first merge method', async () => {
    const repo = await makeRepo(t, bot, { autoInit: true });
    const json = (await get(`/repos/${repo.full_name}`).expect(200)).body;
    for (const field of [
      'archived',
      'mirror',
      'empty',
      'fork',
      'allow_rebase',
      'allow_rebase_explicit',
      'allow_squash_merge',
      'allow_merge_commits',
      'allow_fast_forward_only_merge',
      'has_pull_requests',
    ]) {
      expect(typeof json[field]).toBe('boolean');
    }
    expect(json).toMatchObject({ default_branch: 'main', id: repo.id, clone_url: expect.any(String), ssh_url: expect.any(String) });
    expect(json.has_pull_requests).toBe(true);
    expect(initRepoOutcome(json)).toBe('rebase');
    // With the unit off, no merge method is offered and the repository is left alone.
    const off = (
      await t.http
        .patch(t.api(`/repos/${repo.full_name}`))
        .set(withToken(bot.token))
        .send({ has_pull_requests: false })
        .expect(200)
    ).body;
    expect(initRepoOutcome(off)).toBe('REPOSITORY_BLOCKED');
    // The onboarding check reads renovate.json through the contents API: absent is a 404.
    await get(`/repos/${repo.full_name}/contents/renovate.json?ref=main`).expect(404);
    expect((await get(`/repos/${repo.full_name}/contents/README.md?ref=main`).expect(200)).body.encoding).toBe('base64');
  });

  it('initRepo’s earlier checks see archived, empty and read-only repositories', async () => {
    const archived = await makeRepo(t, bot, { autoInit: true });
    await t.http
      .patch(t.api(`/repos/${archived.full_name}`))
      .set(withToken(bot.token))
      .send({ archived: true })
      .expect(200);
    expect(initRepoOutcome((await get(`/repos/${archived.full_name}`).expect(200)).body)).toBe('REPOSITORY_ARCHIVED');
    const empty = await makeRepo(t, bot);
    expect(initRepoOutcome((await get(`/repos/${empty.full_name}`).expect(200)).body)).toBe('REPOSITORY_EMPTY');
    const notMine = await makeRepo(t, other, { autoInit: true });
    expect(initRepoOutcome((await get(`/repos/${notMine.full_name}`).expect(200)).body)).toBe('REPOSITORY_ACCESS_FORBIDDEN');
  });

  it('the dependency dashboard: list (state=all&type=issues, paged by X-Total-Count), create, edit, close, reopen', async () => {
    const repo = await makeRepo(t, bot, { autoInit: true });
    expect((await get(`/repos/${repo.full_name}`).expect(200)).body.has_issues).toBe(true);
    // getIssueList: every issue of the repository, open or closed, without pull requests, page after page.
    const issueList = async () => {
      const all: Record<string, any>[] = [];
      for (let page = 1; ; page++) {
        const answer = await get(`/repos/${repo.full_name}/issues?state=all&type=issues&created_by=${bot.name}&page=${page}&limit=2`).expect(200);
        all.push(...answer.body);
        if (answer.body.length === 0 || all.length >= Number(answer.headers['x-total-count'])) break;
      }
      return all.filter((issue) => !issue.pull_request).map((issue) => ({ number: issue.number, state: issue.state, title: issue.title, body: issue.body }));
    };
    expect(await issueList()).toEqual([]);
    // ensureIssue: no issue with the dashboard's title yet, so createIssue.
    const body = '## Dependency Dashboard\n\n- [ ] <!-- unlimit-branch=renovate/lodash -->chore(deps): update lodash to v4.17.21\n';
    const created = await t.http
      .post(t.api(`/repos/${repo.full_name}/issues`))
      .set(withToken(bot.token))
      .send({ title: 'Dependency Dashboard', body, labels: [] })
      .expect(201);
    expect(created.body).toMatchObject({ number: 1, state: 'open', title: 'Dependency Dashboard', body, pull_request: null });
    for (const title of ['other one', 'another one'])
      await t.http
        .post(t.api(`/repos/${repo.full_name}/issues`))
        .set(withToken(bot.token))
        .send({ title, body: 'x' })
        .expect(201);
    const listed = await issueList();
    expect(listed.map((issue) => issue.title)).toEqual(['another one', 'other one', 'Dependency Dashboard']);
    // ensureIssue on the next run: the body changed, so updateIssue with body, title and state.
    const changedBody = `${body}- [ ] chore(deps): update jest to v30\n`;
    const edited = await t.http
      .patch(t.api(`/repos/${repo.full_name}/issues/1`))
      .set(withToken(bot.token))
      .send({ body: changedBody, title: 'Dependency Dashboard', state: 'open' })
      .expect(201);
    expect(edited.body).toMatchObject({ number: 1, body: changedBody, state: 'open' });
    // ensureIssueClosing: closeIssue is an edit with state closed; the closed one stays in the state=all list.
    await t.http
      .patch(t.api(`/repos/${repo.full_name}/issues/1`))
      .set(withToken(bot.token))
      .send({ state: 'closed' })
      .expect(201);
    expect((await issueList()).find((issue) => issue.number === 1)).toMatchObject({ state: 'closed', body: changedBody });
    // shouldReOpen: the dashboard comes back open.
    await t.http
      .patch(t.api(`/repos/${repo.full_name}/issues/1`))
      .set(withToken(bot.token))
      .send({ body: changedBody, title: 'Dependency Dashboard', state: 'open' })
      .expect(201);
    expect((await get(`/repos/${repo.full_name}`).expect(200)).body.open_issues_count).toBe(3);
  });
});
