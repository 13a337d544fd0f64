import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

type Entry = Record<string, any>;

/** One line per timeline entry: its type and what it names, so that a whole timeline compares as one list. */
function line(entry: Entry): string {
  switch (entry.type) {
    case 'label':
      return `label ${entry.body === '1' ? '+' : '-'}${entry.label?.name ?? '?'}`;
    case 'milestone':
      return `milestone ${entry.old_milestone?.title ?? '-'} > ${entry.milestone?.title ?? '-'}`;
    case 'assignees':
      return `assignees ${entry.removed_assignee ? '-' : '+'}${entry.assignee?.login ?? '?'}`;
    case 'change_title':
      return `change_title ${entry.old_title} > ${entry.new_title}`;
    case 'change_issue_ref':
      return `change_issue_ref ${entry.old_ref} > ${entry.new_ref}`;
    case 'added_deadline':
    case 'modified_deadline':
    case 'removed_deadline':
      return `${entry.type} ${entry.body}`;
    case 'add_dependency':
    case 'remove_dependency':
      return `${entry.type} ${entry.dependent_issue ? `#${entry.dependent_issue.number}` : 'null'}`;
    default:
      return entry.type;
  }
}

describe('issue timeline entries of labels, milestones, assignees, titles, due dates, pins and dependencies', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer] = [await makeUser(t), await makeUser(t)];
  });
  afterAll(() => t.close());

  const as = (user: TestUser) => withToken(user.token);
  const timeline = async (path: string, user: TestUser = owner): Promise<Entry[]> => (await t.http.get(`${path}/timeline`).set(as(user)).expect(200)).body;
  const lines = async (path: string, user: TestUser = owner) => (await timeline(path, user)).map(line);

  async function repoWithMeta(user: TestUser, options: { org?: string; autoInit?: boolean } = {}) {
    const repo = await makeRepo(t, user, options);
    const api = t.api(`/repos/${repo.full_name}`);
    const label = async (name: string, exclusive = false) =>
      (await t.http.post(`${api}/labels`).set(as(user)).send({ name, color: '#ee0701', exclusive }).expect(201)).body;
    const labels = { bug: await label('bug'), docs: await label('docs'), high: await label('priority/high', true), low: await label('priority/low', true) };
    const milestone = async (title: string) => (await t.http.post(`${api}/milestones`).set(as(user)).send({ title }).expect(201)).body;
    const milestones = { v1: await milestone('v1'), v2: await milestone('v2') };
    await t.http.put(`${api}/collaborators/${writer.name}`).set(as(user)).send({ permission: 'write' }).expect(204);
    return { repo, api, labels, milestones };
  }

  it('an edit writes title, ref, due date, assignees, milestone and state entries in Forgejo’s order, by the doer', async () => {
    const { api, milestones } = await repoWithMeta(owner);
    await t.http.post(`${api}/issues`).set(as(owner)).send({ title: 'first' }).expect(201);
    const issue = `${api}/issues/1`;
    await t.http
      .patch(issue)
      .set(as(writer))
      .send({
        title: 'second',
        ref: 'refs/heads/main',
        due_date: '2026-12-24T10:00:00Z',
        assignees: [owner.name, writer.name],
        milestone: milestones.v1.id,
        state: 'closed',
      })
      .expect(201);
    await t.http
      .patch(issue)
      .set(as(owner))
      .send({ due_date: '2026-12-31T10:00:00Z', assignees: [writer.name], milestone: milestones.v2.id, state: 'open' })
      .expect(201);
    await t.http.patch(issue).set(as(owner)).send({ unset_due_date: true, assignees: [], milestone: 0, title: 'second' }).expect(201);
    // Nothing changed, nothing written.
    await t.http.patch(issue).set(as(owner)).send({ title: 'second', milestone: 0, assignees: [], ref: 'refs/heads/main' }).expect(201);

    const entries = await timeline(issue);
    expect(entries.map(line)).toEqual([
      'change_title first > second',
      'change_issue_ref  > refs/heads/main',
      'added_deadline 2026-12-24',
      `assignees +${owner.name}`,
      `assignees +${writer.name}`,
      'milestone - > v1',
      'close',
      'modified_deadline 2026-12-31|2026-12-24',
      `assignees -${owner.name}`,
      'milestone v1 > v2',
      'reopen',
      'removed_deadline 2026-12-31',
      `assignees -${writer.name}`,
      'milestone v2 > -',
    ]);
    expect(entries.slice(0, 7).map((entry) => entry.user.login)).toEqual(Array(7).fill(writer.name));
    expect(entries[0]).toMatchObject({
      old_title: 'first',
      new_title: 'second',
      body: '',
      label: null,
      assignee: null,
      milestone: null,
      dependent_issue: null,
    });
    expect(entries[5].milestone).toMatchObject({ id: milestones.v1.id, title: 'v1', state: 'open' });
    expect(entries[3]).toMatchObject({ removed_assignee: false, assignee: { login: owner.name } });
    // Plain comments are still what `comments` counts and the comment routes list.
    const read = (await t.http.get(issue).expect(200)).body;
    expect(read.comments).toBe(0);
    expect((await t.http.get(`${issue}/comments`).expect(200)).body).toEqual([]);
  });

  it('POST …/deadline writes added, modified and removed entries; the same date again writes none', async () => {
    const { api } = await repoWithMeta(owner);
    await t.http.post(`${api}/issues`).set(as(owner)).send({ title: 'due' }).expect(201);
    const issue = `${api}/issues/1`;
    await t.http.post(`${issue}/deadline`).set(as(writer)).send({ due_date: '2027-01-05T00:00:00Z' }).expect(201);
    await t.http.post(`${issue}/deadline`).set(as(writer)).send({ due_date: '2027-01-05T08:00:00Z' }).expect(201);
    await t.http.post(`${issue}/deadline`).set(as(writer)).send({ due_date: '2027-02-01T00:00:00Z' }).expect(201);
    await t.http.post(`${issue}/deadline`).set(as(writer)).send({ due_date: null }).expect(201);
    expect(await lines(issue)).toEqual(['added_deadline 2027-01-05', 'modified_deadline 2027-02-01|2027-01-05', 'removed_deadline 2027-02-01']);
  });

  it('a new issue’s milestone, labels (by id), assignees and close are entries by its poster', async () => {
    const { api, labels, milestones } = await repoWithMeta(owner);
    await t.http
      .post(`${api}/issues`)
      .set(as(owner))
      .send({
        title: 'born labelled',
        labels: [labels.low.id, labels.docs.id, labels.bug.id, labels.high.id],
        assignees: [writer.name],
        milestone: milestones.v1.id,
        closed: true,
      })
      .expect(201);
    expect(await lines(`${api}/issues/1`)).toEqual([
      'milestone - > v1',
      'label +bug',
      'label +docs',
      'label +priority/high',
      `assignees +${writer.name}`,
      'close',
    ]);
    // A reader's writer-only fields are dropped, and so write no entries.
    const reader = await makeUser(t);
    await t.http
      .post(`${api}/issues`)
      .set(as(reader))
      .send({ title: 'plain', labels: [labels.bug.id], milestone: milestones.v1.id })
      .expect(201);
    expect(await lines(`${api}/issues/2`)).toEqual([]);
  });

  it('the label routes write one entry per label put on or taken off, exclusive scopes included', async () => {
    const { repo, api, labels } = await repoWithMeta(owner);
    await t.http.post(`${api}/issues`).set(as(owner)).send({ title: 'labels' }).expect(201);
    const issue = `${api}/issues/1`;
    await t.http
      .post(`${issue}/labels`)
      .set(as(writer))
      .send({ labels: ['priority/high', 'bug'] })
      .expect(200);
    // Already on: nothing; an exclusive sibling first takes the other off.
    await t.http
      .post(`${issue}/labels`)
      .set(as(writer))
      .send({ labels: [labels.bug.id, labels.low.id] })
      .expect(200);
    await t.http
      .put(`${issue}/labels`)
      .set(as(writer))
      .send({ labels: [labels.docs.id, labels.high.id] })
      .expect(200);
    await t.http.delete(`${issue}/labels/${labels.docs.id}`).set(as(writer)).expect(204);
    await t.http.delete(`${issue}/labels/${labels.docs.id}`).set(as(writer)).expect(204);
    await t.http
      .post(`${issue}/labels`)
      .set(as(writer))
      .send({ labels: [labels.bug.id] })
      .expect(200);
    await t.http.delete(`${issue}/labels`).set(as(writer)).expect(204);
    const entries = await timeline(issue);
    expect(entries.map(line)).toEqual([
      'label +priority/high',
      'label +bug',
      'label -priority/high',
      'label +priority/low',
      'label +docs',
      'label -priority/low',
      'label +priority/high',
      'label -bug',
      'label -docs',
      'label +bug',
      'label -bug',
      'label -priority/high',
    ]);
    expect(entries[0].label).toEqual({
      id: labels.high.id,
      name: 'priority/high',
      exclusive: true,
      is_archived: false,
      color: 'ee0701',
      description: '',
      url: `http://anvil.test/api/v1/repos/${repo.full_name}/labels/${labels.high.id}`,
    });
    expect(entries.every((entry) => entry.user.login === writer.name)).toBe(true);
    // A deleted label leaves its entries, naming nothing.
    await t.http.delete(`${api}/labels/${labels.bug.id}`).set(as(owner)).expect(204);
    expect((await lines(issue))[1]).toBe('label +?');
  });

  it('organisation labels are named with the organisation’s URL', async () => {
    const org = await makeOrg(t, owner.user);
    const { api } = await repoWithMeta(owner, { org: org.name });
    const orgLabel = (
      await t.http
        .post(t.api(`/orgs/${org.name}/labels`))
        .set(as(owner))
        .send({ name: 'org-wide', color: '#00aabb' })
        .expect(201)
    ).body;
    await t.http.post(`${api}/issues`).set(as(owner)).send({ title: 'org' }).expect(201);
    await t.http
      .post(`${api}/issues/1/labels`)
      .set(as(owner))
      .send({ labels: [orgLabel.id] })
      .expect(200);
    const [entry] = await timeline(`${api}/issues/1`);
    expect(entry.label).toMatchObject({ id: orgLabel.id, name: 'org-wide', url: `http://anvil.test/api/v1/orgs/${org.name}/labels/${orgLabel.id}` });
  });

  it('pin and unpin are entries (a move is not); new_pin_allowed says whether a fourth may be pinned', async () => {
    const { api } = await repoWithMeta(owner);
    for (const title of ['a', 'b', 'c', 'd']) await t.http.post(`${api}/issues`).set(as(owner)).send({ title }).expect(201);
    expect((await t.http.get(`${api}/new_pin_allowed`).expect(200)).body).toEqual({ issues: true, pull_requests: true });
    for (const index of [1, 2, 3]) await t.http.post(`${api}/issues/${index}/pin`).set(as(owner)).expect(204);
    expect((await t.http.get(`${api}/new_pin_allowed`).expect(200)).body).toEqual({ issues: false, pull_requests: true });
    await t.http.post(`${api}/issues/4/pin`).set(as(owner)).expect(400);
    await t.http.post(`${api}/issues/1/pin`).set(as(owner)).expect(204);
    await t.http.patch(`${api}/issues/1/pin/3`).set(as(owner)).expect(204);
    await t.http.delete(`${api}/issues/1/pin`).set(as(owner)).expect(204);
    await t.http.delete(`${api}/issues/1/pin`).set(as(owner)).expect(204);
    expect((await t.http.get(`${api}/new_pin_allowed`).set(as(writer)).expect(200)).body).toEqual({ issues: true, pull_requests: true });
    expect(await lines(`${api}/issues/1`)).toEqual(['pin', 'unpin']);
    expect(await lines(`${api}/issues/4`)).toEqual([]);
    const hidden = await makeRepo(t, owner, { private: true });
    await t.http
      .get(t.api(`/repos/${hidden.full_name}/new_pin_allowed`))
      .set(as(writer))
      .expect(404);
  });

  it('a dependency made or undone is an entry on both issues, naming the other; an unseen one is null', async () => {
    const { api } = await repoWithMeta(owner);
    for (const title of ['waits', 'awaited']) await t.http.post(`${api}/issues`).set(as(owner)).send({ title }).expect(201);
    await t.http.post(`${api}/issues/1/dependencies`).set(as(writer)).send({ index: 2 }).expect(201);
    await t.http.post(`${api}/issues/1/dependencies`).set(as(writer)).send({ index: 2 }).expect(201);
    await t.http.delete(`${api}/issues/2/blocks`).set(as(writer)).send({ index: 1 }).expect(201);
    await t.http.delete(`${api}/issues/2/blocks`).set(as(writer)).send({ index: 1 }).expect(201);
    expect(await lines(`${api}/issues/1`)).toEqual(['add_dependency #2', 'remove_dependency #2']);
    expect(await lines(`${api}/issues/2`)).toEqual(['add_dependency #1', 'remove_dependency #1']);
    const [entry] = await timeline(`${api}/issues/1`);
    expect(entry).toMatchObject({ user: { login: writer.name }, dependent_issue: { number: 2, title: 'awaited', pull_request: null } });

    // Across repositories: a private repository's issue is named only to those who may read it.
    const secret = await makeRepo(t, owner, { private: true });
    await t.http
      .post(t.api(`/repos/${secret.full_name}/issues`))
      .set(as(owner))
      .send({ title: 'hidden' })
      .expect(201);
    await t.http.post(`${api}/issues/1/dependencies`).set(as(owner)).send({ owner: owner.name, repo: secret.name, index: 1 }).expect(201);
    expect((await lines(`${api}/issues/1`, owner)).slice(2)).toEqual(['add_dependency #1']);
    expect((await lines(`${api}/issues/1`, writer)).slice(2)).toEqual(['add_dependency null']);
    expect(await lines(t.api(`/repos/${secret.full_name}/issues/1`))).toEqual(['add_dependency #1']);
  });

  it('a pull request’s edit writes the same entries: title, assignees, milestone, labels, state', async () => {
    const { repo, api, labels, milestones } = await repoWithMeta(owner, { autoInit: true });
    await t.http.post(`${api}/branches`).set(as(owner)).send({ new_branch_name: 'topic' }).expect(201);
    await t.http
      .post(`${api}/contents/topic.txt`)
      .set(as(owner))
      .send({ branch: 'topic', content: Buffer.from('topic\n').toString('base64') })
      .expect(201);
    const pull = (
      await t.http
        .post(`${api}/pulls`)
        .set(as(owner))
        .send({ base: 'main', head: 'topic', title: 'change', labels: [labels.bug.id] })
        .expect(201)
    ).body;
    await t.http
      .patch(`${api}/pulls/${pull.number}`)
      .set(as(writer))
      .send({ title: 'a change', assignees: [owner.name], milestone: milestones.v2.id, labels: [labels.docs.id], state: 'closed' })
      .expect(201);
    // On a pull request, milestone 0 leaves the milestone as it is, as Forgejo.
    await t.http.patch(`${api}/pulls/${pull.number}`).set(as(writer)).send({ milestone: 0 }).expect(201);
    const entries = await timeline(`${api}/issues/${pull.number}`);
    expect(entries.map(line)).toEqual([
      'label +bug',
      'change_title change > a change',
      `assignees +${owner.name}`,
      'milestone - > v2',
      'label +docs',
      'label -bug',
      'close',
    ]);
    expect(entries[1]).toMatchObject({ pull_request_url: `http://anvil.test/${repo.full_name}/pulls/${pull.number}`, issue_url: '' });
    expect((await t.http.get(`${api}/pulls/${pull.number}`).expect(200)).body.milestone).toMatchObject({ title: 'v2' });
  });
});

describe('ISSUE_MAX_PINNED', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ ISSUE_MAX_PINNED: '1' });
  });
  afterAll(() => t.close());

  it('bounds the pins of a repository, and new_pin_allowed says so', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner);
    const api = t.api(`/repos/${repo.full_name}`);
    for (const title of ['a', 'b']) await t.http.post(`${api}/issues`).set(withToken(owner.token)).send({ title }).expect(201);
    await t.http.post(`${api}/issues/1/pin`).set(withToken(owner.token)).expect(204);
    expect((await t.http.get(`${api}/new_pin_allowed`).expect(200)).body).toEqual({ issues: false, pull_requests: true });
    const refused = await t.http.post(`${api}/issues/2/pin`).set(withToken(owner.token)).expect(400);
    expect(refused.body.message).toBe('the max number of pinned issues has been readched');
  });
});
