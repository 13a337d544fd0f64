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
    expect((await get('/version').expect(200)).body.version).toMatch(/^\d+\.\d+\.\d+/);
    const active = await makeRepo(t, bot, { autoInit: true });
    const shelved = await makeRepo(t, bot, { autoInit: true });
    await t.http.patch(t.api(`/repos/${shelved.full_name}`)).set(withToken(bot.token)).send({ archived: true }).expect(200);
    const found = (await get(`/repos/search?uid=${user.id}&archived=false&limit=50`).expect(200)).body;
    expect(found.ok).toBe(true);
    const names = found.data.map((repo: { full_name: string }) => repo.full_name);
    expect(names).toContain(active.full_name);
    expect(names).not.toContain(shelved.full_name);
    expect(found.data.every((repo: { mirror: boolean }) => repo.mirror === false)).toBe(true);
  });

  it('initRepo reads every field it checks, and stops where Anvil has no pull requests to offer', async () => {
    const repo = await makeRepo(t, bot, { autoInit: true });
    const json = (await get(`/repos/${repo.full_name}`).expect(200)).body;
    for (const field of ['archived', 'mirror', 'empty', 'fork', 'allow_rebase', 'allow_rebase_explicit', 'allow_squash_merge', 'allow_merge_commits', 'allow_fast_forward_only_merge', 'has_pull_requests']) {
      expect(typeof json[field]).toBe('boolean');
    }
    expect(json).toMatchObject({ default_branch: 'main', id: repo.id, clone_url: expect.any(String), ssh_url: expect.any(String) });
    // Before this, the allow_* fields were missing and every repository was aborted at this step as well,
    // without saying why; now the answer tells the truth: no merge method, because no pull requests.
    expect(json.has_pull_requests).toBe(false);
    expect(initRepoOutcome(json)).toBe('REPOSITORY_BLOCKED');
    // The onboarding check reads renovate.json through the contents API: absent is a 404.
    await get(`/repos/${repo.full_name}/contents/renovate.json?ref=main`).expect(404);
    expect((await get(`/repos/${repo.full_name}/contents/README.md?ref=main`).expect(200)).body.encoding).toBe('base64');
  });

  it('initRepo’s earlier checks see archived, empty and read-only repositories', async () => {
    const archived = await makeRepo(t, bot, { autoInit: true });
    await t.http.patch(t.api(`/repos/${archived.full_name}`)).set(withToken(bot.token)).send({ archived: true }).expect(200);
    expect(initRepoOutcome((await get(`/repos/${archived.full_name}`).expect(200)).body)).toBe('REPOSITORY_ARCHIVED');
    const empty = await makeRepo(t, bot);
    expect(initRepoOutcome((await get(`/repos/${empty.full_name}`).expect(200)).body)).toBe('REPOSITORY_EMPTY');
    const notMine = await makeRepo(t, other, { autoInit: true });
    expect(initRepoOutcome((await get(`/repos/${notMine.full_name}`).expect(200)).body)).toBe('REPOSITORY_ACCESS_FORBIDDEN');
  });
});
