import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

const ISSUE_KEYS = [
  'id',
  'url',
  'html_url',
  'number',
  'user',
  'original_author',
  'original_author_id',
  'title',
  'body',
  'ref',
  'assets',
  'labels',
  'milestone',
  'assignee',
  'assignees',
  'state',
  'is_locked',
  'comments',
  'created_at',
  'updated_at',
  'closed_at',
  'due_date',
  'pull_request',
  'repository',
  'pin_order',
];

describe('issues: /repos/{o}/{r}/issues and /repos/issues/search', () => {
  let t: TestApp;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    [owner, writer, reader, stranger] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(() => t.close());

  const issues = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/issues`);

  it('puts the built-in tracker on every new repository, switchable to an external one or off', async () => {
    const repo = await makeRepo(t, owner);
    expect(repo).toMatchObject({
      has_issues: true,
      open_issues_count: 0,
      internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true },
    });
    expect(repo.external_tracker).toBeUndefined();
    expect(repo.external_wiki).toBeUndefined();
    const edit = (body: object) =>
      t.http
        .patch(t.api(`/repos/${repo.full_name}`))
        .set(withToken(owner.token))
        .send(body);
    expect((await edit({ external_tracker: { external_tracker_url: 'http://127.0.0.1/x' } }).expect(422)).body.message).toBe('External tracker URL not valid');
    expect(
      (
        await edit({
          external_tracker: { external_tracker_url: 'https://bugs.example.com', external_tracker_format: 'https://bugs.example.com/{index' },
        }).expect(422)
      ).body.message,
    ).toBe('External tracker URL format not valid');
    const external = await edit({
      external_tracker: {
        external_tracker_url: 'https://bugs.example.com',
        external_tracker_format: 'https://bugs.example.com/{user}/{repo}/{index}',
        external_tracker_style: 'numeric',
      },
    }).expect(200);
    expect(external.body.internal_tracker).toBeUndefined();
    expect(external.body.external_tracker).toEqual({
      external_tracker_url: 'https://bugs.example.com',
      external_tracker_format: 'https://bugs.example.com/{user}/{repo}/{index}',
      external_tracker_style: 'numeric',
      external_tracker_regexp_pattern: '',
    });
    await t.http.get(issues(repo)).expect(404);
    const off = await edit({ has_issues: false }).expect(200);
    expect(off.body).toMatchObject({ has_issues: false });
    expect(off.body.internal_tracker).toBeUndefined();
    expect(off.body.external_tracker).toBeUndefined();
    await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'x' }).expect(404);
    const on = await edit({
      has_issues: true,
      internal_tracker: { enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true },
    }).expect(200);
    expect(on.body.internal_tracker).toEqual({ enable_time_tracker: false, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true });
    await t.http.get(issues(repo)).expect(200);
  });

  it('creates, reads, lists, edits, closes, reopens and deletes issues with Forgejo’s Issue JSON and a live open count', async () => {
    const repo = await makeRepo(t, owner);
    const created = await t.http
      .post(issues(repo))
      .set(withToken(owner.token))
      .send({ title: '  First bug  ', body: 'It breaks when @' + reader.name + ' clicks' })
      .expect(201);
    expect(Object.keys(created.body)).toEqual(ISSUE_KEYS);
    expect(created.body).toMatchObject({
      number: 1,
      title: 'First bug',
      state: 'open',
      comments: 0,
      labels: [],
      assets: [],
      milestone: null,
      assignee: null,
      assignees: null,
      closed_at: null,
      due_date: null,
      pull_request: null,
      original_author: '',
      is_locked: false,
      pin_order: 0,
      url: `http://anvil.test/api/v1/repos/${repo.full_name}/issues/1`,
      html_url: `http://anvil.test/${repo.full_name}/issues/1`,
      repository: { id: repo.id, name: repo.name, owner: owner.name, full_name: repo.full_name },
    });
    expect(created.body.user.login).toBe(owner.name);
    const second = await t.http
      .post(issues(repo))
      .set(withToken(owner.token))
      .send({ title: 'x'.repeat(300), body: 'second' })
      .expect(201);
    expect(second.body.number).toBe(2);
    expect(Buffer.byteLength(second.body.title)).toBe(255);
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_issues_count).toBe(2);
    expect(
      (
        await t.http
          .get(`${issues(repo)}/1`)
          .set(withToken(owner.token))
          .expect(200)
      ).body,
    ).toEqual(created.body);
    await t.http.get(`${issues(repo)}/99`).expect(404);
    await t.http.get(`${issues(repo)}/abc`).expect(404);

    const listed = await t.http.get(issues(repo)).expect(200);
    expect(listed.body.map((issue: { number: number }) => issue.number)).toEqual([2, 1]);
    expect(listed.headers['x-total-count']).toBe('2');
    const paged = await t.http.get(`${issues(repo)}?limit=1`).expect(200);
    expect(paged.body.map((issue: { number: number }) => issue.number)).toEqual([2]);
    expect(paged.headers.link).toContain('rel="next"');

    const closed = await t.http
      .patch(`${issues(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'closed', title: 'First bug, renamed' })
      .expect(201);
    expect(closed.body).toMatchObject({ state: 'closed', title: 'First bug, renamed' });
    expect(closed.body.closed_at).not.toBeNull();
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_issues_count).toBe(1);
    expect((await t.http.get(issues(repo)).expect(200)).body.map((issue: { number: number }) => issue.number)).toEqual([2]);
    expect((await t.http.get(`${issues(repo)}?state=closed`).expect(200)).body.map((issue: { number: number }) => issue.number)).toEqual([1]);
    expect((await t.http.get(`${issues(repo)}?state=all`).expect(200)).body).toHaveLength(2);
    const reopened = await t.http
      .patch(`${issues(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'open' })
      .expect(201);
    expect(reopened.body).toMatchObject({ state: 'open', closed_at: null });

    // The word index: each query word begins a word of the title or body; mentions are recorded.
    expect((await t.http.get(`${issues(repo)}?q=renam`).expect(200)).body.map((issue: { number: number }) => issue.number)).toEqual([1]);
    expect((await t.http.get(`${issues(repo)}?q=second`).expect(200)).body.map((issue: { number: number }) => issue.number)).toEqual([2]);
    expect((await t.http.get(`${issues(repo)}?q=nothing+like+this`).expect(200)).body).toEqual([]);
    expect((await t.http.get(`${issues(repo)}?mentioned_by=${reader.name}`).expect(200)).body.map((issue: { number: number }) => issue.number)).toEqual([1]);
    expect((await t.http.get(`${issues(repo)}?created_by=${owner.name}&state=all`).expect(200)).body).toHaveLength(2);
    expect((await t.http.get(`${issues(repo)}?created_by=${stranger.name}`).expect(200)).body).toEqual([]);
    await t.http.get(`${issues(repo)}?created_by=no-such-user-here`).expect(404);
    await t.http.get(`${issues(repo)}?since=yesterday`).expect(422);
    expect((await t.http.get(`${issues(repo)}?since=2999-01-01T00:00:00Z`).expect(200)).body).toEqual([]);
    expect((await t.http.get(`${issues(repo)}?type=pulls`).expect(200)).body).toEqual([]);

    const deadline = await t.http
      .post(`${issues(repo)}/2/deadline`)
      .set(withToken(owner.token))
      .send({ due_date: '2030-05-17T08:00:00Z' })
      .expect(201);
    expect(deadline.body).toEqual({ due_date: '2030-05-17T23:59:59Z' });
    expect((await t.http.get(`${issues(repo)}/2`).expect(200)).body.due_date).toBe('2030-05-17T23:59:59Z');
    await t.http
      .post(`${issues(repo)}/2/deadline`)
      .set(withToken(owner.token))
      .send({ due_date: null })
      .expect(201, { due_date: null });

    await t.http
      .delete(`${issues(repo)}/2`)
      .set(withToken(owner.token))
      .expect(204);
    await t.http.get(`${issues(repo)}/2`).expect(404);
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_issues_count).toBe(1);
    // Numbers are never given twice, not even after a deletion.
    expect((await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'third' }).expect(201)).body.number).toBe(3);
  });

  it('applies the access rules: readers open and edit their own, writers set the rest, admins delete', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const label = await t.http
      .post(t.api(`/repos/${repo.full_name}/labels`))
      .set(withToken(owner.token))
      .send({ name: 'bug', color: '#ff0000' })
      .expect(201);
    await t.http.post(issues(repo)).send({ title: 'anonymous' }).expect(401);
    // A reader's writer-only fields are dropped without an error.
    const byReader = await t.http
      .post(issues(repo))
      .set(withToken(reader.token))
      .send({ title: 'from a reader', labels: [label.body.id], assignees: [writer.name], due_date: '2030-01-01T00:00:00Z' })
      .expect(201);
    expect(byReader.body).toMatchObject({ labels: [], assignees: null, due_date: null });
    const byWriter = await t.http
      .post(issues(repo))
      .set(withToken(writer.token))
      .send({ title: 'from a writer', labels: [label.body.id], assignees: [writer.name, owner.name] })
      .expect(201);
    expect(byWriter.body.labels.map((l: { name: string }) => l.name)).toEqual(['bug']);
    expect(byWriter.body.assignees.map((u: { login: string }) => u.login)).toEqual([writer.name, owner.name]);
    expect(byWriter.body.assignee.login).toBe(writer.name);
    expect((await t.http.get(`${issues(repo)}?labels=bug`).expect(200)).body.map((i: { number: number }) => i.number)).toEqual([byWriter.body.number]);
    expect((await t.http.get(`${issues(repo)}?labels=bug,nosuchlabel`).expect(200)).body).toEqual([]);
    expect((await t.http.get(`${issues(repo)}?assigned_by=${owner.name}`).expect(200)).body.map((i: { number: number }) => i.number)).toEqual([
      byWriter.body.number,
    ]);
    await t.http
      .post(issues(repo))
      .set(withToken(writer.token))
      .send({ title: 'x', assignees: [stranger.name] })
      .expect(422);
    await t.http
      .post(issues(repo))
      .set(withToken(writer.token))
      .send({ title: 'x', assignees: ['no-such-user-here'] })
      .expect(422);
    await t.http.post(issues(repo)).set(withToken(writer.token)).send({ title: '   ' }).expect(422);
    await t.http
      .post(issues(repo))
      .set(withToken(writer.token))
      .send({ title: 'big', body: 'x'.repeat(4 * 1024 * 1024 + 1) })
      .expect(422);

    // The poster edits their own issue; another reader may not; the writer may.
    await t.http
      .patch(`${issues(repo)}/${byReader.body.number}`)
      .set(withToken(reader.token))
      .send({ body: 'edited by the poster', state: 'closed' })
      .expect(201);
    await t.http
      .patch(`${issues(repo)}/${byWriter.body.number}`)
      .set(withToken(reader.token))
      .send({ body: 'not mine' })
      .expect(403);
    await t.http
      .patch(`${issues(repo)}/${byReader.body.number}`)
      .set(withToken(writer.token))
      .send({ state: 'open', assignees: [] })
      .expect(201);
    // Deletion is for repository admins only.
    await t.http
      .delete(`${issues(repo)}/${byReader.body.number}`)
      .set(withToken(writer.token))
      .expect(403);
    await t.http
      .delete(`${issues(repo)}/${byReader.body.number}`)
      .set(withToken(reader.token))
      .expect(403);
    await t.http
      .post(`${issues(repo)}/${byReader.body.number}/deadline`)
      .set(withToken(reader.token))
      .send({ due_date: '2030-01-01T00:00:00Z' })
      .expect(403);

    // Token scopes: read:issue reads, and writing needs write:issue.
    const readOnly = await makeToken(t, reader.user, ['read:issue', 'read:repository']);
    await t.http.get(issues(repo)).set(withToken(readOnly)).expect(200);
    const refused = await t.http.post(issues(repo)).set(withToken(readOnly)).send({ title: 'x' }).expect(403);
    expect(refused.body.message).toContain('write:issue');

    // Private repositories are 404 to outsiders, in lists, issues and the search.
    const hidden = await makeRepo(t, owner, { private: true });
    const secret = await t.http.post(issues(hidden)).set(withToken(owner.token)).send({ title: 'secret plans' }).expect(201);
    await t.http.get(issues(hidden)).set(withToken(stranger.token)).expect(404);
    await t.http.get(`${issues(hidden)}/1`).expect(404);
    await t.http.post(issues(hidden)).set(withToken(stranger.token)).send({ title: 'x' }).expect(404);
    const ownSearch = await t.http.get(t.api('/repos/issues/search?q=secret')).set(withToken(owner.token)).expect(200);
    expect(ownSearch.body.map((i: { id: number }) => i.id)).toEqual([secret.body.id]);
    expect((await t.http.get(t.api('/repos/issues/search?q=secret')).set(withToken(stranger.token)).expect(200)).body).toEqual([]);
    expect((await t.http.get(t.api('/repos/issues/search?q=secret')).expect(200)).body).toEqual([]);
    const publicOnly = await makeToken(t, owner.user, ['read:issue', 'read:repository', 'public-only']);
    expect((await t.http.get(t.api('/repos/issues/search?q=secret')).set(withToken(publicOnly)).expect(200)).body).toEqual([]);
    await t.http.get(issues(hidden)).set(withToken(publicOnly)).expect(403);

    // An archived repository takes no new issues (423), and its issues stay readable.
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ archived: true })
      .expect(200);
    await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'late' }).expect(423);
    await t.http.get(issues(repo)).expect(200);
  });

  it('gives concurrent creates dense, distinct numbers', async () => {
    const repo = await makeRepo(t, owner);
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, n) =>
        t.http
          .post(issues(repo))
          .set(withToken(owner.token))
          .send({ title: `race ${n}` }),
      ),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(12).fill(201));
    expect(answers.map((answer) => answer.body.number).sort((a, b) => a - b)).toEqual(Array.from({ length: 12 }, (_, n) => n + 1));
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_issues_count).toBe(12);
  });

  it('totals lists of every state and type of issues and pull requests as they open, close, reopen and go', async () => {
    const repo = await makeRepo(t, owner, { autoInit: true });
    const full = repo.full_name;
    const as = withToken(owner.token);
    const numbers: number[] = [];
    for (let n = 0; n < 5; n++)
      numbers.push(
        (
          await t.http
            .post(issues(repo))
            .set(as)
            .send({ title: `issue ${n}` })
            .expect(201)
        ).body.number,
      );
    for (let n = 0; n < 3; n++) {
      await t.http
        .post(t.api(`/repos/${full}/contents/pr-${n}.txt`))
        .set(as)
        .send({ content: Buffer.from(`change ${n}`).toString('base64'), new_branch: `topic-${n}` })
        .expect(201);
      numbers.push(
        (
          await t.http
            .post(t.api(`/repos/${full}/pulls`))
            .set(as)
            .send({ head: `topic-${n}`, base: 'main', title: `pull ${n}` })
            .expect(201)
        ).body.number,
      );
    }
    // Labels go on before the states change: a list narrowed by labels counts from the links, which must follow.
    const labelIds: Record<string, number> = {};
    for (const name of ['a', 'b'])
      labelIds[name] = (
        await t.http
          .post(t.api(`/repos/${full}/labels`))
          .set(as)
          .send({ name, color: '#00aabb' })
          .expect(201)
      ).body.id;
    for (const [at, number] of numbers.entries()) {
      const names = at % 2 === 0 ? ['a', 'b'] : ['a'];
      await t.http
        .post(t.api(`/repos/${full}/issues/${number}/labels`))
        .set(as)
        .send({ labels: names.map((name) => labelIds[name]) })
        .expect(200);
    }
    const setState = (number: number, state: string) =>
      t.http
        .patch(t.api(`/repos/${full}/issues/${number}`))
        .set(as)
        .send({ state })
        .expect(201);
    await setState(numbers[0], 'closed');
    await setState(numbers[1], 'closed');
    await setState(numbers[1], 'open');
    await setState(numbers[2], 'closed');
    await setState(numbers[5], 'closed');
    await t.http
      .delete(t.api(`/repos/${full}/issues/${numbers[3]}`))
      .set(as)
      .expect(204);
    // Each total must be what the list really holds, whether counted or read off the repository's counters.
    for (const state of ['open', 'closed', 'all']) {
      for (const type of ['', 'issues', 'pulls']) {
        for (const labels of ['', 'a', 'b', 'a,b']) {
          const listed = await t.http.get(`${issues(repo)}?state=${state}&type=${type}&labels=${labels}&limit=50`).expect(200);
          const held = listed.body.filter(
            (issue: any) =>
              (state === 'all' || issue.state === state) &&
              (type === '' || (issue.pull_request !== null) === (type === 'pulls')) &&
              labels
                .split(',')
                .filter(Boolean)
                .every((name) => issue.labels.some((label: { name: string }) => label.name === name)),
          );
          expect([state, type, labels, listed.headers['x-total-count']]).toEqual([state, type, labels, String(listed.body.length)]);
          expect(held).toHaveLength(listed.body.length);
        }
      }
    }
    // 'b' went on the even ones (0, 2, 4, 6), and 0 and 2 were closed since: the links followed their issues.
    const bOpen = await t.http.get(`${issues(repo)}?state=open&labels=b&limit=50`).expect(200);
    expect(bOpen.body.map((issue: { number: number }) => issue.number).sort()).toEqual([numbers[4], numbers[6]].sort());
    const expected = { open: 2 + 2, closed: 2 + 1, all: 4 + 3 };
    for (const [state, total] of Object.entries(expected)) {
      expect((await t.http.get(`${issues(repo)}?state=${state}&limit=1`).expect(200)).headers['x-total-count']).toBe(String(total));
    }
    const pullsOpen = await t.http.get(t.api(`/repos/${full}/pulls?state=open&limit=1`)).expect(200);
    expect([pullsOpen.headers['x-total-count'], pullsOpen.body.length]).toEqual(['2', 1]);
    const pullsAll = await t.http.get(t.api(`/repos/${full}/pulls?state=all`)).expect(200);
    expect([pullsAll.headers['x-total-count'], pullsAll.body.length]).toEqual(['3', 3]);
  });

  it('takes issues, labels links and numbers with a deleted repository', async () => {
    const repo = await makeRepo(t, owner);
    const label = await t.http
      .post(t.api(`/repos/${repo.full_name}/labels`))
      .set(withToken(owner.token))
      .send({ name: 'gone', color: '#000000' })
      .expect(201);
    await t.http
      .post(issues(repo))
      .set(withToken(owner.token))
      .send({ title: 'doomed words', labels: [label.body.id] })
      .expect(201);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    const again = await makeRepo(t, owner, { name: repo.name });
    expect((await t.http.get(issues(again)).expect(200)).body).toEqual([]);
    expect((await t.http.post(issues(again)).set(withToken(owner.token)).send({ title: 'fresh' }).expect(201)).body.number).toBe(1);
    const rows = await t.dataSource.query('SELECT COUNT(*) AS n FROM issue_label WHERE label_id = ?', [label.body.id]);
    expect(Number(rows[0].n)).toBe(0);
    const words = await t.dataSource.query("SELECT COUNT(*) AS n FROM issue_word WHERE word = 'doomed'");
    expect(Number(words[0].n)).toBe(0);
  });

  it('comments: per issue and per repository, edited and deleted by poster or writer, counted on the issue', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const first = await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'talk here' }).expect(201);
    const second = await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'and here' }).expect(201);
    const comment = await t.http
      .post(`${issues(repo)}/1/comments`)
      .set(withToken(reader.token))
      .send({ body: 'first!' })
      .expect(201);
    expect(Object.keys(comment.body)).toEqual([
      'id',
      'html_url',
      'pull_request_url',
      'issue_url',
      'user',
      'original_author',
      'original_author_id',
      'body',
      'assets',
      'created_at',
      'updated_at',
    ]);
    expect(comment.body).toMatchObject({
      body: 'first!',
      html_url: `${first.body.html_url}#issuecomment-${comment.body.id}`,
      issue_url: first.body.html_url,
      pull_request_url: '',
      assets: [],
      user: { login: reader.name },
    });
    await t.http
      .post(`${issues(repo)}/2/comments`)
      .set(withToken(writer.token))
      .send({ body: 'on the second' })
      .expect(201);
    await t.http
      .post(`${issues(repo)}/1/comments`)
      .set(withToken(owner.token))
      .send({ body: 'second reply' })
      .expect(201);
    await t.http
      .post(`${issues(repo)}/1/comments`)
      .send({ body: 'anonymous' })
      .expect(401);
    await t.http
      .post(`${issues(repo)}/1/comments`)
      .set(withToken(owner.token))
      .send({})
      .expect(422);
    await t.http
      .post(`${issues(repo)}/1/comments`)
      .set(withToken(owner.token))
      .send({ body: 'x'.repeat(4 * 1024 * 1024 + 1) })
      .expect(422);
    await t.http
      .post(`${issues(repo)}/99/comments`)
      .set(withToken(owner.token))
      .send({ body: 'nowhere' })
      .expect(404);
    expect((await t.http.get(`${issues(repo)}/1`).expect(200)).body.comments).toBe(2);
    expect((await t.http.get(`${issues(repo)}/1/comments`).expect(200)).body.map((c: { body: string }) => c.body)).toEqual(['first!', 'second reply']);
    const all = await t.http.get(`${issues(repo)}/comments`).expect(200);
    expect(all.body.map((c: { body: string }) => c.body)).toEqual(['first!', 'on the second', 'second reply']);
    expect(all.headers['x-total-count']).toBe('3');
    expect((await t.http.get(`${issues(repo)}/comments?limit=1&page=2`).expect(200)).body.map((c: { body: string }) => c.body)).toEqual(['on the second']);
    await t.http.get(`${issues(repo)}/comments?since=soon`).expect(422);
    expect((await t.http.get(`${issues(repo)}/comments/${comment.body.id}`).expect(200)).body.body).toBe('first!');

    // The poster or a writer edits and deletes; another reader may not.
    await t.http
      .patch(`${issues(repo)}/comments/${comment.body.id}`)
      .set(withToken(stranger.token))
      .send({ body: 'hijack' })
      .expect(403);
    const edited = await t.http
      .patch(`${issues(repo)}/comments/${comment.body.id}`)
      .set(withToken(reader.token))
      .send({ body: 'first, edited' })
      .expect(200);
    expect(edited.body.body).toBe('first, edited');
    expect(
      (
        await t.http
          .patch(`${issues(repo)}/1/comments/${comment.body.id}`)
          .set(withToken(writer.token))
          .send({ body: 'by the writer' })
          .expect(200)
      ).body.body,
    ).toBe('by the writer');
    // The deprecated routes check that the comment is the issue's.
    await t.http
      .patch(`${issues(repo)}/2/comments/${comment.body.id}`)
      .set(withToken(writer.token))
      .send({ body: 'wrong issue' })
      .expect(404);
    await t.http
      .delete(`${issues(repo)}/comments/${comment.body.id}`)
      .set(withToken(stranger.token))
      .expect(403);
    await t.http
      .delete(`${issues(repo)}/1/comments/${comment.body.id}`)
      .set(withToken(reader.token))
      .expect(204);
    await t.http.get(`${issues(repo)}/comments/${comment.body.id}`).expect(404);
    expect((await t.http.get(`${issues(repo)}/1`).expect(200)).body.comments).toBe(1);

    // Closing records a timeline entry that is not a plain comment: not listed, not counted, 204 by id.
    await t.http
      .patch(`${issues(repo)}/${second.body.number}`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    const [event] = await t.dataSource.query('SELECT id FROM comment WHERE issue_id = ? AND type = 2', [second.body.id]);
    await t.http.get(`${issues(repo)}/comments/${event.id}`).expect(204, '');
    expect((await t.http.get(`${issues(repo)}/2`).expect(200)).body.comments).toBe(1);
    expect((await t.http.get(`${issues(repo)}/comments`).expect(200)).body).toHaveLength(2);

    // A comment of another repository is not found through this one.
    const other = await makeRepo(t, owner);
    await t.http.get(`${issues(other)}/comments/${all.body[1].id}`).expect(404);

    // An archived repository takes no comments and no comment edits (423).
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ archived: true })
      .expect(200);
    await t.http
      .post(`${issues(repo)}/1/comments`)
      .set(withToken(owner.token))
      .send({ body: 'late' })
      .expect(423);
    await t.http
      .patch(`${issues(repo)}/comments/${all.body[1].id}`)
      .set(withToken(owner.token))
      .send({ body: 'late' })
      .expect(423);
  });

  it('labels on issues: by id or name, organisation labels, exclusive scopes, add, replace, remove, clear', async () => {
    const org = await makeOrg(t, owner.user, { name: uniqueName('labels-org') });
    const repo = await makeRepo(t, owner, { org: org.name });
    const label = (place: string, body: object) =>
      t.http
        .post(t.api(`${place}/labels`))
        .set(withToken(owner.token))
        .send(body)
        .expect(201);
    const bug = (await label(`/repos/${repo.full_name}`, { name: 'bug', color: '#ff0000' })).body;
    const high = (await label(`/repos/${repo.full_name}`, { name: 'priority/high', color: '#ff0000', exclusive: true })).body;
    const low = (await label(`/repos/${repo.full_name}`, { name: 'priority/low', color: '#00ff00', exclusive: true })).body;
    const shared = (await label(`/orgs/${org.name}`, { name: 'org-wide', color: '#0000ff' })).body;
    const elsewhere = (await label(`/repos/${(await makeRepo(t, owner)).full_name}`, { name: 'foreign', color: '#000000' })).body;
    await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'labelled' }).expect(201);
    const base = `${issues(repo)}/1/labels`;
    const names = (body: { name: string }[]) => body.map((l) => l.name).sort();

    const added = await t.http
      .post(base)
      .set(withToken(owner.token))
      .send({ labels: [bug.id, shared.id, elsewhere.id, high.id] })
      .expect(200);
    expect(names(added.body)).toEqual(['bug', 'org-wide', 'priority/high']);
    expect(added.body.find((l: { id: number }) => l.id === shared.id).url).toBe(`http://anvil.test/api/v1/orgs/${org.name}/labels/${shared.id}`);
    // An exclusive label replaces the other of its scope.
    expect(
      names(
        (
          await t.http
            .post(base)
            .set(withToken(owner.token))
            .send({ labels: ['priority/low'] })
            .expect(200)
        ).body,
      ),
    ).toEqual(['bug', 'org-wide', 'priority/low']);
    await t.http
      .post(base)
      .set(withToken(owner.token))
      .send({ labels: [bug.id, 'bug'] })
      .expect(400);
    await t.http
      .post(base)
      .set(withToken(reader.token))
      .send({ labels: [bug.id] })
      .expect(403);
    expect(names((await t.http.get(base).expect(200)).body)).toEqual(['bug', 'org-wide', 'priority/low']);
    expect((await t.http.get(`${issues(repo)}?labels=bug,priority/low`).expect(200)).body).toHaveLength(1);

    expect(
      names(
        (
          await t.http
            .put(base)
            .set(withToken(owner.token))
            .send({ labels: [high.id] })
            .expect(200)
        ).body,
      ),
    ).toEqual(['priority/high']);
    await t.http.delete(`${base}/${low.id}`).set(withToken(owner.token)).expect(204);
    await t.http.delete(`${base}/999999`).set(withToken(owner.token)).expect(422);
    await t.http.delete(`${base}/${high.id}`).set(withToken(owner.token)).expect(204);
    expect((await t.http.get(base).expect(200)).body).toEqual([]);
    await t.http
      .put(base)
      .set(withToken(owner.token))
      .send({ labels: [bug.id, low.id] })
      .expect(200);
    // Deleting a label takes it off its issues.
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/labels/${bug.id}`))
      .set(withToken(owner.token))
      .expect(204);
    expect(names((await t.http.get(`${issues(repo)}/1`).expect(200)).body.labels)).toEqual(['priority/low']);
    await t.http.delete(base).set(withToken(owner.token)).expect(204);
    expect((await t.http.get(base).expect(200)).body).toEqual([]);
    await t.http.get(`${issues(repo)}/9/labels`).expect(404);
  });

  it('the search: labels are any of, by name in any repository; created, assigned and mentioned narrow to the caller', async () => {
    const word = uniqueName('needle');
    const [first, second] = [await makeRepo(t, owner), await makeRepo(t, owner)];
    await t.http
      .put(t.api(`/repos/${first.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const label = async (repo: Record<string, any>, name: string) =>
      (
        await t.http
          .post(t.api(`/repos/${repo.full_name}/labels`))
          .set(withToken(owner.token))
          .send({ name, color: '#00ff00' })
          .expect(201)
      ).body;
    const [red, blue, redToo] = [await label(first, `${word}-red`), await label(first, `${word}-blue`), await label(second, `${word}-red`)];
    const open = async (repo: Record<string, any>, user: TestUser, title: string, extra: object = {}) =>
      (
        await t.http
          .post(issues(repo))
          .set(withToken(user.token))
          .send({ title: `${word} ${title}`, ...extra })
          .expect(201)
      ).body;
    await open(first, owner, 'red', { labels: [red.id], assignees: [writer.name] });
    await open(first, owner, 'blue', { labels: [blue.id], body: `@${writer.name} look` });
    await open(second, owner, 'red too', { labels: [redToo.id] });
    await open(first, writer, 'plain');
    const search = async (query: string, user?: TestUser) => {
      const request = t.http.get(t.api(`/repos/issues/search?q=${word}&${query}`));
      if (user) request.set(withToken(user.token));
      return (await request.expect(200)).body.map((issue: { title: string }) => issue.title.slice(word.length + 1)).sort();
    };
    expect(await search('')).toEqual(['blue', 'plain', 'red', 'red too']);
    expect(await search(`labels=${word}-red`)).toEqual(['red', 'red too']);
    expect(await search(`labels=${word}-red,${word}-blue`)).toEqual(['blue', 'red', 'red too']);
    expect(await search(`labels=${word}-none`)).toEqual([]);
    expect(await search('created=true', writer)).toEqual(['plain']);
    expect(await search('assigned=true', writer)).toEqual(['red']);
    expect(await search('mentioned=1', writer)).toEqual(['blue']);
    expect(await search('created=false', writer)).toEqual(['blue', 'plain', 'red', 'red too']);
    // Anonymous callers have no issues of their own: the flags are ignored, as Forgejo.
    expect(await search('created=true')).toEqual(['blue', 'plain', 'red', 'red too']);
    expect(await search(`owner=${owner.name}&labels=${word}-red`)).toEqual(['red', 'red too']);
    const unknown = await t.http.get(t.api(`/repos/issues/search?owner=${word}-nobody`)).expect(400);
    expect(unknown.body.message).toBe(`user does not exist [uid: 0, name: ${word}-nobody]`);
  });

  it('a label filter with over a thousand matches pages them newest first, as with a few', async () => {
    const { DataSource } = await import('typeorm');
    const repo = await makeRepo(t, owner);
    const made = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'many', color: '#00ff00' })
        .expect(201)
    ).body;
    // 2 400 issues written as rows (through the API this would take minutes): every third closed, every
    // fourth without the label, created one second apart.
    const dataSource = t.app.get(DataSource);
    await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'counter' }).expect(201);
    const rows = Array.from({ length: 2400 }, (_, n) => ({
      repoId: repo.id,
      repoIndex: n + 2,
      posterId: owner.user.id,
      title: `bulk ${n + 2}`,
      body: '',
      ref: '',
      milestoneId: 0,
      isPull: false,
      isClosed: n % 3 === 0,
      isLocked: false,
      numComments: 0,
      pinOrder: 0,
      deadlineUnix: 0,
      createdUnix: 1_700_000_000 + n,
      updatedUnix: 1_700_000_000 + n,
      closedUnix: 0,
    }));
    for (let at = 0; at < rows.length; at += 200)
      await dataSource
        .createQueryBuilder()
        .insert()
        .into('issue')
        .values(rows.slice(at, at + 200))
        .execute();
    const ids: { id: number; repo_index: number; is_closed: number }[] = await dataSource.query(
      'SELECT id, repo_index, is_closed FROM issue WHERE repo_id = ? AND repo_index > 1',
      [repo.id],
    );
    const labelled = ids.filter((row) => (Number(row.repo_index) - 2) % 4 !== 3);
    // The links carry their issue's repository, state and type, as the store writes them.
    const links = labelled.map((row) => ({ issueId: Number(row.id), labelId: made.id, repoId: repo.id, isClosed: Number(row.is_closed) === 1, isPull: false }));
    for (let at = 0; at < links.length; at += 200)
      await dataSource
        .createQueryBuilder()
        .insert()
        .into('issue_label')
        .values(links.slice(at, at + 200))
        .execute();
    const expected = labelled
      .map((row) => Number(row.repo_index))
      .filter((index) => (index - 2) % 3 !== 0)
      .sort((a, b) => b - a);
    expect(expected.length).toBeGreaterThan(1000);
    const all = await t.http.get(`${issues(repo)}?labels=many&limit=50`).expect(200);
    expect(all.headers['x-total-count']).toBe(String(expected.length));
    expect(all.body.map((issue: { number: number }) => issue.number)).toEqual(expected.slice(0, 50));
    const later = await t.http.get(`${issues(repo)}?labels=many&limit=50&page=7`).expect(200);
    expect(later.body.map((issue: { number: number }) => issue.number)).toEqual(expected.slice(300, 350));
    expect((await t.http.get(`${issues(repo)}?labels=many&state=all&limit=1`).expect(200)).headers['x-total-count']).toBe(String(labelled.length));
  });

  it('writes decided by the issue or comment: sign-in, then the body and the lookup, then the rule, as Forgejo', async () => {
    const repo = await makeRepo(t, owner);
    const at = (path: string) => `${issues(repo)}${path}`;
    const first = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'ordered' }).expect(201)).body.number;
    const second = (await t.http.post(issues(repo)).set(withToken(owner.token)).send({ title: 'awaited' }).expect(201)).body.number;
    const comment = (
      await t.http
        .post(at(`/${first}/comments`))
        .set(withToken(owner.token))
        .send({ body: 'mine' })
        .expect(201)
    ).body.id;
    const label = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(withToken(owner.token))
        .send({ name: 'bug', color: '#ff0000' })
        .expect(201)
    ).body.id;
    type Method = 'post' | 'put' | 'patch' | 'delete';
    const send = (method: Method, path: string, body?: object, who?: TestUser) => {
      const request = t.http[method](at(path));
      if (who) request.set(withToken(who.token));
      return body === undefined ? request : request.send(body);
    };

    // Anonymous callers are refused before the body or the item is looked at.
    const writes: [Method, string, object?][] = [
      ['patch', '/99', { title: 5 }],
      ['post', '/99/deadline', { due_date: 5 }],
      ['post', '/99/labels', { labels: 5 }],
      ['put', '/99/labels', { labels: 5 }],
      ['delete', '/99/labels'],
      ['delete', '/99/labels/99'],
      ['post', '/99/comments', { body: 5 }],
      ['patch', '/comments/999999', { body: 5 }],
      ['patch', '/99/comments/999999', { body: 5 }],
      ['delete', '/comments/999999'],
      ['delete', '/99/comments/999999'],
      ['post', '/99/dependencies', { index: 'x' }],
      ['delete', '/99/dependencies', { index: 'x' }],
      ['post', '/99/blocks', { index: 'x' }],
      ['delete', '/99/blocks', { index: 'x' }],
    ];
    for (const [method, path, body] of writes) expect([method, path, (await send(method, path, body)).status]).toEqual([method, path, 401]);

    // A signed-in reader who is neither the poster nor a writer: a bad body (422) and an unknown item (404)
    // answer before the rule of the item (403).
    const refusals: [Method, string, object | undefined, number][] = [
      ['patch', `/${first}`, { title: 5 }, 422],
      ['patch', '/99', { title: 'x' }, 404],
      ['patch', `/${first}`, { title: 'x' }, 403],
      ['post', `/${first}/deadline`, { due_date: 5 }, 422],
      ['post', '/99/deadline', { due_date: '2030-01-01T00:00:00Z' }, 404],
      ['post', `/${first}/deadline`, { due_date: '2030-01-01T00:00:00Z' }, 403],
      ['post', `/${first}/labels`, { labels: 5 }, 422],
      ['post', '/99/labels', { labels: [label] }, 404],
      ['put', `/${first}/labels`, { labels: [label, 'bug'] }, 400],
      ['put', `/${first}/labels`, { labels: [label] }, 403],
      ['delete', '/99/labels', undefined, 404],
      ['delete', `/${first}/labels`, undefined, 403],
      ['delete', `/${first}/labels/999999`, undefined, 403],
      ['patch', `/comments/${comment}`, { body: 5 }, 422],
      ['patch', '/comments/999999', { body: 'x' }, 404],
      ['patch', `/comments/${comment}`, { body: 'x' }, 403],
      ['patch', `/${second}/comments/${comment}`, { body: 'x' }, 404],
      ['delete', '/comments/999999', undefined, 404],
      ['delete', `/comments/${comment}`, undefined, 403],
      ['post', `/${first}/dependencies`, { index: 'x' }, 422],
      ['post', '/99/dependencies', { index: second }, 404],
      // Linking without write on the waiting issue's repository is 404, as Forgejo.
      ['post', `/${first}/dependencies`, { index: second }, 404],
      ['post', `/${first}/blocks`, { index: second }, 404],
    ];
    for (const [method, path, body, status] of refusals)
      expect([method, path, (await send(method, path, body, stranger)).status]).toEqual([method, path, status]);

    // An archived repository: /dependencies and comment writes refuse at the door (423), whoever asks; the
    // waiting issue of /blocks is in it, so linking is 404 there, as Forgejo; labels stay writable.
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ archived: true })
      .expect(200);
    await send('post', `/${first}/dependencies`, { index: 'x' }, stranger).expect(423);
    await send('post', `/${first}/dependencies`, { index: second }, owner).expect(423);
    await send('delete', `/${first}/dependencies`, { index: second }, owner).expect(423);
    await send('post', `/${first}/blocks`, { index: second }, owner).expect(404);
    await send('post', `/${first}/comments`, { body: 5 }, stranger).expect(423);
    await send('patch', `/comments/${comment}`, { body: 5 }, stranger).expect(423);
    await send('post', `/${first}/labels`, { labels: [label] }, owner).expect(200);
  });
});
