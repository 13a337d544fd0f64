import { makeOrg, makeRepo, makeUser, TestOrg, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';
import { SinkRequest, WebhookSink } from '../support/webhook-sink';

/**
 * Review requests of teams over HTTP (`team_reviewers` of …/requested_reviewers on an organisation's repository):
 * Forgejo's checks and texts, the PullReview and PullRequest JSON, the timeline entries, the webhooks sent to the
 * team's members, a member's review answering the request, and the cleanup when the team or the repository goes.
 * Also: line comments of reviews stay out of the issue timeline, as Forgejo's.
 */
describe('review requests of teams: …/pulls/{index}/requested_reviewers team_reviewers', () => {
  let t: TestApp;
  let owner: TestUser;
  let alice: TestUser;
  let bob: TestUser;
  let outsider: TestUser;
  let org: TestOrg;
  let sink: WebhookSink;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
    });
    await t.listen();
    sink = await new WebhookSink().start();
    [owner, alice, bob, outsider] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
    org = await makeOrg(t, owner.user);
  });
  afterAll(async () => {
    await sink?.stop();
    await t?.close();
  });

  const as = (user: TestUser) => withToken(user.token);
  const pulls = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/pulls`);
  const requests = (repo: Record<string, any>) => `${pulls(repo)}/1/requested_reviewers`;
  const count = async (sql: string, args: unknown[]) => Number((await t.dataSource.query(sql, args))[0].n);

  /** A team of the organisation that reads code and pull requests, with `members`, linked to no repository. */
  async function makeTeam(members: TestUser[], permission: 'read' | 'write' = 'read'): Promise<Record<string, any>> {
    const team = (
      await t.http
        .post(t.api(`/orgs/${org.name}/teams`))
        .set(as(owner))
        .send({ name: `team${Math.random().toString(36).slice(2, 10)}`, permission, units: ['repo.code', 'repo.pulls'] })
        .expect(201)
    ).body;
    for (const member of members)
      await t.http
        .put(t.api(`/teams/${team.id}/members/${member.name}`))
        .set(as(owner))
        .expect(204);
    return team;
  }

  /** A repository of the organisation whose `feature` branch adds new.txt; `owner` opens pull request 1. */
  async function openPull(options: { private?: boolean } = {}): Promise<Record<string, any>> {
    const repo = await makeRepo(t, owner, { org: org.name, autoInit: true, private: options.private });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/contents/new.txt`))
      .set(as(owner))
      .send({ content: Buffer.from('one\ntwo\n').toString('base64'), new_branch: 'feature', message: 'new' })
      .expect(201);
    await t.http.post(pulls(repo)).set(as(owner)).send({ head: 'feature', base: repo.default_branch, title: 'A change' }).expect(201);
    return repo;
  }

  const ask = (repo: Record<string, any>, who: TestUser, body: Record<string, unknown>, method: 'post' | 'delete' = 'post') =>
    t.http[method](requests(repo)).set(as(who)).send(body);
  const pull = async (repo: Record<string, any>) =>
    (
      await t.http
        .get(`${pulls(repo)}/1`)
        .set(as(owner))
        .expect(200)
    ).body;
  const teamNames = async (repo: Record<string, any>) => ((await pull(repo)).requested_reviewers_teams ?? []).map((team: Record<string, any>) => team.name);

  it("asks a team for a review and takes it back, with Forgejo's JSON and timeline entries; never twice", async () => {
    const repo = await openPull();
    const team = await makeTeam([alice, bob]);
    const made = (await ask(repo, owner, { team_reviewers: [team.name] }).expect(201)).body;
    expect(made).toHaveLength(1);
    expect(made[0]).toMatchObject({ user: null, state: 'REQUEST_REVIEW', official: false, dismissed: false, stale: false });
    expect(made[0].team).toMatchObject({ id: team.id, name: team.name, organization: null, permission: 'read' });
    // Asked already: nothing new, whatever the case of the name.
    expect((await ask(repo, owner, { team_reviewers: [team.name.toUpperCase()] }).expect(201)).body).toEqual([]);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE reviewer_team_id = ?', [team.id])).toBe(1);

    const shown = await pull(repo);
    expect(shown.requested_reviewers).toBeNull();
    expect(shown.requested_reviewers_teams).toHaveLength(1);
    expect(shown.requested_reviewers_teams[0]).toMatchObject({ id: team.id, name: team.name, organization: { id: org.id, username: org.name } });
    const listed = (
      await t.http
        .get(`${pulls(repo)}/1/reviews`)
        .set(as(owner))
        .expect(200)
    ).body;
    expect(listed.map((item: Record<string, any>) => [item.id, item.state, item.user, item.team?.name])).toEqual([
      [made[0].id, 'REQUEST_REVIEW', null, team.name],
    ]);

    await ask(repo, owner, { team_reviewers: [team.name] }, 'delete').expect(204);
    expect(await teamNames(repo)).toEqual([]);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE reviewer_team_id = ?', [team.id])).toBe(0);
    // Taking back a request that is not there changes nothing (and writes no entry).
    await ask(repo, owner, { team_reviewers: [team.name] }, 'delete').expect(204);

    const timeline = (
      await t.http
        .get(t.api(`/repos/${repo.full_name}/issues/1/timeline`))
        .set(as(owner))
        .expect(200)
    ).body.filter((entry: Record<string, any>) => entry.type === 'review_request');
    expect(
      timeline.map((entry: Record<string, any>) => [entry.user.login, entry.assignee, entry.assignee_team?.name, entry.removed_assignee, entry.review_id]),
    ).toEqual([
      [owner.name, null, team.name, false, made[0].id],
      [owner.name, null, team.name, true, 0],
    ]);
    expect(timeline[0].assignee_team).toMatchObject({ id: team.id, organization: null });
  });

  it("refuses with Forgejo's texts before anything changes: unknown teams, callers who may not choose, teams that cannot read", async () => {
    const repo = await openPull({ private: true });
    const team = await makeTeam([alice]);
    // The team of a private repository must reach it.
    const unreachable = await ask(repo, owner, { team_reviewers: [team.name] }).expect(422);
    expect(unreachable.body.message).toBe(`Reviewing team can't read repo [user_id: ${owner.user.id}, repo_id: ${repo.id}]`);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE repo_id = ?', [repo.id])).toBe(0);
    await t.http
      .put(t.api(`/teams/${team.id}/repos/${org.name}/${repo.name}`))
      .set(as(owner))
      .expect(204);
    // alice reads the private repository through her team now, and its readers choose reviewers (as Forgejo's team
    // members with access to pull requests do); an outsider sees nothing (404 at the door).
    await ask(repo, outsider, { team_reviewers: [team.name] }).expect(404);
    await ask(repo, alice, { team_reviewers: [team.name] }).expect(201);
    expect(await teamNames(repo)).toEqual([team.name]);

    const open = await openPull();
    const other = await makeTeam([bob]);
    // An unknown team, after a user who may be asked: nothing changes.
    const unknown = await ask(open, owner, { reviewers: [bob.name], team_reviewers: ['no-such-team'] });
    // Every 404 of Anvil's has an empty body (Forgejo's says "Team 'no-such-team' not exist").
    expect({ status: unknown.status, body: unknown.body }).toEqual({ status: 404, body: {} });
    expect((await pull(open)).requested_reviewers).toBeNull();
    const refused = await ask(open, outsider, { team_reviewers: [other.name] }).expect(422);
    expect(refused.body.message).toBe(`Doer can't choose reviewer [user_id: ${outsider.user.id}, repo_id: ${open.id}]`);
    // A public repository is read by every team of its organisation.
    await ask(open, owner, { team_reviewers: [other.name] }).expect(201);
    const removal = await ask(open, outsider, { team_reviewers: [other.name] }, 'delete').expect(422);
    expect(removal.body.message).toBe(`Doer can't remove reviewer [user_id: ${outsider.user.id}, repo_id: ${open.id}]`);
    expect(await teamNames(open)).toEqual([other.name]);
    // An archived repository refuses the change (423) only after the teams are looked up and checked.
    await t.http
      .patch(t.api(`/repos/${open.full_name}`))
      .set(as(owner))
      .send({ archived: true })
      .expect(200);
    await ask(open, owner, { team_reviewers: ['no-such-team'] }).expect(404);
    await ask(open, outsider, { team_reviewers: [other.name] }).expect(422);
    await ask(open, owner, { team_reviewers: [other.name] }, 'delete').expect(423);
    expect(await teamNames(open)).toEqual([other.name]);
  });

  it('is ignored on a repository of a user, as Forgejo ignores team_reviewers there', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/contents/new.txt`))
      .set(as(owner))
      .send({ content: Buffer.from('x\n').toString('base64'), new_branch: 'feature', message: 'new' })
      .expect(201);
    await t.http.post(pulls(repo)).set(as(owner)).send({ head: 'feature', base: repo.default_branch, title: 'mine' }).expect(201);
    expect((await ask(repo, owner, { team_reviewers: ['Owners', 'no-such-team'] }).expect(201)).body).toEqual([]);
    expect((await pull(repo)).requested_reviewers_teams).toBeNull();
  });

  it("is answered by a member's approval or rejection, not by a comment nor by another's review", async () => {
    const repo = await openPull();
    const team = await makeTeam([alice]);
    const others = await makeTeam([bob]);
    await ask(repo, owner, { team_reviewers: [team.name, others.name] }).expect(201);
    const review = (who: TestUser, event: string) =>
      t.http
        .post(`${pulls(repo)}/1/reviews`)
        .set(as(who))
        .send({ event, body: `${event} by ${who.name}` })
        .expect(200);
    await review(alice, 'COMMENT');
    expect(await teamNames(repo)).toEqual([team.name, others.name]);
    await review(alice, 'APPROVED');
    expect(await teamNames(repo)).toEqual([others.name]);
    await review(bob, 'REQUEST_CHANGES');
    expect(await teamNames(repo)).toEqual([]);
  });

  it('is official when the team is on the approvals whitelist of the base branch rule', async () => {
    const repo = await openPull();
    const team = await makeTeam([alice]);
    const unlisted = await makeTeam([bob], 'write');
    // A rule's whitelist keeps the teams that reach the repository.
    for (const linked of [team, unlisted])
      await t.http
        .put(t.api(`/teams/${linked.id}/repos/${org.name}/${repo.name}`))
        .set(as(owner))
        .expect(204);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/branch_protections`))
      .set(as(owner))
      .send({ rule_name: repo.default_branch, enable_approvals_whitelist: true, approvals_whitelist_teams: [team.name] })
      .expect(201);
    const made = (await ask(repo, owner, { team_reviewers: [team.name, unlisted.name] }).expect(201)).body;
    expect(made.map((item: Record<string, any>) => [item.team.name, item.official])).toEqual([
      [team.name, true],
      [unlisted.name, false],
    ]);
  });

  it("sends review_requested to each member but the pull request's poster, and nothing when the request is taken back", async () => {
    const repo = await openPull();
    await t.http
      .post(t.api(`/repos/${repo.full_name}/hooks`))
      .set(as(owner))
      .send({ type: 'gitea', active: true, events: ['pull_request_review_request'], config: { url: `${sink.url}/teams/${repo.name}`, content_type: 'json' } })
      .expect(201);
    const team = await makeTeam([alice, bob, owner]);
    await ask(repo, owner, { team_reviewers: [team.name] }).expect(201);
    await ask(repo, owner, { team_reviewers: [team.name] }, 'delete').expect(204);
    // A user's request taken back after it: the hook's deliveries leave in order, so once its removal has arrived,
    // a removal of the team's would have arrived before it.
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${outsider.name}`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(204);
    await ask(repo, owner, { reviewers: [outsider.name] }).expect(201);
    await ask(repo, owner, { reviewers: [outsider.name] }, 'delete').expect(204);
    const received = () => [
      ...new Map(
        sink.requests.filter((request: SinkRequest) => request.path === `/teams/${repo.name}`).map((request) => [request.headers['x-gitea-delivery'], request]),
      ).values(),
    ];
    await sink.waitFor(() => received().some((request) => request.json.action === 'review_request_removed'), 'the removal of the user request');
    const summary = received().map((request) => `${request.headers['x-gitea-event-type']}|${request.json.action}|${request.json.requested_reviewer.login}`);
    expect(summary.sort()).toEqual(
      [
        `pull_request_review_request|review_requested|${alice.name}`,
        `pull_request_review_request|review_requested|${bob.name}`,
        `pull_request_review_request|review_requested|${outsider.name}`,
        `pull_request_review_request|review_request_removed|${outsider.name}`,
      ].sort(),
    );
    const first = received().find((request) => request.json.requested_reviewer.login === alice.name)!.json;
    expect(first).toMatchObject({ action: 'review_requested', number: 1, sender: { login: owner.name }, review: null });
    expect(first.pull_request.requested_reviewers_teams.map((item: Record<string, any>) => item.name)).toEqual([team.name]);
  });

  it('deleting the team or the repository removes the requests; the timeline entry then names no team', async () => {
    const repo = await openPull();
    const team = await makeTeam([alice]);
    const kept = await makeTeam([bob]);
    await ask(repo, owner, { team_reviewers: [team.name, kept.name] }).expect(201);
    await t.http
      .delete(t.api(`/teams/${team.id}`))
      .set(as(owner))
      .expect(204);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE reviewer_team_id = ?', [team.id])).toBe(0);
    expect(await teamNames(repo)).toEqual([kept.name]);
    const entries = (
      await t.http
        .get(t.api(`/repos/${repo.full_name}/issues/1/timeline`))
        .set(as(owner))
        .expect(200)
    ).body.filter((entry: Record<string, any>) => entry.type === 'review_request');
    expect(entries.map((entry: Record<string, any>) => entry.assignee_team?.name ?? null)).toEqual([null, kept.name]);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(as(owner))
      .expect(204);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE reviewer_team_id = ?', [kept.id])).toBe(0);
  });

  it("leaves line comments of reviews out of the issue timeline, as Forgejo's, given or pending", async () => {
    const repo = await openPull();
    const comments = [{ path: 'new.txt', new_position: 1, body: 'a line comment' }];
    const given = (
      await t.http
        .post(`${pulls(repo)}/1/reviews`)
        .set(as(alice))
        .send({ event: 'COMMENT', body: 'see the line', comments })
        .expect(200)
    ).body;
    expect(given.comments_count).toBe(1);
    await t.http
      .post(`${pulls(repo)}/1/reviews`)
      .set(as(bob))
      .send({ event: 'PENDING', body: 'draft', comments })
      .expect(200);
    for (const viewer of [owner, alice, bob]) {
      const answer = await t.http
        .get(t.api(`/repos/${repo.full_name}/issues/1/timeline`))
        .set(as(viewer))
        .expect(200);
      const timeline = answer.body;
      expect(timeline.map((entry: Record<string, any>) => entry.type)).not.toContain('code');
      // The count counts the entries listed, so paging never promises a line comment.
      expect(Number(answer.headers['x-total-count'])).toBe(timeline.length);
      expect(
        timeline.filter((entry: Record<string, any>) => entry.type === 'review').map((entry: Record<string, any>) => [entry.review_id, entry.body]),
      ).toEqual([[given.id, 'see the line']]);
    }
  });

  it('lists who may be asked for a review (GET …/reviewers): readers of its pull requests, the same rule a request meets', async () => {
    const repo = await openPull({ private: true });
    const readers = await makeTeam([alice]);
    const codeOnly = (
      await t.http
        .post(t.api(`/orgs/${org.name}/teams`))
        .set(as(owner))
        .send({ name: `code${Math.random().toString(36).slice(2, 10)}`, permission: 'read', units: ['repo.code'] })
        .expect(201)
    ).body;
    await t.http
      .put(t.api(`/teams/${codeOnly.id}/members/${bob.name}`))
      .set(as(owner))
      .expect(204);
    for (const team of [readers, codeOnly])
      await t.http
        .put(t.api(`/teams/${team.id}/repos/${org.name}/${repo.name}`))
        .set(as(owner))
        .expect(204);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${outsider.name}`))
      .set(as(owner))
      .send({ permission: 'read' })
      .expect(204);
    const listed = await t.http
      .get(t.api(`/repos/${repo.full_name}/reviewers`))
      .set(as(alice))
      .expect(200);
    // The organisation's owner (its Owners team), the pull request readers' team and the collaborator, by name;
    // not bob, whose team reaches the repository without its pull requests.
    const expected = [owner, alice, outsider].map((user) => user.name).sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase()));
    expect(listed.body.map((user: Record<string, any>) => user.login)).toEqual(expected);
    expect(listed.body[0]).toMatchObject({ id: expect.any(Number), login: expect.any(String), avatar_url: expect.any(String) });
    await ask(repo, owner, { reviewers: [alice.name] }).expect(201);
    await ask(repo, owner, { reviewers: [bob.name] }).expect(422);
    await t.http.get(t.api(`/repos/${repo.full_name}/reviewers`)).expect(401);
    await t.http
      .get(t.api(`/repos/${repo.full_name}/reviewers`))
      .set(as(bob))
      .expect(200);
    const stranger = await makeUser(t);
    await t.http
      .get(t.api(`/repos/${repo.full_name}/reviewers`))
      .set(as(stranger))
      .expect(404);
  });
});
