import * as fs from 'node:fs';
import * as path from 'node:path';
import { makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Merging pull requests over HTTP: each style's commits (parents, messages, authors and committers) read back
 * with git, Forgejo's refusals, the head and base races, and updating a pull request's head from its base.
 */
describe('pull request merges: POST/GET …/pulls/{index}/merge, POST …/update', () => {
  let t: TestApp;
  let base: string;
  let client: GitClient;
  let owner: TestUser;
  let writer: TestUser;
  let reader: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    base = await t.listen();
    client = new GitClient();
    [owner, writer, reader] = [await makeUser(t, { fullName: 'Olive Owner' } as never), await makeUser(t), await makeUser(t)];
  });
  afterAll(async () => {
    client?.dispose();
    await t?.close();
  });

  const pulls = (repo: Record<string, any>) => t.api(`/repos/${repo.full_name}/pulls`);

  /** `main` with two files, `feature` (one commit on file.txt) and `main` moved on by one commit on other.txt. */
  async function diverged(): Promise<{ repo: Record<string, any>; work: string; remote: string }> {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/collaborators/${writer.name}`))
      .set(withToken(owner.token))
      .send({ permission: 'write' })
      .expect(204);
    const work = await client.workingCopy('main', { 'README.md': 'hello\n', 'file.txt': 'one\ntwo\nthree\n', 'other.txt': 'other\n' });
    const remote = withCredentials(base, `${repo.full_name}.git`, owner.name, owner.password);
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'feature'], { cwd: work });
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nTWO\nthree\n');
    await client.ok(['commit', '--quiet', '-am', 'change file\n\nwith a body'], {
      cwd: work,
      env: { GIT_AUTHOR_NAME: 'Feature Author', GIT_AUTHOR_EMAIL: 'feature@example.com', GIT_AUTHOR_DATE: '@1600000000 +0200' },
    });
    fs.writeFileSync(path.join(work, 'new.txt'), 'new\n');
    await client.ok(['add', 'new.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'add new'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'feature:feature'], { cwd: work });
    await client.ok(['checkout', '--quiet', 'main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'other.txt'), 'other 2\n');
    await client.ok(['commit', '--quiet', '-am', 'move main on'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    return { repo, work, remote };
  }

  async function open(repo: Record<string, any>, head = 'feature', title = 'Change the file'): Promise<number> {
    const created = await t.http.post(pulls(repo)).set(withToken(owner.token)).send({ head, base: 'main', title }).expect(201);
    return tested(repo, created.body.number as number);
  }

  /** Waits until the pull request's mergeability test has run. */
  async function tested(repo: Record<string, any>, index: number): Promise<number> {
    for (let attempt = 0; attempt < 400; attempt++) {
      const rows = await t.dataSource.query('SELECT status FROM pull_request WHERE base_repo_id = ? AND repo_index = ?', [repo.id, index]);
      if (Number(rows[0].status) !== 1) return index;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(
      'the mergeability test never ran: ' + JSON.stringify(await t.dataSource.query('SELECT * FROM pull_request WHERE base_repo_id = ?', [repo.id])),
    );
  }

  /** The commit `ref` of the server's repository holds, as git prints it, with its id. */
  async function commitOf(remote: string, work: string, ref: string): Promise<{ sha: string; raw: string }> {
    await client.ok(['fetch', '--quiet', remote, `+${ref}:refs/remotes/check/${ref.replace(/^refs\/heads\//, '')}`], { cwd: work });
    const sha = (await client.ok(['rev-parse', `refs/remotes/check/${ref.replace(/^refs\/heads\//, '')}`], { cwd: work })).trim();
    return { sha, raw: await client.ok(['cat-file', 'commit', sha], { cwd: work }) };
  }

  const merge = (repo: Record<string, any>, index: number, body: Record<string, unknown>, token = owner.token) =>
    t.http
      .post(`${pulls(repo)}/${index}/merge`)
      .set(withToken(token))
      .send(body);

  it('merge: a merge commit of base and head with the default title, the merger as author and committer; the pull request closed as merged', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    const before = await commitOf(remote, work, 'refs/heads/main');
    const head = await commitOf(remote, work, 'refs/heads/feature');
    await t.http.get(`${pulls(repo)}/${index}/merge`).expect(404);
    await merge(repo, index, { Do: 'merge' }, writer.token).expect(200);
    const after = await commitOf(remote, work, 'refs/heads/main');
    expect(after.raw).toContain(`parent ${before.sha}\nparent ${head.sha}\n`);
    expect(after.raw).toMatch(new RegExp(`\nauthor ${writer.name} <${writer.name.toLowerCase()}@example.com> \\d+ \\+0000\ncommitter ${writer.name} <`));
    expect(after.raw.endsWith(`\n\nMerge pull request 'Change the file' (#${index}) from feature into main\n`)).toBe(true);
    await t.http.get(`${pulls(repo)}/${index}/merge`).expect(204);
    const pull = (await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body;
    expect(pull).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: after.sha, merged_by: { login: writer.name } });
    expect(pull.merged_at).not.toBeNull();
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.open_pr_counter).toBe(0);
    // Merged already: 405 with Forgejo's empty message; a closed pull request's merge is 404.
    expect((await merge(repo, index, { Do: 'merge' }).expect(405)).body.message).toBe('');
  });

  it('a merge asked while a test waits (a push moments ago) runs the test then and there instead of 405', async () => {
    const { repo } = await diverged();
    const index = await open(repo);
    // As a push to its base leaves it: asked for a new test that the background has not run yet.
    await t.dataSource.query('UPDATE pull_request SET status = 1, check_version = check_version + 1 WHERE base_repo_id = ? AND repo_index = ?', [
      repo.id,
      index,
    ]);
    // A reader is refused before any test runs for them.
    expect((await merge(repo, index, { Do: 'merge' }, reader.token).expect(405)).body.message).toBe('User not allowed to merge PR');
    const [waiting] = await t.dataSource.query('SELECT status FROM pull_request WHERE base_repo_id = ? AND repo_index = ?', [repo.id, index]);
    expect(Number(waiting.status)).toBe(1);
    await merge(repo, index, { Do: 'merge' }, writer.token).expect(200);
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body).toMatchObject({ merged: true, mergeable: true });
  });

  it('a merge asked while another instance holds the test waits for it, and judges its outcome, instead of 405', async () => {
    const { repo } = await diverged();
    const index = await open(repo);
    // As another instance's drain leaves it while it tests: a new test asked for, and claimed for two minutes.
    const until = Math.floor(Date.now() / 1000) + 120;
    await t.dataSource.query(
      'UPDATE pull_request SET status = 1, check_version = check_version + 1, check_claimed_until = ? WHERE base_repo_id = ? AND repo_index = ?',
      [until, repo.id, index],
    );
    const merging = merge(repo, index, { Do: 'merge' }, writer.token).then((response) => response);
    // That instance gives the test up (its claim released, nothing stored): the waiting merge takes it and runs it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    await t.dataSource.query('UPDATE pull_request SET check_claimed_until = 0 WHERE base_repo_id = ? AND repo_index = ?', [repo.id, index]);
    const answer = await merging;
    expect({ status: answer.status, message: answer.body?.message }).toEqual({ status: 200, message: undefined });
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body).toMatchObject({ merged: true });
  });

  it('squash: one commit with the poster as author, the merger as committer, title, body and trailers', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo, 'feature', 'Squash me');
    const before = await commitOf(remote, work, 'refs/heads/main');
    await merge(repo, index, { Do: 'squash', MergeMessageField: '  the body  ' }, writer.token).expect(200);
    const after = await commitOf(remote, work, 'refs/heads/main');
    expect(after.raw.match(/^parent /gm)).toHaveLength(1);
    expect(after.raw).toContain(`parent ${before.sha}\n`);
    const poster = `Olive Owner <${owner.name.toLowerCase()}@example.com>`;
    expect(after.raw).toMatch(new RegExp(`\nauthor ${poster} \\d+ \\+0000\ncommitter ${writer.name} <`));
    expect(after.raw.endsWith(`\n\nSquash me (#${index})\n\nthe body\nCo-authored-by: ${poster}\nCo-committed-by: ${poster}\n`)).toBe(true);
    const tree = (await client.ok(['ls-tree', '-r', '--name-only', after.sha], { cwd: work })).trim().split('\n');
    expect(tree).toEqual(['README.md', 'file.txt', 'new.txt', 'other.txt']);
  });

  it('rebase: the head replayed on the base (authors, dates and messages kept, the merger as committer); rebase-merge adds a merge commit', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    const before = await commitOf(remote, work, 'refs/heads/main');
    await merge(repo, index, { Do: 'rebase' }, writer.token).expect(200);
    const tip = await commitOf(remote, work, 'refs/heads/main');
    const log = (await client.ok(['log', '--format=%P|%an|%ad|%cn|%B', '--date=raw', `${before.sha}..${tip.sha}`], { cwd: work })).trim();
    expect(log).toContain('|Feature Author|1600000000 +0200|' + writer.name + '|change file\n\nwith a body');
    expect((await client.ok(['rev-list', '--count', `${before.sha}..${tip.sha}`], { cwd: work })).trim()).toBe('2');
    expect((await client.ok(['rev-list', '--merges', '--count', `${before.sha}..${tip.sha}`], { cwd: work })).trim()).toBe('0');
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body).toMatchObject({ merged: true, merge_commit_sha: tip.sha });

    const second = await diverged();
    const other = await open(second.repo);
    const start = await commitOf(second.remote, second.work, 'refs/heads/main');
    await merge(second.repo, other, { Do: 'rebase-merge', MergeTitleField: 'My title' }).expect(200);
    const merged = await commitOf(second.remote, second.work, 'refs/heads/main');
    expect(merged.raw).toContain(`parent ${start.sha}\n`);
    expect(merged.raw.endsWith('\n\nMy title\n')).toBe(true);
    expect((await client.ok(['rev-list', '--count', `${start.sha}..${merged.sha}`], { cwd: second.work })).trim()).toBe('3');
  });

  it('fast-forward-only: the head itself when it contains the base; 409 when they diverged', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    expect((await merge(repo, index, { Do: 'fast-forward-only' }).expect(409)).body.message).toMatch(/Not possible to fast-forward/);
    await client.ok(['checkout', '--quiet', '-b', 'ahead', 'main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'ahead.txt'), 'ahead\n');
    await client.ok(['add', 'ahead.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'ahead'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'ahead:ahead'], { cwd: work });
    const ahead = await open(repo, 'ahead', 'Ahead');
    const head = await commitOf(remote, work, 'refs/heads/ahead');
    await merge(repo, ahead, { Do: 'fast-forward-only' }).expect(200);
    expect((await commitOf(remote, work, 'refs/heads/main')).sha).toBe(head.sha);
  });

  it('refuses as Forgejo: readers (405), disallowed styles (405), a stale head (409), conflicts (409), unknown Do (422)', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    const before = await commitOf(remote, work, 'refs/heads/main');
    expect((await merge(repo, index, { Do: 'merge' }, reader.token).expect(405)).body.message).toBe('User not allowed to merge PR');
    await merge(repo, index, {}).expect(422);
    await merge(repo, index, { Do: 'octopus' }).expect(422);
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ allow_squash_merge: false })
      .expect(200);
    expect((await merge(repo, index, { Do: 'squash' }).expect(405)).body.message).toBe('squash is not allowed an allowed merge style for this repository');
    expect((await merge(repo, index, { Do: 'merge', head_commit_id: before.sha }).expect(409)).body.message).toBe('head out of date');
    expect((await commitOf(remote, work, 'refs/heads/main')).sha).toBe(before.sha);

    await t.http
      .patch(`${pulls(repo)}/${index}`)
      .set(withToken(owner.token))
      .send({ title: 'WIP: later' })
      .expect(201);
    expect((await merge(repo, index, { Do: 'merge' }).expect(405)).body.message).toBe('Work in progress PRs cannot be merged');
    await t.http
      .patch(`${pulls(repo)}/${index}`)
      .set(withToken(owner.token))
      .send({ title: 'now' })
      .expect(201);
    fs.writeFileSync(path.join(work, 'file.txt'), 'one\nDOS\nthree\n');
    await client.ok(['commit', '--quiet', '-am', 'conflict'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'main:main'], { cwd: work });
    await tested(repo, index);
    // Refused by its last test (Forgejo's "try again later") or, should that test not have run yet, by the merge.
    const refused = await merge(repo, index, { Do: 'merge' });
    expect(
      refused.status === 405 ? refused.body.message : refused.status === 409 ? refused.body.message.replace(/: conflicting files: .*/, '') : refused.status,
    ).toMatch(/^(Please try again later|Merge Conflict Error: merge)$/);
    const conflictTip = (await commitOf(remote, work, 'refs/heads/main')).sha;
    expect(conflictTip).toBe((await client.ok(['rev-parse', 'main'], { cwd: work })).trim());
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body).toMatchObject({ state: 'open', merged: false });
  });

  it("follows the base's protection rule: its merge whitelist and its required status checks", async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    const rules = t.api(`/repos/${repo.full_name}/branch_protections`);
    await t.http
      .post(rules)
      .set(withToken(owner.token))
      .send({
        rule_name: 'main',
        enable_merge_whitelist: true,
        merge_whitelist_usernames: [owner.name],
        enable_status_check: true,
        status_check_contexts: ['ci/*'],
      })
      .expect(201);
    expect((await merge(repo, index, { Do: 'merge' }, writer.token).expect(405)).body.message).toBe('User not allowed to merge PR');
    expect((await merge(repo, index, { Do: 'merge' }).expect(405)).body.message).toBe(
      'not allowed to merge [reason: Not all required status checks successful]',
    );
    const head = await commitOf(remote, work, 'refs/heads/feature');
    const statuses = t.api(`/repos/${repo.full_name}/statuses/${head.sha}`);
    await t.http.post(statuses).set(withToken(owner.token)).send({ state: 'failure', context: 'ci/build' }).expect(201);
    expect((await merge(repo, index, { Do: 'merge' }).expect(405)).body.message).toBe(
      'not allowed to merge [reason: Not all required status checks successful]',
    );
    await t.http.post(statuses).set(withToken(owner.token)).send({ state: 'success', context: 'ci/build' }).expect(201);
    await merge(repo, index, { Do: 'merge' }).expect(200);
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body.merged).toBe(true);
  });

  it('merge_when_checks_succeed schedules the merge (201) until the head has a successful status; DELETE cancels it', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    await merge(repo, index, { Do: 'squash', merge_when_checks_succeed: true }).expect(201);
    expect((await merge(repo, index, { Do: 'squash', merge_when_checks_succeed: true }).expect(409)).body.message).toMatch(/already scheduled to auto merge/);
    await t.http
      .delete(`${pulls(repo)}/${index}/merge`)
      .set(withToken(reader.token))
      .expect(403);
    await t.http
      .delete(`${pulls(repo)}/${index}/merge`)
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .delete(`${pulls(repo)}/${index}/merge`)
      .set(withToken(owner.token))
      .expect(404);
    // The scheduled merge is looked up before its scheduler-or-admin rule: none, 404 for anyone signed in.
    await t.http
      .delete(`${pulls(repo)}/${index}/merge`)
      .set(withToken(reader.token))
      .expect(404);
    await t.http.delete(`${pulls(repo)}/${index}/merge`).expect(401);
    await merge(repo, index, { Do: 'merge', merge_when_checks_succeed: true }, writer.token).expect(201);
    const head = await commitOf(remote, work, 'refs/heads/feature');
    const statuses = t.api(`/repos/${repo.full_name}/statuses/${head.sha}`);
    await t.http.post(statuses).set(withToken(owner.token)).send({ state: 'pending', context: 'ci' }).expect(201);
    await t.http.get(`${pulls(repo)}/${index}/merge`).expect(404);
    await t.http.post(statuses).set(withToken(owner.token)).send({ state: 'success', context: 'ci' }).expect(201);
    await t.http.get(`${pulls(repo)}/${index}/merge`).expect(204);
    const tip = await commitOf(remote, work, 'refs/heads/main');
    expect(tip.raw).toContain(`parent ${head.sha}\n`);
    expect((await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body).toMatchObject({ merged: true, merged_by: { login: writer.name } });
  });

  it('two pull requests merged into one base at once: each lands or answers 409, and the base holds every one that landed', async () => {
    const { repo, work, remote } = await diverged();
    await client.ok(['checkout', '--quiet', '-b', 'second', 'main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'second.txt'), 'second\n');
    await client.ok(['add', 'second.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'second'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'second:second'], { cwd: work });
    const first = await open(repo, 'feature', 'First');
    const second = await open(repo, 'second', 'Second');
    const answers = await Promise.all([merge(repo, first, { Do: 'merge' }), merge(repo, second, { Do: 'squash' })]);
    expect(answers.map((answer) => answer.status).every((status) => status === 200 || status === 409)).toBe(true);
    expect(answers.some((answer) => answer.status === 200)).toBe(true);
    const tip = await commitOf(remote, work, 'refs/heads/main');
    for (const [i, index] of [first, second].entries()) {
      const pull = (await t.http.get(`${pulls(repo)}/${index}`).expect(200)).body;
      expect(pull.merged).toBe(answers[i].status === 200);
      if (pull.merged) await client.ok(['merge-base', '--is-ancestor', pull.merge_commit_sha, tip.sha], { cwd: work });
      else expect(answers[i].body.message).toBe('merge push out of date');
    }
  });

  it('deletes the head branch after the merge when asked, and marks a pull request merged by hand', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    await merge(repo, index, { Do: 'merge', delete_branch_after_merge: true }).expect(200);
    expect((await client.ok(['ls-remote', remote, 'refs/heads/feature'], { cwd: work })).trim()).toBe('');

    await client.ok(['fetch', '--quiet', remote, 'main:refs/remotes/server/main'], { cwd: work });
    await client.ok(['checkout', '--quiet', '-b', 'manual', 'refs/remotes/server/main'], { cwd: work });
    fs.writeFileSync(path.join(work, 'manual.txt'), 'manual\n');
    await client.ok(['add', 'manual.txt'], { cwd: work });
    await client.ok(['commit', '--quiet', '-m', 'manual'], { cwd: work });
    await client.ok(['push', '--quiet', remote, 'manual:manual'], { cwd: work });
    const manual = await open(repo, 'manual', 'Manual');
    const sha = (await client.ok(['rev-parse', 'manual'], { cwd: work })).trim();
    expect((await merge(repo, manual, { Do: 'manually-merged', MergeCommitID: sha }).expect(405)).body.message).toBe(
      'manually-merged is not allowed an allowed merge style for this repository',
    );
    await t.http
      .patch(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .send({ allow_manual_merge: true })
      .expect(200);
    expect((await merge(repo, manual, { Do: 'manually-merged', MergeCommitID: sha }).expect(409)).body.message).toBe('Wrong commit ID');
    await client.ok(['push', '--quiet', remote, 'manual:main'], { cwd: work });
    await merge(repo, manual, { Do: 'manually-merged', MergeCommitID: sha }).expect(200);
    expect((await t.http.get(`${pulls(repo)}/${manual}`).expect(200)).body).toMatchObject({ state: 'closed', merged: true, merge_commit_sha: sha });
  });

  it('updates the head from the base by merge or rebase, for callers who may push it only', async () => {
    const { repo, work, remote } = await diverged();
    const index = await open(repo);
    const mainTip = await commitOf(remote, work, 'refs/heads/main');
    const headTip = await commitOf(remote, work, 'refs/heads/feature');
    await t.http
      .post(`${pulls(repo)}/${index}/update`)
      .set(withToken(reader.token))
      .expect(403);
    // The pull request is looked up before the rule of who may push its head (404, then 403); sign-in first.
    await t.http
      .post(`${pulls(repo)}/99/update`)
      .set(withToken(reader.token))
      .expect(404);
    await t.http.post(`${pulls(repo)}/${index}/update`).expect(401);
    await t.http
      .post(`${pulls(repo)}/${index}/update`)
      .set(withToken(writer.token))
      .expect(200);
    const merged = await commitOf(remote, work, 'refs/heads/feature');
    expect(merged.raw).toContain(`parent ${headTip.sha}\nparent ${mainTip.sha}\n`);
    expect(merged.raw.endsWith("\n\nMerge branch 'main' into feature\n")).toBe(true);
    // Up to date: nothing moves.
    await t.http
      .post(`${pulls(repo)}/${index}/update?style=rebase`)
      .set(withToken(writer.token))
      .expect(200);
    expect((await commitOf(remote, work, 'refs/heads/feature')).sha).toBe(merged.sha);

    const second = await diverged();
    const other = await open(second.repo);
    const baseTip = await commitOf(second.remote, second.work, 'refs/heads/main');
    await t.http
      .patch(t.api(`/repos/${second.repo.full_name}`))
      .set(withToken(owner.token))
      .send({ allow_rebase_update: false })
      .expect(200);
    await t.http
      .post(`${pulls(second.repo)}/${other}/update?style=rebase`)
      .set(withToken(owner.token))
      .expect(403);
    await t.http
      .patch(t.api(`/repos/${second.repo.full_name}`))
      .set(withToken(owner.token))
      .send({ allow_rebase_update: true })
      .expect(200);
    await t.http
      .post(`${pulls(second.repo)}/${other}/update?style=rebase`)
      .set(withToken(owner.token))
      .expect(200);
    const rebased = await commitOf(second.remote, second.work, 'refs/heads/feature');
    await client.ok(['merge-base', '--is-ancestor', baseTip.sha, rebased.sha], { cwd: second.work });
    expect((await client.ok(['rev-list', '--count', `${baseTip.sha}..${rebased.sha}`], { cwd: second.work })).trim()).toBe('2');
  });
});
