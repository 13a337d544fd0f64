import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const MILESTONE_KEYS = ['id', 'title', 'description', 'state', 'open_issues', 'closed_issues', 'created_at', 'updated_at', 'closed_at', 'due_on'];

describe('milestones: /repos/{o}/{r}/milestones and milestones on issues', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer, reader] = [await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(() => t.close());

  const milestones = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/milestones`);
  const issues = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/issues`);
  const counts = async (repo: Record<string, any>, id: number) => {
    const body = (await t.http.get(`${milestones(repo)}/${id}`).expect(200)).body;
    return [body.open_issues, body.closed_issues];
  };

  it('creates, reads by id or title, lists with filters, edits and deletes milestones, writers only', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    await t.http.post(milestones(repo)).send({ title: 'v1' }).expect(401);
    await t.http.post(milestones(repo)).set(withToken(reader.token)).send({ title: 'v1' }).expect(403);
    const v1 = await t.http
      .post(milestones(repo))
      .set(withToken(writer.token))
      .send({ title: '  v1.0  ', description: 'first', due_on: '2030-05-01T10:00:00Z' })
      .expect(201);
    expect(Object.keys(v1.body)).toEqual(MILESTONE_KEYS);
    expect(v1.body).toMatchObject({
      title: 'v1.0',
      description: 'first',
      state: 'open',
      open_issues: 0,
      closed_issues: 0,
      closed_at: null,
      due_on: '2030-05-01T10:00:00Z',
    });
    const later = await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'later' }).expect(201);
    expect(later.body.due_on).toBeNull();
    const old = await t.http
      .post(milestones(repo))
      .set(withToken(owner.token))
      .send({ title: 'v0.9', state: 'closed', due_on: '2020-01-01T00:00:00Z' })
      .expect(201);
    expect(old.body.state).toBe('closed');
    expect(old.body.closed_at).not.toBeNull();
    await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'bad', due_on: 'tomorrow' }).expect(422);
    await t.http
      .post(milestones(repo))
      .set(withToken(owner.token))
      .send({ title: 'x'.repeat(256) })
      .expect(422);

    // By id, else by exact title; soonest due first, those without a date last.
    expect((await t.http.get(`${milestones(repo)}/${v1.body.id}`).expect(200)).body.title).toBe('v1.0');
    expect((await t.http.get(`${milestones(repo)}/v1.0`).expect(200)).body.id).toBe(v1.body.id);
    await t.http.get(`${milestones(repo)}/nothing`).expect(404);
    await t.http.get(`${milestones(repo)}/999999`).expect(404);
    const all = await t.http.get(milestones(repo)).expect(200);
    expect(all.body.map((m: { title: string }) => m.title)).toEqual(['v0.9', 'v1.0', 'later']);
    expect(all.headers['x-total-count']).toBe('3');
    expect((await t.http.get(`${milestones(repo)}?state=open`).expect(200)).body.map((m: { title: string }) => m.title)).toEqual(['v1.0', 'later']);
    expect((await t.http.get(`${milestones(repo)}?state=closed`).expect(200)).body.map((m: { title: string }) => m.title)).toEqual(['v0.9']);
    expect((await t.http.get(`${milestones(repo)}?state=all&name=V1`).expect(200)).body.map((m: { title: string }) => m.title)).toEqual(['v1.0']);
    const paged = await t.http.get(`${milestones(repo)}?limit=1&page=2`).expect(200);
    expect(paged.body.map((m: { title: string }) => m.title)).toEqual(['v1.0']);

    // Edit by title: absent fields stay, an empty title keeps the old one, closing stamps closed_at.
    await t.http
      .patch(`${milestones(repo)}/later`)
      .set(withToken(reader.token))
      .send({ state: 'closed' })
      .expect(403);
    const closed = await t.http
      .patch(`${milestones(repo)}/later`)
      .set(withToken(writer.token))
      .send({ title: '', state: 'closed', due_on: '2031-01-01T00:00:00Z' })
      .expect(200);
    expect(closed.body).toMatchObject({ title: 'later', state: 'closed', description: '', due_on: '2031-01-01T00:00:00Z' });
    expect(closed.body.closed_at).not.toBeNull();
    const reopened = await t.http
      .patch(`${milestones(repo)}/${later.body.id}`)
      .set(withToken(writer.token))
      .send({ state: 'open', description: 'again' })
      .expect(200);
    expect(reopened.body).toMatchObject({ state: 'open', closed_at: null, description: 'again' });

    await t.http
      .delete(`${milestones(repo)}/${old.body.id}`)
      .set(withToken(reader.token))
      .expect(403);
    await t.http
      .delete(`${milestones(repo)}/v0.9`)
      .set(withToken(writer.token))
      .expect(204);
    await t.http.get(`${milestones(repo)}/${old.body.id}`).expect(404);
    await t.http
      .delete(`${milestones(repo)}/v0.9`)
      .set(withToken(writer.token))
      .expect(404);
  });

  it('puts issues on milestones (writers only) and keeps the open and closed counts exact', async () => {
    const repo = await makeRepo(t, owner);
    const a = (await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'alpha' }).expect(201)).body;
    const b = (await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'beta' }).expect(201)).body;
    const other = await makeRepo(t, owner);
    const foreign = (await t.http.post(milestones(other)).set(withToken(owner.token)).send({ title: 'foreign' }).expect(201)).body;

    const one = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'one', milestone: a.id }).expect(201)).body;
    expect(one.milestone).toMatchObject({ id: a.id, title: 'alpha', open_issues: 1, closed_issues: 0 });
    const two = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'two', milestone: a.id, closed: true }).expect(201)).body;
    // A reader's milestone is dropped, as is a milestone of another repository.
    expect((await t.http.post(issues(repo)).set(withToken(reader.token)).send({ title: 'mine', milestone: a.id }).expect(201)).body.milestone).toBeNull();
    const three = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'three', milestone: foreign.id }).expect(201)).body;
    expect(three.milestone).toBeNull();
    expect(await counts(repo, a.id)).toEqual([1, 1]);

    // Close, reopen, move to another milestone, take off, delete: the counts follow.
    await t.http
      .patch(`${issues(repo)}/${one.number}`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    expect(await counts(repo, a.id)).toEqual([0, 2]);
    await t.http
      .patch(`${issues(repo)}/${two.number}`)
      .set(withToken(owner.token))
      .send({ state: 'open', milestone: b.id })
      .expect(201);
    expect(await counts(repo, a.id)).toEqual([0, 1]);
    expect(await counts(repo, b.id)).toEqual([1, 0]);
    await t.http
      .patch(`${issues(repo)}/${three.number}`)
      .set(withToken(owner.token))
      .send({ milestone: b.id })
      .expect(201);
    await t.http
      .patch(`${issues(repo)}/${three.number}`)
      .set(withToken(owner.token))
      .send({ milestone: foreign.id })
      .expect(422);
    await t.http
      .patch(`${issues(repo)}/${three.number}`)
      .set(withToken(reader.token))
      .send({ milestone: 0 })
      .expect(403);
    expect(await counts(repo, b.id)).toEqual([2, 0]);
    const off = await t.http
      .patch(`${issues(repo)}/${three.number}`)
      .set(withToken(owner.token))
      .send({ milestone: 0 })
      .expect(201);
    expect(off.body.milestone).toBeNull();
    expect(await counts(repo, b.id)).toEqual([1, 0]);
    await t.http
      .delete(`${issues(repo)}/${one.number}`)
      .set(withToken(owner.token))
      .expect(204);
    expect(await counts(repo, a.id)).toEqual([0, 0]);

    // Concurrent closes and reopens of issues on one milestone add up.
    const many = await Promise.all(
      Array.from({ length: 6 }, (_, n) =>
        t.http
          .post(issues(repo))
          .set(withToken(owner.token))
          .send({ title: `m${n}`, milestone: a.id }),
      ),
    );
    await Promise.all(
      many.map((answer) =>
        t.http
          .patch(`${issues(repo)}/${answer.body.number}`)
          .set(withToken(owner.token))
          .send({ state: 'closed' }),
      ),
    );
    expect(await counts(repo, a.id)).toEqual([0, 6]);
    const rows = await t.dataSource.query('SELECT COUNT(*) AS n FROM issue WHERE milestone_id = ? AND is_closed = 1', [a.id]);
    expect(Number(rows[0].n)).toBe(6);
  });

  it('filters the issue list by milestone names or ids, and deleting a milestone takes it off its issues', async () => {
    const repo = await makeRepo(t, owner);
    const a = (await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'sprint 1' }).expect(201)).body;
    const b = (await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'sprint 2' }).expect(201)).body;
    const onA = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'on a', milestone: a.id }).expect(201)).body;
    const onB = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'on b', milestone: b.id }).expect(201)).body;
    await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'on none' }).expect(201);
    const numbers = async (query: string) => (await t.http.get(`${issues(repo)}?${query}`).expect(200)).body.map((i: { number: number }) => i.number);
    expect(await numbers('milestones=sprint%201')).toEqual([onA.number]);
    expect(await numbers(`milestones=${b.id}`)).toEqual([onB.number]);
    expect(await numbers(`milestones=sprint%201,${b.id}`)).toEqual([onB.number, onA.number]);
    // Names that match nothing are dropped; if nothing is left, nothing is filtered (as Forgejo).
    expect(await numbers('milestones=sprint%201,nope')).toEqual([onA.number]);
    expect((await numbers('milestones=nope')).length).toBe(3);
    const searched = await t.http
      .get(t.api(`/repos/issues/search?milestones=sprint%202&owner=${owner.name}`))
      .set(withToken(owner.token))
      .expect(200);
    expect(searched.body.map((i: { id: number }) => i.id)).toEqual([onB.id]);

    await t.http
      .delete(`${milestones(repo)}/${a.id}`)
      .set(withToken(owner.token))
      .expect(204);
    expect((await t.http.get(`${issues(repo)}/${onA.number}`).expect(200)).body.milestone).toBeNull();
    const rows = await t.dataSource.query('SELECT COUNT(*) AS n FROM issue WHERE milestone_id = ?', [a.id]);
    expect(Number(rows[0].n)).toBe(0);
  });

  it('takes its milestones with a deleted repository', async () => {
    const repo = await makeRepo(t, owner);
    const gone = (await t.http.post(milestones(repo)).set(withToken(owner.token)).send({ title: 'gone' }).expect(201)).body;
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    const again = await makeRepo(t, owner, { name: repo.name });
    expect((await t.http.get(milestones(again)).expect(200)).body).toEqual([]);
    const rows = await t.dataSource.query('SELECT COUNT(*) AS n FROM milestone WHERE id = ?', [gone.id]);
    expect(Number(rows[0].n)).toBe(0);
  });
});
