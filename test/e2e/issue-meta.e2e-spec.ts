import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('issue assignees, reactions, dependencies and pins', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let stranger: TestUser;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer, reader, stranger] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const issues = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/issues`);
  const logins = (users: { login: string }[] | null) => (users ?? []).map((user) => user.login);

  it('lists who may be assigned: the owner and writing collaborators of a user’s repository', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${reader.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'read' })
      .expect(204);
    await t.http.get(t.api(`/repos/${repo.full_name}/assignees`)).expect(401);
    const listed = await t.http
      .get(t.api(`/repos/${repo.full_name}/assignees`))
      .set(withToken(stranger.token))
      .expect(200);
    expect(logins(listed.body).sort()).toEqual([owner.name, writer.name].sort());
    const hidden = await makeRepo(t, owner, { private: true });
    await t.http
      .get(t.api(`/repos/${hidden.full_name}/assignees`))
      .set(withToken(stranger.token))
      .expect(404);

    // Only those may be assigned; a read collaborator is refused with Forgejo's 422.
    const refused = await t.http
      .post(issues(repo))
      .set(withToken(owner.token))
      .send({ title: 'x', assignees: [reader.name] })
      .expect(422);
    expect(refused.body.message).toContain("user doesn't have access to repo");
    const issue = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'x', assignee: writer.name }).expect(201)).body;
    expect(logins(issue.assignees)).toEqual([writer.name]);
    const patched = await t.http
      .patch(`${issues(repo)}/${issue.number}`)
      .set(withToken(writer.token))
      .send({ assignees: [owner.name, writer.name] })
      .expect(201);
    expect(logins(patched.body.assignees).sort()).toEqual([owner.name, writer.name].sort());
    const byAssignee = await t.http.get(`${issues(repo)}?assigned_by=${owner.name}`).expect(200);
    expect(byAssignee.body.map((i: { number: number }) => i.number)).toEqual([issue.number]);
    expect((await t.http.get(`${issues(repo)}?assigned_by=${reader.name}`).expect(200)).body).toEqual([]);
  });

  it('in an organisation: its Owners and members of teams writing a unit may be assigned, readers may not', async () => {
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name });
    const as = (user: TestUser) => withToken(user.token);
    const triage = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'triage', permission: 'write', units: ['repo.issues'], includes_all_repositories: true })
      .expect(201);
    const lookers = await t.http
      .post(t.api(`/orgs/${org.name}/teams`))
      .set(as(owner))
      .send({ name: 'lookers', permission: 'read', units: ['repo.issues'], includes_all_repositories: true })
      .expect(201);
    await t.http
      .put(t.api(`/teams/${triage.body.id}/members/${writer.name}`))
      .set(as(owner))
      .expect(204);
    await t.http
      .put(t.api(`/teams/${lookers.body.id}/members/${reader.name}`))
      .set(as(owner))
      .expect(204);
    const listed = await t.http
      .get(t.api(`/repos/${repo.full_name}/assignees`))
      .set(as(reader))
      .expect(200);
    expect(logins(listed.body).sort()).toEqual([owner.name, writer.name].sort());
    await t.http
      .post(issues(repo))
      .set(as(owner))
      .send({ title: 'x', assignees: [writer.name, owner.name] })
      .expect(201);
    await t.http
      .post(issues(repo))
      .set(as(owner))
      .send({ title: 'x', assignees: [reader.name] })
      .expect(422);
    await t.http
      .post(issues(repo))
      .set(as(owner))
      .send({ title: 'x', assignees: [org.name] })
      .expect(422);
  });

  it('reactions on issues and comments: Forgejo’s allowed set, one of a kind per user, locked issues for writers', async () => {
    const repo = await makeRepo(t, owner);
    const issue = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'react to me' }).expect(201)).body;
    const reactions = `${issues(repo)}/${issue.number}/reactions`;
    await t.http.post(reactions).send({ content: '+1' }).expect(401);
    const first = await t.http.post(reactions).set(withToken(reader.token)).send({ content: '+1' }).expect(201);
    expect(Object.keys(first.body)).toEqual(['user', 'content', 'created_at']);
    expect(first.body).toMatchObject({ user: { login: reader.name }, content: '+1' });
    const again = await t.http.post(reactions).set(withToken(reader.token)).send({ content: '+1' }).expect(200);
    expect(again.body.created_at).toBe(first.body.created_at);
    await t.http.post(reactions).set(withToken(owner.token)).send({ content: 'heart' }).expect(201);
    const refused = await t.http.post(reactions).set(withToken(owner.token)).send({ content: 'smile' }).expect(403);
    expect(refused.body.message).toBe("'smile' is not an allowed reaction");
    const listed = await t.http.get(reactions).expect(200);
    expect(listed.body.map((r: { user: { login: string }; content: string }) => `${r.user.login}:${r.content}`)).toEqual([
      `${reader.name}:+1`,
      `${owner.name}:heart`,
    ]);
    expect(listed.headers['x-total-count']).toBe('2');
    await t.http.delete(reactions).set(withToken(reader.token)).send({ content: '+1' }).expect(200);
    await t.http.delete(reactions).set(withToken(reader.token)).send({ content: '+1' }).expect(200);
    expect((await t.http.get(reactions).expect(200)).body.map((r: { content: string }) => r.content)).toEqual(['heart']);

    const comment = (
      await t.http
        .post(`${issues(repo)}/${issue.number}/comments`)
        .set(withToken(owner.token))
        .send({ body: 'said' })
        .expect(201)
    ).body;
    const onComment = t.api(`/repos/${repo.full_name}/issues/comments/${comment.id}/reactions`);
    await t.http.post(onComment).set(withToken(stranger.token)).send({ content: 'rocket' }).expect(201);
    await t.http.post(onComment).set(withToken(stranger.token)).send({ content: 'nope' }).expect(403);
    expect((await t.http.get(onComment).expect(200)).body.map((r: { content: string }) => r.content)).toEqual(['rocket']);
    // The issue's own reactions and the comment's are apart.
    expect((await t.http.get(reactions).expect(200)).body).toHaveLength(1);
    await t.http.get(t.api(`/repos/${repo.full_name}/issues/comments/999999/reactions`)).expect(404);

    // Locked issues: only writers react.
    await t.dataSource.query('UPDATE issue SET is_locked = ? WHERE id = ?', [1, issue.id]);
    expect((await t.http.post(reactions).set(withToken(reader.token)).send({ content: 'eyes' }).expect(403)).body.message).toBe(
      'no permission to change reaction',
    );
    await t.http.post(reactions).set(withToken(owner.token)).send({ content: 'eyes' }).expect(201);

    // Reactions go with their comment, their issue, and their user.
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/issues/comments/${comment.id}`))
      .set(withToken(owner.token))
      .expect(204);
    const count = async (where: string, value: number) =>
      Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM reaction WHERE ${where} = ?`, [value]))[0].n);
    expect(await count('comment_id', comment.id)).toBe(0);
    const other = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'other' }).expect(201)).body;
    await t.http
      .post(`${issues(repo)}/${other.number}/reactions`)
      .set(withToken(stranger.token))
      .send({ content: 'laugh' })
      .expect(201);
    await t.http
      .delete(`${issues(repo)}/${issue.number}`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await count('issue_id', issue.id)).toBe(0);
    await t.http
      .delete(t.api(`/admin/users/${stranger.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect(await count('user_id', stranger.user.id)).toBe(0);
  });

  it('dependencies and blocks: a close waits for open dependencies (412), across repositories, off when disabled', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const make = async (title: string, where = repo) => (await t.http.post(issues(where)).set(withToken(owner.token)).send({ title }).expect(201)).body;
    const [waiting, awaited, third] = [await make('waiting'), await make('awaited'), await make('third')];
    const deps = `${issues(repo)}/${waiting.number}/dependencies`;
    const meta = (issue: { number: number }, where = repo) => ({ index: issue.number, owner: where.owner.login, repo: where.name });
    await t.http.post(deps).send(meta(awaited)).expect(401);
    await t.http.post(deps).set(withToken(reader.token)).send(meta(awaited)).expect(404);
    const added = await t.http.post(deps).set(withToken(writer.token)).send(meta(awaited)).expect(201);
    expect(added.body.number).toBe(waiting.number);
    await t.http.post(deps).set(withToken(writer.token)).send(meta(awaited)).expect(201);
    await t.http
      .post(`${issues(repo)}/${third.number}/blocks`)
      .set(withToken(writer.token))
      .send(meta(waiting))
      .expect(201);
    const numbers = async (url: string) => (await t.http.get(url).expect(200)).body.map((i: { number: number }) => i.number);
    expect(await numbers(deps)).toEqual([awaited.number, third.number]);
    expect(await numbers(`${issues(repo)}/${awaited.number}/blocks`)).toEqual([waiting.number]);
    // Self and circular links are refused.
    await t.http.post(deps).set(withToken(writer.token)).send(meta(waiting)).expect(422);
    await t.http
      .post(`${issues(repo)}/${awaited.number}/dependencies`)
      .set(withToken(writer.token))
      .send(meta(waiting))
      .expect(422);

    const close = (issue: { number: number }) =>
      t.http
        .patch(`${issues(repo)}/${issue.number}`)
        .set(withToken(owner.token))
        .send({ state: 'closed' });
    expect((await close(waiting).expect(412)).body.message).toBe('cannot close this issue because it still has open dependencies');
    await close(awaited).expect(201);
    await t.http.delete(deps).set(withToken(writer.token)).send(meta(third)).expect(201);
    await close(waiting).expect(201);

    // Across repositories: the other issue must be readable; a private one of a stranger is 404.
    const elsewhere = await makeRepo(t, owner);
    const far = await make('far away', elsewhere);
    const reopened = await make('another');
    await t.http
      .post(`${issues(repo)}/${reopened.number}/dependencies`)
      .set(withToken(owner.token))
      .send(meta(far, elsewhere))
      .expect(201);
    expect(await numbers(`${issues(repo)}/${reopened.number}/dependencies`)).toEqual([far.number]);
    const outsider = await makeUser(t);
    const hidden = await makeRepo(t, outsider, { private: true });
    const secret = (await t.http.post(issues(hidden)).set(withToken(outsider.token)).send({ title: 'secret' }).expect(201)).body;
    await t.http
      .post(`${issues(repo)}/${reopened.number}/dependencies`)
      .set(withToken(owner.token))
      .send(meta(secret, hidden))
      .expect(404);

    // Deleting an issue takes its links; with dependencies off the routes are 404 and closing is free.
    await t.http
      .delete(`${issues(elsewhere)}/${far.number}`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await numbers(`${issues(repo)}/${reopened.number}/dependencies`)).toEqual([]);
    await t.http
      .post(`${issues(repo)}/${reopened.number}/dependencies`)
      .set(withToken(owner.token))
      .send(meta(third))
      .expect(201);
    const settings = {
      has_issues: true,
      internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: false },
    };
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send(settings)
      .expect(200);
    await t.http.get(`${issues(repo)}/${reopened.number}/dependencies`).expect(404);
    await close(reopened).expect(201);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    const left = await t.dataSource.query('SELECT COUNT(*) AS n FROM issue_dependency WHERE issue_id = ? OR dependency_id = ?', [reopened.id, reopened.id]);
    expect(Number(left[0].n)).toBe(0);
  });

  it('pins: admins pin up to three issues, move and unpin them; the pinned list keeps their order', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const made = [];
    for (const title of ['a', 'b', 'c', 'd']) made.push((await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title }).expect(201)).body);
    const pin = (issue: { number: number }, user = owner) => t.http.post(`${issues(repo)}/${issue.number}/pin`).set(withToken(user.token));
    await pin(made[0], writer).expect(403);
    for (const issue of made.slice(0, 3)) await pin(issue).expect(204);
    await pin(made[0]).expect(204);
    await pin(made[3]).expect(400);
    const order = async () =>
      (await t.http.get(`${issues(repo)}/pinned`).expect(200)).body.map((i: { title: string; pin_order: number }) => `${i.title}${i.pin_order}`);
    expect(await order()).toEqual(['a1', 'b2', 'c3']);
    await t.http
      .patch(`${issues(repo)}/${made[2].number}/pin/1`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await order()).toEqual(['c1', 'a2', 'b3']);
    await t.http
      .patch(`${issues(repo)}/${made[2].number}/pin/9`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await order()).toEqual(['a1', 'b2', 'c3']);
    await t.http
      .delete(`${issues(repo)}/${made[0].number}/pin`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await order()).toEqual(['b1', 'c2']);
    await pin(made[3]).expect(204);
    expect(await order()).toEqual(['b1', 'c2', 'd3']);
    expect((await t.http.get(`${issues(repo)}/${made[3].number}`).expect(200)).body.pin_order).toBe(3);
    await t.http
      .delete(`${issues(repo)}/${made[1].number}`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await order()).toEqual(['c1', 'd2']);
  });
});
