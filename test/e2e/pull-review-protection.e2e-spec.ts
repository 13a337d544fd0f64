import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The review half of branch protection at the merge door: `required_approvals` counts official, undismissed
 * (and, under `ignore_stale_approvals`, fresh) approvals; `block_on_rejected_reviews`,
 * `block_on_official_review_requests`, the approvals whitelist and `dismiss_stale_approvals` on head pushes,
 * each refused with Forgejo's 405 text until it is met.
 */
describe('protected merges wait for reviews', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let owner: TestUser;
  let writer: TestUser;
  let second: TestUser;
  let reader: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    [owner, writer, second, reader] = [await makeUser(t), await makeUser(t), await makeUser(t), await makeUser(t)];
  });
  afterAll(async () => {
    client?.dispose();
    await t?.close();
  });

  const pulls = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/pulls`);
  const reviews = (repo: Record<string, any>) => `${pulls(repo)}/1/reviews`;
  const merge = (repo: Record<string, any>, token = owner.token) =>
    t.http
      .post(`${pulls(repo)}/1/merge`)
      .set(withToken(token))
      .send({ Do: 'merge' });
  const refusal = async (repo: Record<string, any>) => (await merge(repo).expect(405)).body.message as string;
  const review = (repo: Record<string, any>, who: TestUser, body: Record<string, unknown>) =>
    t.http.post(reviews(repo)).set(withToken(who.token)).send(body).expect(200);

  /** `writer` opens pull request 1 of `feature` into `main` under the given rule for `main`. */
  async function protectedPull(rule: Record<string, unknown>): Promise<{ repo: Record<string, any>; work: string; remote: string }> {
    const repo = await makeRepo(t, owner);
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
    const work = await client.workingCopy('main', { 'file.txt': 'one\ntwo\n' });
    const remote = withCredentials(base, `${repo.full_name}.git`, owner.name, owner.password);
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nTWO\n');
    await client.ok(['commit', '--quiet', '-am', 'change'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/branch_protections`))
      .set(withToken(owner.token))
      .send({ rule_name: 'main', ...rule })
      .expect(201);
    await t.http.post(pulls(repo)).set(withToken(writer.token)).send({ head: 'feature', base: 'main', title: 'Change' }).expect(201);
    await tested(repo);
    return { repo, work, remote };
  }

  async function tested(repo: Record<string, any>): Promise<void> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query('SELECT status FROM pull_request WHERE base_repo_id = ?', [repo.id]);
      if (Number(rows[0].status) !== 1) return;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error('the mergeability test never ran');
  }

  /** Pushes a commit changing the diff to `feature`; resolves once its approvals are dismissed or stale. */
  async function pushChange(repo: Record<string, any>, work: string, remote: string, content: string): Promise<void> {
    fs.writeFileSync(path.join(work, 'file.txt'), content);
    await client.ok(['commit', '--quiet', '-am', 'more'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    const head = (await client.ok(['rev-parse', 'HEAD'], { cwd: work })).trim();
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query(
        'SELECT COUNT(*) AS n FROM review WHERE repo_id = ? AND type = 1 AND commit_id <> ? AND stale = 0 AND dismissed = 0',
        [repo.id, head],
      );
      const moved = await t.dataSource.query('SELECT head_commit_id FROM pull_request WHERE base_repo_id = ?', [repo.id]);
      if (Number(rows[0].n) === 0 && moved[0].head_commit_id === head) break;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    await tested(repo);
  }

  const NOT_ENOUGH = 'not allowed to merge [reason: Does not have enough approvals]';

  it('counts official approvals, and blocks on official rejections and open official requests', async () => {
    const { repo } = await protectedPull({ required_approvals: 1, block_on_rejected_reviews: true, block_on_official_review_requests: true });
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    // A reader's approval is not official: it does not count.
    expect((await review(repo, reader, { event: 'APPROVED' })).body.official).toBe(false);
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    expect((await review(repo, second, { event: 'APPROVED' })).body.official).toBe(true);
    await t.http
      .post(`${pulls(repo)}/1/requested_reviewers`)
      .set(withToken(writer.token))
      .send({ reviewers: [owner.name] })
      .expect(201);
    expect(await refusal(repo)).toBe('not allowed to merge [reason: There are official review requests]');
    // Answering the request with a rejection replaces it, and blocks in turn.
    const rejection = (await review(repo, owner, { event: 'REQUEST_CHANGES', body: 'not yet' })).body;
    expect(await refusal(repo)).toBe('not allowed to merge [reason: There are requested changes]');
    // A dismissed approval no longer counts; a dismissed rejection no longer blocks.
    const approval = (await t.http.get(reviews(repo)).expect(200)).body.find((item: Record<string, any>) => item.user.login === second.name);
    await t.http
      .post(`${reviews(repo)}/${approval.id}/dismissals`)
      .set(withToken(owner.token))
      .send({ message: 'again' })
      .expect(200);
    await t.http
      .post(`${reviews(repo)}/${rejection.id}/dismissals`)
      .set(withToken(owner.token))
      .send({ message: 'fine' })
      .expect(200);
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    await t.http
      .post(`${reviews(repo)}/${approval.id}/undismissals`)
      .set(withToken(owner.token))
      .expect(200);
    // The Branch JSON still says what the rule requires.
    expect(
      (
        await t.http
          .get(t.api(`/repos/${repo.full_name}/branches/main`))
          .set(withToken(owner.token))
          .expect(200)
      ).body.required_approvals,
    ).toBe(1);
    await merge(repo).expect(200);
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body.merged).toBe(true);
  });

  it('counts only the approvals whitelist when the rule enables it, and dismisses stale approvals on a push that changes the diff', async () => {
    const { repo, work, remote } = await protectedPull({
      required_approvals: 1,
      enable_approvals_whitelist: true,
      approvals_whitelist_username: [reader.name],
      dismiss_stale_approvals: true,
    });
    // A writer off the whitelist is not official; the listed reader is.
    expect((await review(repo, second, { event: 'APPROVED' })).body.official).toBe(false);
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    const approval = (await review(repo, reader, { event: 'APPROVED' })).body;
    expect(approval.official).toBe(true);
    await pushChange(repo, work, remote, 'one\nTWO\nthree\n');
    expect((await t.http.get(`${reviews(repo)}/${approval.id}`).expect(200)).body).toMatchObject({ stale: true, dismissed: true });
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    expect((await review(repo, reader, { event: 'APPROVED' })).body).toMatchObject({ official: true, stale: false, dismissed: false });
    await merge(repo).expect(200);
  });

  it('a merge scheduled for when the checks pass waits for the approvals too, and runs once they are given', async () => {
    const { repo, work } = await protectedPull({ required_approvals: 1 });
    const head = (await client.ok(['rev-parse', 'feature'], { cwd: work })).trim();
    await t.http
      .post(t.api(`/repos/${repo.full_name}/statuses/${head}`))
      .set(withToken(owner.token))
      .send({ state: 'success', context: 'ci' })
      .expect(201);
    // The checks are green, but the rule wants an approval: scheduled (201), not merged.
    await t.http
      .post(`${pulls(repo)}/1/merge`)
      .set(withToken(owner.token))
      .send({ Do: 'merge', merge_when_checks_succeed: true })
      .expect(201);
    await t.http.get(`${pulls(repo)}/1/merge`).expect(404);
    // A reader's approval is not official: still waiting.
    await review(repo, reader, { event: 'APPROVED' });
    await t.http.get(`${pulls(repo)}/1/merge`).expect(404);
    await review(repo, second, { event: 'APPROVED' });
    await t.http.get(`${pulls(repo)}/1/merge`).expect(204);
    expect((await t.http.get(`${pulls(repo)}/1`).expect(200)).body).toMatchObject({ merged: true, merged_by: { login: owner.name } });
  });

  it('ignore_stale_approvals: an approval of an older diff does not count, a fresh one does', async () => {
    const { repo, work, remote } = await protectedPull({ required_approvals: 1, ignore_stale_approvals: true });
    const approval = (await review(repo, second, { event: 'APPROVED' })).body;
    await pushChange(repo, work, remote, 'one\nTWO\nthree\n');
    expect((await t.http.get(`${reviews(repo)}/${approval.id}`).expect(200)).body).toMatchObject({ stale: true, dismissed: false, official: true });
    expect(await refusal(repo)).toBe(NOT_ENOUGH);
    await review(repo, second, { event: 'APPROVED' });
    await merge(repo).expect(200);
  });
});
