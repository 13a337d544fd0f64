import type { giteaApi } from 'gitea-js';
import { listeningApp } from '../../support/client-journey';
import { makeOrg, makeUser, TestUser, uniqueName, withToken } from '../../support/factories';
import { GitClient, withCredentials } from '../../support/git-client';
import type { TestApp } from '../../support/test-app';

/**
 * tea, Gitea's command line, replayed through gitea-js (the same operations as tea's Go SDK calls):
 * `tea repo create` (CreateRepo or CreateOrgRepo, then ListRepoTopics for the details it prints),
 * `tea repo <owner/repo>` (GetRepo + ListRepoTopics), `tea repos ls` (ListMyRepos), `tea org ls` (ListMyOrgs)
 * `tea admin users ls` (AdminListUsers), and `tea issues` ls/create/view/edit/close/reopen (ListRepoIssues,
 * ListRepoLabels, CreateIssue, GetIssue, EditIssue), `tea comment` (CreateIssueComment, ListIssueComments). The fields
 * tea prints for a repository, an organisation, a user, an issue and a comment are asserted. `tea pr` ls/create/view/checkout/close/reopen/reject/approve/review/merge send the Go SDK's bodies as
 * it marshals them (every field, zero values and nulls included), and checkout fetches with the real git.
 */
