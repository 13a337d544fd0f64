import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';
import { SinkRequest, WebhookSink } from '../support/webhook-sink';

/**
 * Reviews of pull requests over HTTP: every route's answers and Forgejo's refusals, line comments with their
 * diff hunks, pending reviews, dismissals, review requests, stale reviews after a head push, the PullRequest
 * JSON's `requested_reviewers` and `review_comments`, the webhooks, private repositories and cleanup.
 */
describe('pull request reviews: …/pulls/{index}/reviews, …/requested_reviewers', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let owner: TestUser;
  let writer: TestUser;
  let second: TestUser;
  let reader: TestUser;
  let outsider: TestUser;
  let sink: WebhookSink;

  beforeAll(async () => {
    t = await startTestApp({ WEBHOOK_ALLOWED_HOSTS: 'loopback', ALLOW_LOCAL_NETWORKS: 'true' }, (config) => {
      config.webhooks.retryBaseMs = 50;
      config.webhooks.pollMs = 100;
    });
    base = await t.listen();
    client = new GitClient();
    sink = await new WebhookSink().start();
    [owner, writer, second, reader, outsider] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(async () => {
    await sink?.stop();
    client?.dispose();
    await t?.close();
  });

  const pulls = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/pulls`);
  const reviews = (repo: Record<string, any>, index = 1) => `${pulls(repo)}/${index}/reviews`;

  /**
   * A repository of `owner` with `writer` and `second` as writers and `reader` as a reader; `main` holds
   * file.txt, `feature` changes its second line and adds a fourth; `writer` opens pull request 1.
   */
  async function openPull(options: { private?: boolean } = {}): Promise<{ repo: Record<string, any>; work: string; remote: string; head: string }> {
    const repo = await makeRepo(t, owner, { private: options.private });
    for (const [user, permission] of [
      [writer, 'write'],
      [second, 'write'],
      [reader, 'read'],
    ] as const) {
      await t.http
        .put(t.api(`/repos/${repo.full_name}/collaborators/${user.name}`))
        .set(withToken(owner.token))
        .send({ permission })
        .expect(204);
    }
    const work = await client.workingCopy('main', { 'README.md': 'hello\n', 'file.txt': 'one\ntwo\nthree\n' });
    const remote = withCredentials(base, `${repo.full_name}.git`, owner.name, owner.password);
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nTWO\nthree\nfour\n');
    await client.ok(['commit', '--quiet', '-am', 'change file'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    const head = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    await t.http.post(pulls(repo)).set(withToken(writer.token)).send({ head: 'feature', base: 'main', title: 'Change the file' }).expect(201);
    await tested(repo, 1);
    return { repo, work, remote, head };
  }

  async function tested(repo: Record<string, any>, index: number): Promise<void> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query('SELECT status FROM pull_request WHERE base_repo_id = ? AND repo_index = ?', [repo.id, index]);
      if (Number(rows[0].status) !== 1) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the mergeability test never ran');
  }

  /** Pushes one more commit to `feature` (changing file.txt unless `empty`), and waits until the pull request has it. */
  async function pushHead(repo: Record<string, any>, work: string, remote: string, content: string | null): Promise<string> {
    await client.ok(['checkout', '--quiet', 'feature'], { cwd: work });
    if (content === null) await client.ok(['commit', '--quiet', '--allow-empty', '-m', 'nothing'], { cwd: work });
    else {
      fs.writeFileSync(path.join(work, 'file.txt'), content);
      await client.ok(['commit', '--quiet', '-am', 'more'], { cwd: work });
    }
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    const head = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query('SELECT head_commit_id FROM pull_request WHERE base_repo_id = ?', [repo.id]);
      if (rows[0].head_commit_id === head) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return head;
  }

  const review = (repo: Record<string, any>, who: TestUser, body: Record<string, unknown>) => t.http.post(reviews(repo)).set(withToken(who.token)).send(body);

  it("creates, lists, reads and deletes reviews with Forgejo's PullReview JSON; official for writers", async () => {
    const { repo, head } = await openPull();
    const approved = (await review(repo, owner, { event: 'APPROVED', body: 'lgtm' }).expect(200)).body;
    expect(Object.keys(approved)).toEqual([
      'id',
      'user',
      'team',
      'state',
      'body',
      'commit_id',
      'stale',
      'official',
      'dismissed',
      'comments_count',
      'submitted_at',
      'updated_at',
      'html_url',
      'pull_request_url',
    ]);
    expect(approved).toMatchObject({
      user: { login: owner.name },
      team: null,
      state: 'APPROVED',
      body: 'lgtm',
      commit_id: head,
      stale: false,
      official: true,
      dismissed: false,
      comments_count: 0,
    });
    expect(approved.pull_request_url).toMatch(new RegExp(`/${repo.full_name}/pulls/1$`));
    // Shown on the page at its timeline entry, as Forgejo links it.
    const entry = (await t.http.get(t.api(`/repos/${repo.full_name}/issues/1/timeline`)).expect(200)).body.find(
      (item: Record<string, any>) => item.type === 'review' && item.review_id === approved.id,
    );
    expect(approved.html_url).toBe(`${approved.pull_request_url}#issuecomment-${entry.id}`);
    const commented = (await review(repo, reader, { event: 'COMMENT', body: 'a nit' }).expect(200)).body;
    expect(commented).toMatchObject({ state: 'COMMENT', official: false, user: { login: reader.name } });
    const readerApproval = (await review(repo, reader, { event: 'APPROVED' }).expect(200)).body;
    expect(readerApproval).toMatchObject({ state: 'APPROVED', official: false, body: '' });

    const list = await t.http.get(reviews(repo)).expect(200);
    expect(list.headers['x-total-count']).toBe('3');
    expect(list.body.map((item: Record<string, any>) => item.id)).toEqual([approved.id, commented.id, readerApproval.id]);
    expect((await t.http.get(`${reviews(repo)}?limit=1&page=2`).expect(200)).body.map((item: Record<string, any>) => item.id)).toEqual([commented.id]);
    expect(
      (
        await t.http
          .get(`${reviews(repo)}/${approved.id}`)
          .set(withToken(owner.token))
          .expect(200)
      ).body,
    ).toEqual(approved);
    await t.http.get(`${reviews(repo)}/999999`).expect(404);
    await t.http.get(`${reviews(repo, 2)}`).expect(404);

    const pull = (await t.http.get(`${pulls(repo)}/1`).expect(200)).body;
    expect(pull.review_comments).toBe(3);
    expect(pull.requested_reviewers.map((user: Record<string, any>) => user.login)).toEqual([owner.name, reader.name]);

    expect(
      (
        await t.http
          .delete(`${reviews(repo)}/${approved.id}`)
          .set(withToken(reader.token))
          .expect(403)
      ).body.message,
    ).toBe('only admin and user itself can delete a review');
    await t.http.delete(`${reviews(repo)}/${approved.id}`).expect(401);
    // The review is looked up before the reviewer-or-admin rule.
    await t.http
      .delete(`${reviews(repo)}/999999`)
      .set(withToken(reader.token))
      .expect(404);
    await t.http
      .delete(`${reviews(repo)}/${approved.id}`)
      .set(withToken(owner.token))
      .expect(204);
    await t.http.get(`${reviews(repo)}/${approved.id}`).expect(404);
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body.review_comments).toBe(2);
  });

  it("refuses with Forgejo's 422 texts: one's own pull request, missing bodies, submitting what is not pending", async () => {
    const { repo } = await openPull();
    expect((await review(repo, writer, { event: 'APPROVED' }).expect(422)).body.message).toBe('approve your own pull is not allowed');
    expect((await review(repo, writer, { event: 'REQUEST_CHANGES', body: 'no' }).expect(422)).body.message).toBe('reject your own pull is not allowed');
    expect((await review(repo, owner, { event: 'REQUEST_CHANGES', body: '  ' }).expect(422)).body.message).toBe('review event REQUEST_CHANGES requires a body');
    expect((await review(repo, owner, { event: 'COMMENT' }).expect(422)).body.message).toBe('review event COMMENT requires a body or a comment');
    expect((await review(repo, owner, { event: 'PENDING' }).expect(422)).body.message).toBe('review event PENDING requires a body');
    await t.http.post(reviews(repo)).send({ event: 'COMMENT', body: 'anonymous' }).expect(401);
    await review(repo, owner, { event: 'COMMENT', body: 'x', comments: 'not a list' }).expect(422);
    expect((await review(repo, owner, { event: 'COMMENT', body: 'x', commit_id: 'a'.repeat(65) }).expect(422)).body.message).toBe('[CommitID]: MaxSize');
    await review(repo, owner, { event: 'COMMENT', body: 'x', comments: [{ path: 'a\u0000b', new_position: 1, body: 'nul' }] }).expect(422);
    await review(repo, owner, { event: 'COMMENT', body: 'x', comments: [{ path: 'x'.repeat(1025), new_position: 1, body: 'long' }] }).expect(422);
    // Whatever the commit id and path say, git is asked nothing it could read as an option, and nothing fails.
    const odd = (
      await review(repo, owner, {
        event: 'PENDING',
        body: 'odd',
        commit_id: '--output=/tmp/x',
        comments: [
          { path: '', new_position: 1, body: 'no path' },
          { path: '-x', new_position: 99, body: 'no line' },
        ],
      }).expect(200)
    ).body;
    const oddComments = (
      await t.http
        .get(`${reviews(repo)}/${odd.id}/comments`)
        .set(withToken(owner.token))
        .expect(200)
    ).body;
    expect(oddComments.map((comment: Record<string, any>) => comment.diff_hunk)).toEqual(['', '']);
    await t.http
      .delete(`${reviews(repo)}/${odd.id}`)
      .set(withToken(owner.token))
      .expect(204);
    const given = (await review(repo, owner, { event: 'COMMENT', body: 'fine' }).expect(200)).body;
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${given.id}`)
          .set(withToken(owner.token))
          .send({ event: 'APPROVED' })
          .expect(422)
      ).body.message,
    ).toBe('only a pending review can be submitted');
    await review(repo, owner, { event: 'APPROVED' }).expect(200);
    await t.http
      .post(`${pulls(repo)}/99/reviews`)
      .set(withToken(owner.token))
      .send({ event: 'APPROVED' })
      .expect(404);
  });

  it('keeps a pending review with line comments for its reviewer, then submits it', async () => {
    const { repo, head } = await openPull();
    const pending = (
      await review(repo, owner, {
        event: 'PENDING',
        body: 'draft',
        comments: [
          { path: 'file.txt', new_position: 2, body: 'why capitals?' },
          { path: 'file.txt', old_position: 2, body: 'this was fine' },
        ],
      }).expect(200)
    ).body;
    expect(pending).toMatchObject({ state: 'PENDING', body: 'draft', comments_count: 2, html_url: '' });
    // Another's pending review does not exist for them; the list leaves it out.
    await t.http
      .get(`${reviews(repo)}/${pending.id}`)
      .set(withToken(reader.token))
      .expect(404);
    await t.http.get(`${reviews(repo)}/${pending.id}`).expect(404);
    expect((await t.http.get(reviews(repo)).set(withToken(reader.token)).expect(200)).body).toEqual([]);
    expect((await t.http.get(reviews(repo)).set(withToken(owner.token)).expect(200)).body.map((item: Record<string, any>) => item.id)).toEqual([pending.id]);

    const comments = (
      await t.http
        .get(`${reviews(repo)}/${pending.id}/comments`)
        .set(withToken(owner.token))
        .expect(200)
    ).body;
    expect(comments).toHaveLength(2);
    expect(Object.keys(comments[0])).toEqual([
      'id',
      'body',
      'user',
      'resolver',
      'pull_request_review_id',
      'created_at',
      'updated_at',
      'path',
      'commit_id',
      'original_commit_id',
      'diff_hunk',
      'position',
      'original_position',
      'html_url',
      'pull_request_url',
    ]);
    expect(comments[0]).toMatchObject({
      body: 'why capitals?',
      user: { login: owner.name },
      resolver: null,
      pull_request_review_id: pending.id,
      path: 'file.txt',
      commit_id: head,
      original_commit_id: '',
      position: 2,
      original_position: 0,
    });
    // The hunk up to the line is short: kept whole, with its header as git wrote it.
    expect(comments[0].diff_hunk).toBe('@@ -1,3 +1,4 @@\n one\n-two\n+TWO');
    expect(comments[0].html_url).toMatch(new RegExp(`/pulls/1/files#issuecomment-${comments[0].id}$`));
    expect(comments[1]).toMatchObject({ body: 'this was fine', position: 0, original_position: 2, commit_id: head });
    expect(comments[1].diff_hunk).toBe('@@ -1,3 +1,4 @@\n one\n-two');

    const added = (
      await t.http
        .post(`${reviews(repo)}/${pending.id}/comments`)
        .set(withToken(owner.token))
        .send({ path: 'file.txt', new_position: 4, body: 'and four' })
        .expect(200)
    ).body;
    expect(added).toMatchObject({ body: 'and four', position: 4, path: 'file.txt', pull_request_review_id: pending.id });
    expect(added.diff_hunk.split('\n')[0]).toMatch(/^@@ -\d+,\d+ \+\d+,\d+ @@$/);
    expect(
      (
        await t.http
          .get(`${reviews(repo)}/${pending.id}/comments/${added.id}`)
          .set(withToken(owner.token))
          .expect(200)
      ).body,
    ).toEqual(added);
    await t.http
      .get(`${reviews(repo)}/${pending.id}/comments/${added.id + 1000}`)
      .set(withToken(owner.token))
      .expect(404);
    await t.http
      .delete(`${reviews(repo)}/${pending.id}/comments/${added.id}`)
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .get(`${reviews(repo)}/${pending.id}/comments/${added.id}`)
      .set(withToken(owner.token))
      .expect(404);

    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${pending.id}`)
          .set(withToken(owner.token))
          .send({ event: 'PENDING', body: 'still' })
          .expect(422)
      ).body.message,
    ).toBe('review stay pending');
    const submitted = (
      await t.http
        .post(`${reviews(repo)}/${pending.id}`)
        .set(withToken(owner.token))
        .send({ event: 'REQUEST_CHANGES', body: 'please fix' })
        .expect(200)
    ).body;
    expect(submitted).toMatchObject({ id: pending.id, state: 'REQUEST_CHANGES', body: 'please fix', official: true, comments_count: 2, commit_id: head });
    expect(submitted.html_url).not.toBe('');
    const visible = (
      await t.http
        .get(`${reviews(repo)}/${pending.id}/comments`)
        .set(withToken(reader.token))
        .expect(200)
    ).body;
    expect(visible.map((comment: Record<string, any>) => comment.body)).toEqual(['why capitals?', 'this was fine']);
    expect(visible[0].html_url).toMatch(new RegExp(`/pulls/1#issuecomment-${visible[0].id}$`));
    // A comment is deleted by its poster or a writer of pull requests.
    await t.http
      .delete(`${reviews(repo)}/${pending.id}/comments/${visible[0].id}`)
      .set(withToken(reader.token))
      .expect(403);
    // The comment is looked up before the poster-or-writer rule.
    await t.http
      .delete(`${reviews(repo)}/${pending.id}/comments/${visible[0].id + 1000}`)
      .set(withToken(reader.token))
      .expect(404);
    await t.http
      .delete(`${reviews(repo)}/${pending.id}/comments/${visible[0].id}`)
      .set(withToken(second.token))
      .expect(204);
  });

  it('dismisses and undismisses approvals and rejections (repository administrators), with earlier ones on request', async () => {
    const { repo } = await openPull();
    const first = (await review(repo, second, { event: 'REQUEST_CHANGES', body: 'no' }).expect(200)).body;
    const approval = (await review(repo, second, { event: 'APPROVED', body: 'now yes' }).expect(200)).body;
    // A new approval or rejection dismisses the reviewer's earlier one.
    expect((await t.http.get(`${reviews(repo)}/${first.id}`).expect(200)).body).toMatchObject({ dismissed: true, official: false });
    const comment = (await review(repo, reader, { event: 'COMMENT', body: 'c' }).expect(200)).body;
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${approval.id}/dismissals`)
          .set(withToken(writer.token))
          .send({ message: 'no' })
          .expect(403)
      ).body.message,
    ).toBe('Must be repo admin');
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${comment.id}/dismissals`)
          .set(withToken(owner.token))
          .send({})
          .expect(403)
      ).body.message,
    ).toBe("not need to dismiss this review because it's type is not Approve or change request");
    await t.http
      .post(`${reviews(repo)}/999999/dismissals`)
      .set(withToken(owner.token))
      .send({})
      .expect(404);
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${approval.id}/dismissals`)
          .set(withToken(owner.token))
          .send({ message: 'stale', priors: true })
          .expect(200)
      ).body,
    ).toMatchObject({ id: approval.id, dismissed: true, state: 'APPROVED' });
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${approval.id}/undismissals`)
          .set(withToken(owner.token))
          .expect(200)
      ).body,
    ).toMatchObject({ id: approval.id, dismissed: false });
    // Dismissed reviewers drop out of requested_reviewers, as Forgejo lists them.
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body.requested_reviewers.map((user: Record<string, any>) => user.login)).toEqual([second.name]);
    await t.http
      .patch(`${pulls(repo)}/1`)
      .set(withToken(owner.token))
      .send({ state: 'closed' })
      .expect(201);
    expect(
      (
        await t.http
          .post(`${reviews(repo)}/${approval.id}/dismissals`)
          .set(withToken(owner.token))
          .send({})
          .expect(403)
      ).body.message,
    ).toBe("can't dismiss a review associated to a closed or merged PR");
  });

  it('requests reviews of users and takes requests back, with Forgejo’s checks', async () => {
    const { repo } = await openPull();
    const requested = t.http.post(`${pulls(repo)}/1/requested_reviewers`);
    const made = (
      await requested
        .set(withToken(writer.token))
        .send({ reviewers: [second.name, reader.name] })
        .expect(201)
    ).body;
    expect(made.map((item: Record<string, any>) => [item.user.login, item.state, item.official])).toEqual([
      [second.name, 'REQUEST_REVIEW', true],
      [reader.name, 'REQUEST_REVIEW', false],
    ]);
    // Asked already: nothing new.
    expect(
      (
        await t.http
          .post(`${pulls(repo)}/1/requested_reviewers`)
          .set(withToken(owner.token))
          .send({ reviewers: [second.name] })
          .expect(201)
      ).body,
    ).toEqual([]);
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body).toMatchObject({
      requested_reviewers: [{ login: second.name }, { login: reader.name }],
      review_comments: 0,
    });
    const request = (code: number, who: TestUser, reviewers: string[], method: 'post' | 'delete' = 'post') =>
      t.http[method](`${pulls(repo)}/1/requested_reviewers`)
        .set(withToken(who.token))
        .send({ reviewers })
        .expect(code);
    expect((await request(422, owner, [writer.name])).body.message).toMatch(
      new RegExp(`^poster of pr can't be reviewer \\[user_id: \\d+, repo_id: ${repo.id}\\]$`),
    );
    expect((await request(422, outsider, [owner.name])).body.message).toMatch(/^Doer can't choose reviewer \[user_id: \d+, repo_id: \d+\]$/);
    await request(404, owner, ['no-such-user']);
    const org = await makeOrg(t, owner.user);
    expect((await request(422, owner, [org.name])).body.message).toMatch(/^Organization can't be added as reviewer/);
    // A user's repository ignores team_reviewers, as Forgejo (teams: pull-review-teams.e2e-spec.ts).
    expect(
      (
        await t.http
          .post(`${pulls(repo)}/1/requested_reviewers`)
          .set(withToken(owner.token))
          .send({ team_reviewers: ['Owners'] })
          .expect(201)
      ).body,
    ).toEqual([]);
    await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .send({ reviewers: [second.name] })
      .expect(401);
    // Answering a request replaces it; the poster, the owner and writers take requests back (204).
    await review(repo, reader, { event: 'COMMENT', body: 'looked' }).expect(200);
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body.requested_reviewers.map((user: Record<string, any>) => user.login)).toEqual([second.name]);
    expect((await request(422, outsider, [second.name], 'delete')).body.message).toMatch(/^Doer can't remove reviewer/);
    await request(204, writer, [second.name], 'delete');
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body.requested_reviewers).toBeNull();
    expect((await t.http.get(reviews(repo)).expect(200)).body.map((item: Record<string, any>) => item.state)).toEqual(['COMMENT']);

    // An archived repository refuses a request (423) only after the body and Forgejo's checks of the request.
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ archived: true })
      .expect(200);
    expect((await request(422, outsider, [owner.name])).body.message).toMatch(/^Doer can't choose reviewer/);
    await request(404, owner, ['no-such-user']);
    await request(423, owner, [second.name]);
  });

  it('writes timeline entries for reviews given, review requests and dismissals; a deleted review takes its own', async () => {
    const { repo } = await openPull();
    await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(writer.token))
      .send({ reviewers: [second.name] })
      .expect(201);
    await t.http
      .delete(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(writer.token))
      .send({ reviewers: [second.name] })
      .expect(204);
    await review(repo, reader, { event: 'PENDING', body: 'not yet shown' }).expect(200);
    const approval = (await review(repo, owner, { event: 'APPROVED', body: 'ship it' }).expect(200)).body;
    await t.http
      .post(`${reviews(repo)}/${approval.id}/dismissals`)
      .set(withToken(owner.token))
      .send({ message: 'too early' })
      .expect(200);
    const timeline = async () =>
      (await t.http.get(t.api(`/repos/${repo.full_name}/issues/1/timeline`)).expect(200)).body
        .filter((entry: Record<string, any>) => ['review', 'review_request', 'dismiss_review'].includes(entry.type))
        .map((entry: Record<string, any>) => [
          entry.type,
          entry.user.login,
          entry.body,
          entry.review_id === 0 ? 0 : entry.review_id,
          entry.assignee?.login ?? null,
          entry.removed_assignee,
        ]);
    const entries = await timeline();
    expect(entries).toHaveLength(4);
    expect(entries[0]).toEqual(['review_request', writer.name, '', entries[0][3], second.name, false]);
    expect(entries[0][3]).toBeGreaterThan(0);
    expect(entries.slice(1)).toEqual([
      ['review_request', writer.name, '', 0, second.name, true],
      ['review', owner.name, 'ship it', approval.id, null, false],
      ['dismiss_review', owner.name, 'too early', approval.id, null, false],
    ]);
    await t.http
      .delete(`${reviews(repo)}/${approval.id}`)
      .set(withToken(owner.token))
      .expect(204);
    expect((await timeline()).map((entry: unknown[]) => entry[0])).toEqual(['review_request', 'review_request']);
  });

  it('marks reviews stale when a push changes the diff, not when it does not', async () => {
    const { repo, work, remote, head } = await openPull();
    const approval = (await review(repo, owner, { event: 'APPROVED' }).expect(200)).body;
    const lines = (
      await review(repo, second, {
        event: 'COMMENT',
        body: 'lines',
        comments: [
          { path: 'file.txt', new_position: 2, body: 'on two' },
          { path: 'file.txt', new_position: 4, body: 'on four' },
        ],
      }).expect(200)
    ).body;
    const shown = async () => (await t.http.get(`${reviews(repo)}/${lines.id}/comments`).expect(200)).body.map((comment: Record<string, any>) => comment.body);
    // The base moves on and is merged into the head: no line of the pull request's diff changes.
    await client.ok(['checkout', '--quiet', 'main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'other.txt'), 'other\n');
    await client.ok(['add', 'other.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'base moves'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await tested(repo, 1);
    await t.http
      .post(`${pulls(repo)}/1/update`)
      .set(withToken(owner.token))
      .expect(200);
    const updated = (await t.http.get(`${pulls(repo)}/1`).expect(200)).body.head.sha;
    expect(updated).not.toBe(head);
    expect((await t.http.get(`${reviews(repo)}/${approval.id}`).expect(200)).body).toMatchObject({ stale: false, dismissed: false });
    expect(await shown()).toEqual(['on two', 'on four']);
    // A commit that changes the diff makes it stale, and outdates the comment on the line it changed.
    await client.ok(['fetch', '--quiet', remote, 'feature'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-B', 'feature', 'FETCH_HEAD'], { cwd: work });
    const moved = await pushHead(repo, work, remote, 'one\nTWO\nthree\nFOUR\nfive\n');
    let stale: Record<string, any> = {};
    for (let attempt = 0; attempt < 400 && stale.stale !== true; attempt++) {
      stale = (await t.http.get(`${reviews(repo)}/${approval.id}`).expect(200)).body;
      if (stale.stale !== true) await new Promise((resolve) => setTimeout(resolve, 25));
    }
    expect(stale).toMatchObject({ stale: true, dismissed: false, commit_id: head });
    expect(await shown()).toEqual(['on two']);
    expect((await t.http.get(`${reviews(repo)}/${lines.id}`).expect(200)).body.comments_count).toBe(2);
    const again = (await review(repo, owner, { event: 'APPROVED' }).expect(200)).body;
    expect(again).toMatchObject({ stale: false, commit_id: moved });
    // Approving an older head whose diff differs from the head's now: stale from the start.
    expect((await review(repo, second, { event: 'APPROVED', commit_id: head }).expect(200)).body).toMatchObject({ stale: true, commit_id: head });
  });

  it('answers 404 to outsiders of a private repository on every route', async () => {
    const { repo } = await openPull({ private: true });
    const given = (
      await review(repo, owner, { event: 'COMMENT', body: 'private', comments: [{ path: 'file.txt', new_position: 2, body: 'here' }] }).expect(200)
    ).body;
    const [line] = (
      await t.http
        .get(`${reviews(repo)}/${given.id}/comments`)
        .set(withToken(reader.token))
        .expect(200)
    ).body;
    const routes: [string, string][] = [
      ['get', reviews(repo)],
      ['post', reviews(repo)],
      ['get', `${reviews(repo)}/${given.id}`],
      ['post', `${reviews(repo)}/${given.id}`],
      ['delete', `${reviews(repo)}/${given.id}`],
      ['get', `${reviews(repo)}/${given.id}/comments`],
      ['post', `${reviews(repo)}/${given.id}/comments`],
      ['get', `${reviews(repo)}/${given.id}/comments/${line.id}`],
      ['delete', `${reviews(repo)}/${given.id}/comments/${line.id}`],
      ['post', `${reviews(repo)}/${given.id}/dismissals`],
      ['post', `${reviews(repo)}/${given.id}/undismissals`],
      ['post', `${pulls(repo)}/1/requested_reviewers`],
      ['delete', `${pulls(repo)}/1/requested_reviewers`],
    ];
    for (const [method, url] of routes) {
      const answer = await (t.http as any)
        [method](url)
        .set(withToken(outsider.token))
        .send({ event: 'COMMENT', body: 'x', reviewers: [owner.name] });
      expect([method, url, answer.status]).toEqual([method, url, 404]);
      const anonymous = await (t.http as any)[method](url).send({ event: 'COMMENT', body: 'x' });
      expect([method, url, anonymous.status]).toEqual([method, url, 404]);
    }
    await t.http
      .get(`${reviews(repo)}/${given.id}`)
      .set(withToken(reader.token))
      .expect(200);
    // Only those who read the pull requests can be asked to review.
    const refused = await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(owner.token))
      .send({ reviewers: [outsider.name] })
      .expect(422);
    expect(refused.body.message).toMatch(/^Reviewer can't read \[user_id: \d+, repo_id: \d+\]$/);
  });

  it("sends the review events with Forgejo's headers and payloads", async () => {
    const { repo } = await openPull();
    await t.http
      .post(t.api(`/repos/${repo.full_name}/hooks`))
      .set(withToken(owner.token))
      .send({
        type: 'gitea',
        active: true,
        events: ['pull_request_review', 'pull_request_review_request'],
        config: { url: `${sink.url}/reviews/${repo.name}`, content_type: 'json' },
      })
      .expect(201);
    await review(repo, owner, { event: 'APPROVED', body: 'lgtm' }).expect(200);
    await review(repo, second, { event: 'REQUEST_CHANGES', body: 'fix it' }).expect(200);
    await review(repo, reader, { event: 'COMMENT', body: 'hmm' }).expect(200);
    await review(repo, reader, { event: 'PENDING', body: 'not sent' }).expect(200);
    await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(writer.token))
      .send({ reviewers: [second.name] })
      .expect(201);
    await t.http
      .delete(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(writer.token))
      .send({ reviewers: [second.name] })
      .expect(204);
    const received = () => [
      ...new Map(
        sink.requests
          .filter((request: SinkRequest) => request.path === `/reviews/${repo.name}`)
          .map((request) => [request.headers['x-gitea-delivery'], request]),
      ).values(),
    ];
    await sink.waitFor(() => received().length >= 5, 'review events');
    const summary = received().map(
      (request) => `${request.headers['x-gitea-event']}|${request.headers['x-forgejo-event']}|${request.headers['x-gitea-event-type']}|${request.json.action}`,
    );
    expect(summary.sort()).toEqual(
      [
        'pull_request_approved|pull_request_approved|pull_request_review_approved|reviewed',
        'pull_request_rejected|pull_request_rejected|pull_request_review_rejected|reviewed',
        'pull_request_comment|pull_request_comment|pull_request_review_comment|reviewed',
        'pull_request|pull_request|pull_request_review_request|review_requested',
        'pull_request|pull_request|pull_request_review_request|review_request_removed',
      ].sort(),
    );
    const approved = received().find((request) => request.headers['x-gitea-event-type'] === 'pull_request_review_approved')!.json;
    expect(Object.keys(approved)).toEqual(['action', 'number', 'pull_request', 'requested_reviewer', 'repository', 'sender', 'commit_id', 'review']);
    expect(approved).toMatchObject({
      number: 1,
      pull_request: { number: 1, review_comments: 1 },
      requested_reviewer: { login: owner.name },
      sender: { login: owner.name },
      review: { type: 'pull_request_review_approved', content: 'lgtm' },
    });
    const asked = received().find((request) => request.json.action === 'review_requested')!.json;
    expect(asked).toMatchObject({ requested_reviewer: { login: second.name }, sender: { login: writer.name }, review: null, pull_request: { number: 1 } });
    expect(asked.pull_request.requested_reviewers.map((user: Record<string, any>) => user.login)).toContain(second.name);
  });

  it('deleting the repository, the pull request or a user removes their review rows', async () => {
    const { repo } = await openPull();
    const count = async (sql: string, args: unknown[]) => Number((await t.dataSource.query(sql, args))[0].n);
    await review(repo, owner, { event: 'COMMENT', body: 'x', comments: [{ path: 'file.txt', new_position: 1, body: 'y' }] }).expect(200);
    const pendingUser = await makeUser(t);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${pendingUser.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'read' })
      .expect(204);
    await review(repo, pendingUser, { event: 'COMMENT', body: 'given' }).expect(200);
    await review(repo, pendingUser, { event: 'PENDING', body: 'draft', comments: [{ path: 'file.txt', new_position: 2, body: 'z' }] }).expect(200);
    await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(owner.token))
      .send({ reviewers: [pendingUser.name] })
      .expect(201);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE repo_id = ?', [repo.id])).toBe(4);
    expect(await count('SELECT COUNT(*) AS n FROM review_comment WHERE repo_id = ?', [repo.id])).toBe(2);
    const admin = await makeUser(t, { admin: true });
    await t.http
      .delete(t.api(`/admin/users/${pendingUser.name}?purge=true`))
      .set(withToken(admin.token))
      .expect(204);
    // The pending review (and its comment) and the request went; the review given stays, as a ghost's.
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE repo_id = ?', [repo.id])).toBe(2);
    expect(await count('SELECT COUNT(*) AS n FROM review_comment WHERE repo_id = ?', [repo.id])).toBe(1);
    expect((await t.http.get(reviews(repo)).expect(200)).body.map((item: Record<string, any>) => item.user.login)).toEqual([owner.name, 'Ghost']);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    expect(await count('SELECT COUNT(*) AS n FROM review WHERE repo_id = ?', [repo.id])).toBe(0);
    expect(await count('SELECT COUNT(*) AS n FROM review_comment WHERE repo_id = ?', [repo.id])).toBe(0);
  });
});
