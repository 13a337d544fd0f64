import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const TIMELINE_KEYS = [
  'id',
  'type',
  'html_url',
  'pull_request_url',
  'issue_url',
  'user',
  'body',
  'created_at',
  'updated_at',
  'old_project_id',
  'project_id',
  'old_milestone',
  'milestone',
  'tracked_time',
  'old_title',
  'new_title',
  'old_ref',
  'new_ref',
  'ref_issue',
  'ref_comment',
  'ref_action',
  'ref_commit_sha',
  'review_id',
  'label',
  'assignee',
  'assignee_team',
  'removed_assignee',
  'resolve_doer',
  'dependent_issue',
];

describe('issue timeline and body sizes', () => {
  let t: TestApp;
  let owner: TestUser;

  beforeAll(async () => {
    // Hooks may point at loopback: one listens on the repository of the size test (its deliveries fail, harmlessly).
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' });
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  it('lists comments and close/reopen events oldest first, paged, with Forgejo’s TimelineComment JSON', async () => {
    const repo = await makeRepo(t, owner);
    const issues = t.api(`/repos/${repo.full_name}/issues`);
    await t.http.post(issues).set(withToken(owner.token)).send({ title: 'Timeline' }).expect(201);
    const comment = (await t.http.post(`${issues}/1/comments`).set(withToken(owner.token)).send({ body: 'first' }).expect(201)).body;
    await t.http.patch(`${issues}/1`).set(withToken(owner.token)).send({ state: 'closed' }).expect(201);
    await t.http.patch(`${issues}/1`).set(withToken(owner.token)).send({ state: 'open' }).expect(201);

    const all = await t.http.get(`${issues}/1/timeline`).expect(200);
    expect(all.headers['x-total-count']).toBe('3');
    expect(all.body.map((entry: { type: string }) => entry.type)).toEqual(['comment', 'close', 'reopen']);
    expect(Object.keys(all.body[0])).toEqual(TIMELINE_KEYS);
    expect(all.body[0]).toMatchObject({
      id: comment.id,
      body: 'first',
      html_url: `http://anvil.test/${repo.full_name}/issues/1#issuecomment-${comment.id}`,
      issue_url: `http://anvil.test/${repo.full_name}/issues/1`,
      pull_request_url: '',
      user: { login: owner.name },
      ref_action: 'none',
      ref_commit_sha: '',
      ref_issue: null,
      label: null,
    });
    expect(all.body[1]).toMatchObject({ type: 'close', body: '', user: { login: owner.name } });

    const second = await t.http.get(`${issues}/1/timeline?limit=1&page=2`).expect(200);
    expect(second.body.map((entry: { type: string }) => entry.type)).toEqual(['close']);
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await t.http.get(`${issues}/1/timeline`).query({ since: future }).expect(200)).body).toEqual([]);
    expect((await t.http.get(`${issues}/1/timeline`).query({ before: future }).expect(200)).body).toHaveLength(3);
    await t.http.get(`${issues}/1/timeline`).query({ since: 'yesterday' }).expect(422);
    await t.http.get(`${issues}/9/timeline`).expect(404);
  });

  it('answers 404 for a private repository to outsiders', async () => {
    const repo = await makeRepo(t, owner, { private: true });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/issues`))
      .set(withToken(owner.token))
      .send({ title: 'Secret' })
      .expect(201);
    const stranger = await makeUser(t);
    await t.http
      .get(t.api(`/repos/${repo.full_name}/issues/1/timeline`))
      .set(withToken(stranger.token))
      .expect(404);
    await t.http
      .get(t.api(`/repos/${repo.full_name}/issues/1/timeline`))
      .set(withToken(owner.token))
      .expect(200);
  });

  it('keeps bodies and comments of up to 4 MiB whole, webhooks listening; refuses more with 422, larger requests with 413', async () => {
    const repo = await makeRepo(t, owner);
    const issues = t.api(`/repos/${repo.full_name}/issues`);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/hooks`))
      .set(withToken(owner.token))
      .send({ type: 'forgejo', active: true, events: ['issues', 'issue_comment'], config: { content_type: 'json', url: 'http://127.0.0.1:9/hook' } })
      .expect(201);
    // Beyond the 64 KiB of a MySQL text column, for the body and for the payload that carries it.
    const long = 'é'.repeat(100_000);
    const created = await t.http.post(issues).set(withToken(owner.token)).send({ title: 'long', body: long }).expect(201);
    expect(created.body.body).toBe(long);
    const comment = await t.http.post(`${issues}/${created.body.number}/comments`).set(withToken(owner.token)).send({ body: long }).expect(201);
    expect((await t.http.get(t.api(`/repos/${repo.full_name}/issues/comments/${comment.body.id}`)).expect(200)).body.body).toBe(long);

    const limit = 4 * 1024 * 1024;
    const most = 'x'.repeat(limit);
    await t.http.patch(`${issues}/${created.body.number}`).set(withToken(owner.token)).send({ body: most }).expect(201);
    const over = await t.http
      .post(issues)
      .set(withToken(owner.token))
      .send({ title: 'too long', body: `${most}y` })
      .expect(422);
    expect(over.body.message).toBe(`body is too long: at most ${limit} bytes`);
    await t.http
      .post(`${issues}/${created.body.number}/comments`)
      .set(withToken(owner.token))
      .send({ body: `${most}y` })
      .expect(422);
    await t.http
      .post(issues)
      .set(withToken(owner.token))
      .send({ title: 'far too long', body: 'x'.repeat(3 * limit) })
      .expect(413);
    expect((await t.http.get(issues).query({ state: 'all' }).expect(200)).body.map((issue: { title: string }) => issue.title)).toEqual(['long']);
    expect((await t.http.get(`${issues}/${created.body.number}`).expect(200)).body.body).toHaveLength(limit);
  });
});