describe('client journey: tea', () => {
  let t: TestApp;
  let sdk: (token?: string) => ReturnType<typeof giteaApi>;
  let base: string;
  let admin: TestUser;
  let alice: TestUser;

  beforeAll(async () => {
    ({ t, sdk, base } = await listeningApp());
    admin = await makeUser(t, { admin: true });
    alice = await makeUser(t, { fullName: 'Alice A' });
  });
  afterAll(() => t.close());

  /** print.RepoDetails reads these. */
  function expectPrintableRepository(repo: Record<string, any>) {
    for (const field of ['name', 'full_name', 'description', 'html_url', 'ssh_url', 'clone_url', 'default_branch', 'updated_at'])
      expect(typeof repo[field]).toBe('string');
    for (const field of ['stars_count', 'watchers_count', 'forks_count', 'open_issues_count', 'size']) expect(typeof repo[field]).toBe('number');
    for (const field of ['fork', 'mirror', 'private', 'archived', 'empty']) expect(typeof repo[field]).toBe('boolean');
    expect(repo.owner.login).toEqual(expect.any(String));
    expect(repo.permissions).toEqual({ admin: expect.any(Boolean), push: expect.any(Boolean), pull: expect.any(Boolean) });
  }

  it('tea repo create, then its details with topics (before, the topics call failed and tea exited with an error)', async () => {
    const api = sdk(alice.token);
    const name = uniqueName('tea');
    const created = (
      await api.user.createCurrentUserRepo({ name, description: 'from tea', private: false, auto_init: true, default_branch: 'main', trust_model: 'default' })
    ).data;
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
    expect(listed).toMatchObject({
      name: org.name,
      full_name: expect.any(String),
      website: expect.any(String),
      location: expect.any(String),
      description: expect.any(String),
      visibility: 'public',
    });
  });

  it('tea admin users ls: every user for a site admin; refused to others', async () => {
    const users = await sdk(admin.token).admin.adminSearchUsers({ page: 1, limit: 30 });
    expect(users.status).toBe(200);
    const row = users.data.find((user) => user.login === alice.name);
    expect(row).toMatchObject({
      id: alice.user.id,
      login: alice.name,
      full_name: 'Alice A',
      email: alice.email,
      is_admin: false,
      restricted: false,
      prohibit_login: false,
      active: true,
    });
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
    const created = (
      await api.repos.issueCreateIssue(owner, name, {
        title: 'tea made this',
        body: 'described',
        labels: ids,
        assignees: [alice.name],
        due_date: '2031-02-03T10:00:00Z',
      })
    ).data;
    expect(created).toMatchObject({ number: 1, title: 'tea made this', state: 'open', due_date: '2031-02-03T23:59:59Z' });
    expect(created.labels!.map((label) => label.name)).toEqual(['bug']);
    expect(created.assignees!.map((user) => user.login)).toEqual([alice.name]);
    // `tea issues ls` prints index, title, state, author, milestone, labels, assignees, owner and repository.
    const listed = (await api.repos.issueListIssues(owner, name, { state: 'open', type: 'issues', page: 1, limit: 30 })).data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({
      number: 1,
      title: 'tea made this',
      state: 'open',
      user: { login: alice.name },
      milestone: null,
      repository: { owner, name },
    });
    // `tea issues 1`.
    expect((await api.repos.issueGetIssue(owner, name, 1)).data).toMatchObject({
      body: 'described',
      html_url: expect.stringContaining(`/${owner}/${name}/issues/1`),
    });
    // `tea issues edit 1 --title …`, `tea issues close 1`, `tea issues reopen 1`.
    expect((await api.repos.issueEditIssue(owner, name, 1, { title: 'tea renamed this' })).data.title).toBe('tea renamed this');
    expect((await api.repos.issueEditIssue(owner, name, 1, { state: 'closed' })).data.state).toBe('closed');
    expect((await api.repos.issueListIssues(owner, name, { state: 'open', type: 'issues' })).data).toEqual([]);
    expect((await api.repos.issueEditIssue(owner, name, 1, { state: 'open' })).data.state).toBe('open');
    await expect(api.repos.issueGetIssue(owner, name, 2)).rejects.toMatchObject({ status: 404 });
    // `tea comment 1 "…"`: CreateIssueComment with only the body; print.Comment shows `#### @<login> wrote on
    // <created>` and the body. `tea issues 1 --comments` lists them (ListIssueComments, the SDK's page and limit).
    const comment = (await api.repos.issueCreateComment(owner, name, 1, { body: 'Looked into it.' })).data;
    expect(comment).toMatchObject({ body: 'Looked into it.', user: { login: alice.name }, issue_url: expect.stringContaining(`/${owner}/${name}/issues/1`) });
    expect(Date.parse(comment.created_at!)).not.toBeNaN();
    expect(comment.updated_at).toBe(comment.created_at);
    const comments = (await api.repos.issueGetComments(owner, name, 1, {})).data;
    expect(comments.map((one) => [one.user!.login, one.body])).toEqual([[alice.name, 'Looked into it.']]);
    expect((await api.repos.issueGetIssue(owner, name, 1)).data.comments).toBe(1);
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

  it('tea pr: create with labels, milestone and assignees, ls, view, checkout, close, reopen, reject, approve, merge, checkout after the branch went', async () => {
    const name = uniqueName('tea-pr');
    const owner = alice.name;
    const repoApi = (url: string) => t.api(`/repos/${owner}/${name}${url}`);
    const as = (request: ReturnType<typeof t.http.get>) => request.set(withToken(alice.token));
    await as(t.http.post(t.api('/user/repos')))
      .send({ name, auto_init: true })
      .expect(201);
    await as(t.http.post(repoApi('/contents/feature.txt')))
      .send({ content: Buffer.from('x\n').toString('base64'), message: 'Add the feature', branch: 'main', new_branch: 'feature-x' })
      .expect(201);
    const label = (
      await as(t.http.post(repoApi('/labels')))
        .send({ name: 'enhancement', color: '#84b6eb' })
        .expect(201)
    ).body;
    const milestone = (
      await as(t.http.post(repoApi('/milestones')))
        .send({ title: 'v1' })
        .expect(201)
    ).body;

    // `tea pr create --head feature-x --labels enhancement --milestone v1 --assignees <me> --deadline …`: the base is
    // the repository's default branch (GetRepo), the title comes from the branch name, and the SDK's
    // CreatePullRequestOption goes out whole.
    const defaultBranch = (await as(t.http.get(repoApi(''))).expect(200)).body.default_branch;
    const created = await as(t.http.post(repoApi('/pulls'))).send({
      head: 'feature-x',
      base: defaultBranch,
      title: 'Feature X',
      body: 'Adds the feature.',
      assignee: '',
      assignees: [owner],
      reviewers: null,
      team_reviewers: null,
      milestone: milestone.id,
      labels: [label.id],
      due_date: '2031-02-03T10:00:00Z',
    });
    expect(created.status).toBe(201);
    // print.PullDetails: title, index, state, poster, head and base labels, mergeable, body; then html_url.
    expect(created.body).toMatchObject({
      number: 1,
      title: 'Feature X',
      state: 'open',
      user: { login: owner },
      head: { label: 'feature-x', ref: 'feature-x', sha: expect.stringMatching(/^[0-9a-f]{40}$/) },
      base: { label: defaultBranch, ref: defaultBranch },
      mergeable: true,
      body: 'Adds the feature.',
      milestone: { id: milestone.id, title: 'v1' },
      due_date: '2031-02-03T23:59:59Z',
      html_url: expect.stringContaining(`/${owner}/${name}/pulls/1`),
    });
    expect(created.body.labels.map((l: { name: string }) => l.name)).toEqual(['enhancement']);
    expect(created.body.assignees.map((u: { login: string }) => u.login)).toEqual([owner]);
    const head = created.body.head.sha as string;

    // `tea pr ls`: ListRepoPullRequests with the SDK's list options (state, page, limit).
    const listed = await as(t.http.get(repoApi('/pulls?page=1&limit=30&state=open'))).expect(200);
    expect(listed.body.map((pr: { number: number; title: string; state: string }) => [pr.number, pr.title, pr.state])).toEqual([[1, 'Feature X', 'open']]);
    expect(listed.headers['x-total-count']).toBe('1');

    // `tea pr 1`: GetPullRequest, then the head's combined status for the CI line (no status yet: Forgejo's empty
    // CombinedStatus, which tea prints as no CI).
    expect((await as(t.http.get(repoApi('/pulls/1'))).expect(200)).body).toMatchObject({ number: 1, head: { sha: head }, merged: false });
    expect((await as(t.http.get(repoApi(`/commits/${head}/status`))).expect(200)).body).toMatchObject({ state: '', sha: '', total_count: 0 });

    // `tea pr checkout 1`: GetPullRequest, then a fetch of the head branch from the head repository.
    const git = new GitClient();
    try {
      const remote = withCredentials(base, `/${owner}/${name}.git`, alice.name, alice.token);
      const work = await git.workingCopy('scratch');
      await git.ok(['fetch', '--quiet', remote, 'feature-x:refs/remotes/pulls/feature-x'], { cwd: work });
      expect((await git.ok(['rev-parse', 'refs/remotes/pulls/feature-x'], { cwd: work })).trim()).toBe(head);

      // `tea pr close 1` and `tea pr reopen 1`: EditPullRequest with only the state set; the SDK still sends every
      // other field (empty title and base, milestone 0, null labels and assignees), which change nothing.
      const editBody = (state: string) => ({
        title: '',
        body: null,
        base: '',
        assignee: '',
        assignees: null,
        milestone: 0,
        labels: null,
        state,
        due_date: null,
        unset_due_date: null,
        allow_maintainer_edit: null,
      });
      const closed = await as(t.http.patch(repoApi('/pulls/1')))
        .send(editBody('closed'))
        .expect(201);
      expect(closed.body).toMatchObject({
        state: 'closed',
        title: 'Feature X',
        body: 'Adds the feature.',
        base: { ref: defaultBranch },
        milestone: { id: milestone.id },
        due_date: '2031-02-03T23:59:59Z',
      });
      expect(closed.body.labels.map((l: { name: string }) => l.name)).toEqual(['enhancement']);
      expect(closed.body.assignees.map((u: { login: string }) => u.login)).toEqual([owner]);
      expect((await as(t.http.get(repoApi('/pulls?page=1&limit=30&state=open'))).expect(200)).body).toEqual([]);
      const reopened = await as(t.http.patch(repoApi('/pulls/1')))
        .send(editBody('open'))
        .expect(201);
      expect(reopened.body).toMatchObject({ state: 'open', title: 'Feature X', milestone: { id: milestone.id } });
      expect(reopened.body.labels.map((l: { name: string }) => l.name)).toEqual(['enhancement']);

      // `tea pr reject 1 "…"` and `tea pr approve 1` by a writer: CreatePullReview with the SDK's whole body (no
      // commit id: the head); `tea pr 1` then lists the reviews.
      const bob = await makeUser(t);
      await as(t.http.put(repoApi(`/collaborators/${bob.name}`)))
        .send({ permission: 'write' })
        .expect(204);
      const review = (event: string, body: string) =>
        t.http.post(repoApi('/pulls/1/reviews')).set(withToken(bob.token)).send({ event, body, commit_id: '', comments: null });
      expect((await review('REQUEST_CHANGES', 'Needs docs.').expect(200)).body).toMatchObject({
        state: 'REQUEST_CHANGES',
        body: 'Needs docs.',
        commit_id: head,
        user: { login: bob.name },
      });
      expect((await review('APPROVED', '').expect(200)).body).toMatchObject({
        state: 'APPROVED',
        commit_id: head,
        html_url: expect.stringContaining('/pulls/1'),
      });
      // `tea pr review 1`: the diff without binary changes (GetPullRequestDiff) to edit, then CreatePullReview with
      // the line comments made from it (the SDK's path, body, old_position and new_position).
      const diff = await as(t.http.get(repoApi('/pulls/1.diff?binary=false'))).expect(200);
      expect(diff.text).toContain('+++ b/feature.txt');
      const lined = await t.http
        .post(repoApi('/pulls/1/reviews'))
        .set(withToken(bob.token))
        .send({ event: 'COMMENT', body: 'One note.', commit_id: '', comments: [{ path: 'feature.txt', body: 'Why x?', old_position: 0, new_position: 1 }] })
        .expect(200);
      expect(lined.body).toMatchObject({ state: 'COMMENT', body: 'One note.', comments_count: 1, commit_id: head });
      const lines = (await as(t.http.get(repoApi(`/pulls/1/reviews/${lined.body.id}/comments`))).expect(200)).body;
      expect(lines).toEqual([
        expect.objectContaining({
          path: 'feature.txt',
          body: 'Why x?',
          position: 1,
          // A comment on the new side: Forgejo's LineNum; OldLineNum (original_position) stays 0.
          original_position: 0,
          commit_id: head,
          diff_hunk: expect.stringContaining('+x'),
        }),
      ]);
      const reviews = (await as(t.http.get(repoApi('/pulls/1/reviews'))).expect(200)).body;
      expect(reviews.map((r: { state: string; user: { login: string } }) => [r.state, r.user.login])).toEqual([
        ['REQUEST_CHANGES', bob.name],
        ['APPROVED', bob.name],
        ['COMMENT', bob.name],
      ]);

      // Reopening tests the pull request again; until that has run a merge is refused (405, "try again later"), as
      // in Forgejo. A person runs `tea pr merge` after reading it mergeable.
      for (let attempt = 0; !(await as(t.http.get(repoApi('/pulls/1'))).expect(200)).body.mergeable; attempt++) {
        if (attempt === 200) throw new Error('the reopened pull request was never tested again');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      // `tea pr merge 1 --style squash --title … --message …`: the SDK counts only a 200 as merged.
      const merged = await as(t.http.post(repoApi('/pulls/1/merge'))).send({
        Do: 'squash',
        MergeCommitID: '',
        MergeTitleField: 'Feature X (#1)',
        MergeMessageField: 'Squashed by tea.',
        delete_branch_after_merge: false,
        force_merge: false,
        head_commit_id: '',
        merge_when_checks_succeed: false,
      });
      expect(merged.status).toBe(200);
      const after = (await as(t.http.get(repoApi('/pulls/1'))).expect(200)).body;
      expect(after).toMatchObject({ state: 'closed', merged: true, merged_by: { login: owner } });
      const mainHead = (await as(t.http.get(repoApi(`/branches/${defaultBranch}`))).expect(200)).body.commit;
      expect(mainHead.id).toBe(after.merge_commit_sha);
      expect(mainHead.message.trim()).toBe('Feature X (#1)\n\nSquashed by tea.');
      // IsPullRequestMerged: 204.
      await as(t.http.get(repoApi('/pulls/1/merge'))).expect(204);

      // With the head branch gone, head.ref names refs/pull/1/head, which `tea pr checkout` fetches instead.
      await as(t.http.delete(repoApi('/branches/feature-x'))).expect(204);
      const gone = (await as(t.http.get(repoApi('/pulls/1'))).expect(200)).body;
      expect(gone.head).toMatchObject({ label: 'feature-x', ref: 'refs/pull/1/head', sha: head });
      await git.ok(['fetch', '--quiet', remote, `${gone.head.ref}:refs/remotes/pulls/pulls/1`], { cwd: work });
      expect((await git.ok(['rev-parse', 'refs/remotes/pulls/pulls/1'], { cwd: work })).trim()).toBe(head);
    } finally {
      git.dispose();
    }
  });
});
