import type { giteaApi } from 'gitea-js';
import { listeningApp } from '../../support/client-journey';
import { makeOrg, makeUser, TestUser, uniqueName } from '../../support/factories';
import type { TestApp } from '../../support/test-app';

/**
 * tea, Gitea's command line, replayed through gitea-js (the same operations as tea's Go SDK calls):
 * `tea repo create` (CreateRepo or CreateOrgRepo, then ListRepoTopics for the details it prints),
 * `tea repo <owner/repo>` (GetRepo + ListRepoTopics), `tea repos ls` (ListMyRepos), `tea org ls` (ListMyOrgs)
 * `tea admin users ls` (AdminListUsers), and `tea issues` ls/create/view/edit/close/reopen (ListRepoIssues,
 * ListRepoLabels, CreateIssue, GetIssue, EditIssue). The fields tea prints for a repository, an organisation, a
 * user and an issue are asserted.
 */
describe('client journey: tea', () => {
  let t: TestApp;
  let sdk: (token?: string) => ReturnType<typeof giteaApi>;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    ({ t, sdk } = await listeningApp());
    admin = await makeUser(t, { admin: true });
    alice = await makeUser(t, { fullName: 'Alice A' });
  });
  afterAll(() => t.close());

  /** print.RepoDetails reads these. */
  function expectPrintableRepository(repo: Record<string, any>) {
    for (const field of ['name', 'full_name', 'description', 'html_url', 'ssh_url', 'clone_url', 'default_branch', 'updated_at']) expect(typeof repo[field]).toBe('string');
    for (const field of ['stars_count', 'watchers_count', 'forks_count', 'open_issues_count', 'size']) expect(typeof repo[field]).toBe('number');
    for (const field of ['fork', 'mirror', 'private', 'archived', 'empty']) expect(typeof repo[field]).toBe('boolean');
    expect(repo.owner.login).toEqual(expect.any(String));
    expect(repo.permissions).toEqual({ admin: expect.any(Boolean), push: expect.any(Boolean), pull: expect.any(Boolean) });
  }

  it('tea repo create, then its details with topics (before, the topics call failed and tea exited with an error)', async () => {
    const api = sdk(alice.token);
    const name = uniqueName('tea');
    const created = (await api.user.createCurrentUserRepo({ name, description: 'from tea', private: false, auto_init: true, default_branch: 'main', trust_model: 'default' })).data;
    expectPrintableRepository(created);
    const topics = await api.repos.repoListTopics(alice.name, name);
    expect(topics.status).toBe(200);
    expect(topics.data).toEqual({ topics: [] });

    // tea repo create --owner <org>
    const org = await makeOrg(t, alice.user);
    const inOrg = (await api.orgs.createOrgRepo(org.name, { name: 'service', private: true })).data;
    expect(inOrg.full_name).toBe(`${org.name}/service`);
    expect((await api.repos.repoListTopics(org.name, 'service')).data.topics).toEqual([]);
  });

  it('tea repo <owner/repo>: GetRepo and ListRepoTopics', async () => {
    const api = sdk(alice.token);
    const name = uniqueName('view');
    await api.user.createCurrentUserRepo({ name });
    await api.repos.repoUpdateTopics(alice.name, name, { topics: ['cli', 'go'] });
    const repo = (await api.repos.repoGet(alice.name, name)).data;
    expectPrintableRepository(repo);
    expect(repo.topics).toEqual(['cli', 'go']);
    expect((await api.repos.repoListTopics(repo.owner!.login!, repo.name!)).data.topics).toEqual(['cli', 'go']);
  });

  it('tea repos ls: the caller’s repositories, paged', async () => {
    const api = sdk(alice.token);
    const page = await api.user.userCurrentListRepos({ page: 1, limit: 2 });
    expect(page.data).toHaveLength(2);
    expect(Number(page.headers.get('x-total-count'))).toBeGreaterThanOrEqual(3);
    for (const repo of page.data) expectPrintableRepository(repo);
  });

  it('tea org ls: the caller’s organisations with the fields tea prints', async () => {
    const api = sdk(alice.token);
    const org = await makeOrg(t, alice.user, { name: uniqueName('aaa-tea') });
    const orgs = (await api.user.orgListCurrentUserOrgs({ page: 1, limit: 30 })).data;
    const listed = orgs.find((candidate) => candidate.name === org.name);
    expect(listed).toMatchObject({ name: org.name, full_name: expect.any(String), website: expect.any(String), location: expect.any(String), description: expect.any(String), visibility: 'public' });
  });

  it('tea admin users ls: every user for a site admin; refused to others', async () => {
    const users = await sdk(admin.token).admin.adminSearchUsers({ page: 1, limit: 30 });
    expect(users.status).toBe(200);
    const row = users.data.find((user) => user.login === alice.name);
    expect(row).toMatchObject({ id: alice.user.id, login: alice.name, full_name: 'Alice A', email: alice.email, is_admin: false, restricted: false, prohibit_login: false, active: true });
    expect(typeof row!.created).toBe('string');
    await expect(sdk(alice.token).admin.adminSearchUsers({})).rejects.toMatchObject({ status: 403 });
  });

  it('tea issues: ls (open, issues only, paged), create with labels by name, view, edit, close and reopen', async () => {
    const api = sdk(alice.token);
    const name = uniqueName('tea-issues');
    await api.user.createCurrentUserRepo({ name });
    const owner = alice.name;
    const bug = (await api.repos.issueCreateLabel(owner, name, { name: 'bug', color: '#ee0701' })).data;
    // `tea issues create --labels bug`: the names become ids through the label list first.
    const labels = (await api.repos.issueListLabels(owner, name, { page: 1, limit: 50 })).data;
    const ids = labels.filter((label) => label.name === 'bug').map((label) => label.id!);
    expect(ids).toEqual([bug.id]);
    const created = (await api.repos.issueCreateIssue(owner, name, { title: 'tea made this', body: 'described', labels: ids, assignees: [alice.name], due_date: '2031-02-03T10:00:00Z' })).data;
    expect(created).toMatchObject({ number: 1, title: 'tea made this', state: 'open', due_date: '2031-02-03T23:59:59Z' });
    expect(created.labels!.map((label) => label.name)).toEqual(['bug']);
    expect(created.assignees!.map((user) => user.login)).toEqual([alice.name]);
    // `tea issues ls` prints index, title, state, author, milestone, labels, assignees, owner and repository.
    const listed = (await api.repos.issueListIssues(owner, name, { state: 'open', type: 'issues', page: 1, limit: 30 })).data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ number: 1, title: 'tea made this', state: 'open', user: { login: alice.name }, milestone: null, repository: { owner, name } });
    // `tea issues 1`.
    expect((await api.repos.issueGetIssue(owner, name, 1)).data).toMatchObject({ body: 'described', html_url: expect.stringContaining(`/${owner}/${name}/issues/1`) });
    // `tea issues edit 1 --title …`, `tea issues close 1`, `tea issues reopen 1`.
    expect((await api.repos.issueEditIssue(owner, name, 1, { title: 'tea renamed this' })).data.title).toBe('tea renamed this');
    expect((await api.repos.issueEditIssue(owner, name, 1, { state: 'closed' })).data.state).toBe('closed');
    expect((await api.repos.issueListIssues(owner, name, { state: 'open', type: 'issues' })).data).toEqual([]);
    expect((await api.repos.issueEditIssue(owner, name, 1, { state: 'open' })).data.state).toBe('open');
    await expect(api.repos.issueGetIssue(owner, name, 2)).rejects.toMatchObject({ status: 404 });
  });

  it('tea milestones: create, ls (open by default), view by title, issues on it, close and delete', async () => {
    const api = sdk(alice.token);
    const name = uniqueName('tea-milestones');
    await api.user.createCurrentUserRepo({ name });
    const owner = alice.name;
    // `tea milestones create --title v1 --deadline 2031-05-01`.
    const created = (await api.repos.issueCreateMilestone(owner, name, { title: 'v1', description: 'first', due_on: '2031-05-01T00:00:00Z' })).data;
    expect(created).toMatchObject({ title: 'v1', state: 'open', open_issues: 0, closed_issues: 0, due_on: '2031-05-01T00:00:00Z' });
    // `tea milestones ls` asks for open ones; `tea milestones v1` finds it by title.
    expect((await api.repos.issueGetMilestonesList(owner, name, { state: 'open', page: 1, limit: 30 })).data.map((m) => m.title)).toEqual(['v1']);
    expect((await api.repos.issueGetMilestone(owner, name, 'v1')).data.id).toBe(created.id);
    // `tea issues create --milestone v1` resolves the title to the id, then `tea milestones issues v1` lists by title.
    const issue = (await api.repos.issueCreateIssue(owner, name, { title: 'planned', milestone: created.id })).data;
    expect(issue.milestone).toMatchObject({ id: created.id, title: 'v1', open_issues: 1 });
    const onIt = (await api.repos.issueListIssues(owner, name, { state: 'all', type: 'issues', milestones: 'v1' })).data;
    expect(onIt.map((i) => i.number)).toEqual([issue.number]);
    // `tea milestones close v1`, then `tea milestones delete v1`.
    expect((await api.repos.issueEditMilestone(owner, name, 'v1', { state: 'closed' })).data.state).toBe('closed');
    expect((await api.repos.issueGetMilestonesList(owner, name, { state: 'open' })).data).toEqual([]);
    await api.repos.issueDeleteMilestone(owner, name, 'v1');
    expect((await api.repos.issueGetIssue(owner, name, issue.number!)).data.milestone).toBeNull();
  });
});
