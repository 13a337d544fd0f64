import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, GitOutcome, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

/**
 * Branch protection at every door: the rules' routes, the Branch JSON per caller, and the same refusals over
 * HTTP pushes, SSH pushes with user and deploy keys, the contents API, branch deletion and creation.
 */
describe('branch protection', () => {
  let t: TestApp;
  let base: string;
  let sshPort: number;
  let client: GitClient;
  let owner: TestUser;
  let writer: TestUser;
  let releaser: TestUser;
  let siteAdmin: TestUser;
  let ownerKey: SshKeyFiles;

  const protections = (full: string) => t.api(`/repos/${full}/branch_protections`);
  const httpUrl = (full: string, who: TestUser) => withCredentials(base, `${full}.git`, who.name, who.password);
  const sshUrl = (full: string) => `ssh://git@127.0.0.1:${sshPort}/${full}.git`;

  async function seeded(): Promise<string> {
    const name = uniqueName('repo');
    await makeRepo(t, owner, { name, autoInit: true });
    const full = `${owner.name}/${name}`;
    for (const [who, permission] of [
      [writer, 'write'],
      [releaser, 'write'],
    ] as const) {
      await t.http
        .put(t.api(`/repos/${full}/collaborators/${who.name}`))
        .set(withToken(owner.token))
        .send({ permission })
        .expect(204);
    }
    return full;
  }

  async function protect(full: string, body: Record<string, unknown>): Promise<Record<string, any>> {
    const response = await t.http.post(protections(full)).set(withToken(owner.token)).send(body);
    expect(response.status).toBe(201);
    return response.body;
  }

  /** A clone of `full` (over HTTP as the owner) to commit in. */
  async function cloneOf(full: string): Promise<string> {
    const dir = path.join(fs.mkdtempSync(path.join(client.home, 'clone-')), 'repo');
    await client.ok(['clone', '--quiet', httpUrl(full, owner), dir]);
    return dir;
  }

  async function commitFile(dir: string, file: string, content = `${uniqueName('line')}\n`): Promise<void> {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.writeFileSync(path.join(dir, file), content);
    await client.ok(['add', file], { cwd: dir });
    await client.ok(['commit', '--quiet', '-m', `change ${file}`], { cwd: dir });
  }

  const push = (dir: string, url: string, refspec: string, env: Record<string, string> = {}): Promise<GitOutcome> =>
    client.run(['push', url, refspec], { cwd: dir, env });

  function refused(outcome: GitOutcome, text: string): void {
    expect(outcome.code).not.toBe(0);
    expect(outcome.stderr).toContain(`remote: Anvil: ${text}`);
  }

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    base = await t.listen();
    sshPort = t.app.get(SshEndpoint).port;
    client = new GitClient();
    owner = await makeUser(t);
    writer = await makeUser(t);
    releaser = await makeUser(t);
    siteAdmin = await makeUser(t, { admin: true });
    ownerKey = generateSshKey(client.home, uniqueName('key'));
    await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).send({ title: 'laptop', key: ownerKey.publicLine }).expect(201);
  });

  afterAll(async () => {
    client.dispose();
    await t.close();
  });

  describe('the rules', () => {
    it('creates a rule and answers Forgejo BranchProtection JSON key for key', async () => {
      const full = await seeded();
      const created = await protect(full, {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [releaser.name],
        push_whitelist_deploy_keys: true,
        required_approvals: 2,
        enable_status_check: true,
        status_check_contexts: ['ci/*'],
        protected_file_patterns: '.forgejo/workflows/**',
      });
      expect(created).toEqual({
        branch_name: 'main',
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [releaser.name],
        push_whitelist_teams: [],
        push_whitelist_deploy_keys: true,
        enable_merge_whitelist: false,
        merge_whitelist_usernames: [],
        merge_whitelist_teams: [],
        enable_status_check: true,
        status_check_contexts: ['ci/*'],
        required_approvals: 2,
        enable_approvals_whitelist: false,
        approvals_whitelist_username: [],
        approvals_whitelist_teams: [],
        block_on_rejected_reviews: false,
        block_on_official_review_requests: false,
        block_on_outdated_branch: false,
        dismiss_stale_approvals: false,
        ignore_stale_approvals: false,
        require_signed_commits: false,
        protected_file_patterns: '.forgejo/workflows/**',
        unprotected_file_patterns: '',
        apply_to_admins: false,
        created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
        updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
      const got = await t.http
        .get(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .expect(200);
      expect(got.body).toEqual(created);
    });

    it("refuses Forgejo's way: duplicates, no name, unknown users, malformed globs, non-admins", async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main' });
      const send = (body: Record<string, unknown>, who = owner) => t.http.post(protections(full)).set(withToken(who.token)).send(body);
      const duplicate = await send({ rule_name: 'main' });
      expect(duplicate.status).toBe(403);
      expect(duplicate.body.message).toBe('Branch protection already exist');
      const empty = await send({});
      expect(empty.status).toBe(400);
      expect(empty.body.message).toBe('both rule_name and branch_name are empty');
      const unknown = await send({ rule_name: 'dev', push_whitelist_usernames: ['nobody-here'] });
      expect(unknown.status).toBe(422);
      expect(unknown.body.message).toBe('user does not exist [uid: 0, name: nobody-here]');
      for (const body of [{ rule_name: 'release/[' }, { rule_name: 'release/{a,b' }, { rule_name: 'x', protected_file_patterns: 'docs/[z-a]' }]) {
        const malformed = await send(body);
        expect(malformed.status).toBe(422);
      }
      const notAdmin = await send({ rule_name: 'other' }, writer);
      expect(notAdmin.status).toBe(403);
      expect((await t.http.get(protections(full)).set(withToken(writer.token))).status).toBe(403);
      // `branch_name` alone names the rule (the deprecated field).
      expect((await send({ branch_name: 'legacy' })).status).toBe(201);
    });

    it('lists plain names before globs, older first; edits and deletes', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'release/*' });
      await protect(full, { rule_name: 'main' });
      await protect(full, { rule_name: '**' });
      await protect(full, { rule_name: 'dev' });
      const listed = await t.http.get(protections(full)).set(withToken(owner.token)).expect(200);
      expect(listed.body.map((rule: { rule_name: string }) => rule.rule_name)).toEqual(['main', 'dev', 'release/*', '**']);
      expect(listed.headers['x-total-count']).toBe('4');
      expect(listed.body.find((rule: { rule_name: string }) => rule.rule_name === '**').branch_name).toBe('');
      // Whitelist flags count only under enable_push; a list sent replaces the list; an absent one stays.
      const edited = await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: [releaser.name, writer.name], required_approvals: 1 })
        .expect(200);
      expect(edited.body).toMatchObject({
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [releaser.name, writer.name],
        required_approvals: 1,
      });
      const again = await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ enable_push: false })
        .expect(200);
      expect(again.body).toMatchObject({
        enable_push: false,
        enable_push_whitelist: false,
        push_whitelist_usernames: [releaser.name, writer.name],
        required_approvals: 1,
      });
      await t.http
        .delete(`${protections(full)}/dev`)
        .set(withToken(owner.token))
        .expect(204);
      await t.http
        .get(`${protections(full)}/dev`)
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .patch(`${protections(full)}/dev`)
        .set(withToken(owner.token))
        .send({})
        .expect(404);
    });

    it('whitelists teams of the organisation that reach the repository, read at push time', async () => {
      const org = await makeOrg(t, owner.user);
      const name = uniqueName('repo');
      await makeRepo(t, owner, { name, autoInit: true, org: org.name });
      const full = `${org.name}/${name}`;
      const team = async (teamName: string, link: boolean) => {
        const created = await t.http
          .post(t.api(`/orgs/${org.name}/teams`))
          .set(withToken(owner.token))
          .send({ name: teamName, permission: 'write', units: ['repo.code'] })
          .expect(201);
        await t.http
          .put(t.api(`/teams/${created.body.id}/members/${releaser.name}`))
          .set(withToken(owner.token))
          .expect(204);
        if (link)
          await t.http
            .put(t.api(`/teams/${created.body.id}/repos/${org.name}/${name}`))
            .set(withToken(owner.token))
            .expect(204);
        return created.body;
      };
      await team('release-managers', true);
      await team('elsewhere', false);
      const unknown = await t.http
        .post(protections(full))
        .set(withToken(owner.token))
        .send({ rule_name: 'main', push_whitelist_teams: ['nobody'] });
      expect(unknown.status).toBe(422);
      expect(unknown.body.message).toBe(`team does not exist [org_id ${org.id}, team_id 0, name: nobody]`);
      // Teams are found without regard to case; one that does not reach the repository is dropped.
      const created = await protect(full, {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_teams: ['Release-Managers', 'elsewhere'],
      });
      expect(created.push_whitelist_teams).toEqual(['release-managers']);
      const dir = await cloneOf(full);
      await commitFile(dir, 'a.txt');
      refused(await push(dir, httpUrl(full, owner), 'HEAD:refs/heads/main'), 'Not allowed to push to protected branch main');
      expect((await push(dir, httpUrl(full, releaser), 'HEAD:refs/heads/main')).code).toBe(0);
      const branch = await t.http
        .get(t.api(`/repos/${full}/branches/main`))
        .set(withToken(releaser.token))
        .expect(200);
      expect(branch.body).toMatchObject({ protected: true, user_can_push: true });
    });

    it('refuses changes to the rules of an archived repository with 423', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main' });
      await t.http
        .patch(t.api(`/repos/${full}`))
        .set(withToken(owner.token))
        .send({ archived: true })
        .expect(200);
      expect((await t.http.post(protections(full)).set(withToken(owner.token)).send({ rule_name: 'dev' })).status).toBe(423);
      expect(
        (
          await t.http
            .patch(`${protections(full)}/main`)
            .set(withToken(owner.token))
            .send({ enable_push: true })
        ).status,
      ).toBe(423);
      expect((await t.http.delete(`${protections(full)}/main`).set(withToken(owner.token))).status).toBe(423);
      await t.http
        .get(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .expect(200);
    });

    it('drops whitelisted users who cannot write (approvals: read)', async () => {
      const full = await seeded();
      const reader = await makeUser(t);
      const created = await protect(full, {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [reader.name, releaser.name],
        enable_approvals_whitelist: true,
        approvals_whitelist_username: [reader.name],
      });
      expect(created.push_whitelist_usernames).toEqual([releaser.name]);
      // Reading the (public) code is enough to stay on the approvals whitelist.
      expect(created.approvals_whitelist_username).toEqual([reader.name]);
    });

    it('follows the repository through a rename and goes with it', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main' });
      const renamed = uniqueName('renamed');
      await t.http
        .patch(t.api(`/repos/${full}`))
        .set(withToken(owner.token))
        .send({ name: renamed })
        .expect(200);
      const moved = `${owner.name}/${renamed}`;
      await t.http
        .get(`${protections(moved)}/main`)
        .set(withToken(owner.token))
        .expect(200);
      const repo = await t.http
        .get(t.api(`/repos/${moved}`))
        .set(withToken(owner.token))
        .expect(200);
      await t.http
        .delete(t.api(`/repos/${moved}`))
        .set(withToken(owner.token))
        .expect(204);
      const left = await t.dataSource.query('SELECT COUNT(*) AS n FROM protected_branch WHERE repo_id = ?', [repo.body.id]);
      expect(Number(left[0].n)).toBe(0);
    });
  });

  describe('the Branch JSON per caller', () => {
    it('tells protected, requirements, user_can_push/merge, and the rule name to administrators only', async () => {
      const full = await seeded();
      await protect(full, {
        rule_name: 'ma*',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [releaser.name],
        required_approvals: 2,
        enable_status_check: true,
        status_check_contexts: ['ci'],
      });
      const asOwner = await t.http
        .get(t.api(`/repos/${full}/branches/main`))
        .set(withToken(owner.token))
        .expect(200);
      expect(asOwner.body).toMatchObject({
        protected: true,
        required_approvals: 2,
        enable_status_check: true,
        status_check_contexts: ['ci'],
        user_can_push: false,
        user_can_merge: true,
        effective_branch_protection_name: 'ma*',
      });
      const asReleaser = await t.http
        .get(t.api(`/repos/${full}/branches/main`))
        .set(withToken(releaser.token))
        .expect(200);
      expect(asReleaser.body).toMatchObject({ protected: true, user_can_push: true, user_can_merge: true, effective_branch_protection_name: '' });
      const anonymous = await t.http.get(t.api(`/repos/${full}/branches`)).expect(200);
      expect(anonymous.body[0]).toMatchObject({
        name: 'main',
        protected: true,
        user_can_push: false,
        user_can_merge: false,
        effective_branch_protection_name: '',
      });
    });
  });

  describe('every door refuses the same', () => {
    it('HTTP pushes: deletion, force push, protected files, push permission, unprotected files; tags free', async () => {
      const full = await seeded();
      const dir = await cloneOf(full);
      await commitFile(dir, 'src/a.txt');
      await client.ok(['push', '--quiet', httpUrl(full, owner), 'HEAD:refs/heads/feature'], { cwd: dir });
      await protect(full, { rule_name: 'feature', enable_push: true, protected_file_patterns: '.forgejo/workflows/**', unprotected_file_patterns: 'docs/**' });

      refused(await push(dir, httpUrl(full, owner), ':refs/heads/feature'), 'branch feature is protected from deletion');
      await client.ok(['reset', '--quiet', '--hard', 'HEAD~1'], { cwd: dir });
      await commitFile(dir, 'src/b.txt');
      refused(await push(dir, httpUrl(full, owner), '+HEAD:refs/heads/feature'), 'branch feature is protected from force push');
      await client.ok(['reset', '--quiet', '--hard', 'origin/main'], { cwd: dir });
      await client.ok(['fetch', '--quiet', httpUrl(full, owner), 'feature'], { cwd: dir });
      await client.ok(['reset', '--quiet', '--hard', 'FETCH_HEAD'], { cwd: dir });
      await commitFile(dir, '.forgejo/workflows/CI.yml');
      // Nobody is exempt: the owner and the site administrator alike.
      refused(await push(dir, httpUrl(full, owner), 'HEAD:refs/heads/feature'), 'branch feature is protected from changing file .forgejo/workflows/ci.yml');
      refused(await push(dir, httpUrl(full, siteAdmin), 'HEAD:refs/heads/feature'), 'branch feature is protected from changing file .forgejo/workflows/ci.yml');
      await client.ok(['reset', '--quiet', '--hard', 'HEAD~1'], { cwd: dir });
      await commitFile(dir, 'src/c.txt');
      expect((await push(dir, httpUrl(full, writer), 'HEAD:refs/heads/feature')).code).toBe(0);

      // Pushing off: nobody may push, unless every changed file is unprotected.
      await t.http
        .patch(`${protections(full)}/feature`)
        .set(withToken(owner.token))
        .send({ enable_push: false })
        .expect(200);
      await commitFile(dir, 'src/d.txt');
      refused(await push(dir, httpUrl(full, owner), 'HEAD:refs/heads/feature'), 'Not allowed to push to protected branch feature');
      await client.ok(['reset', '--quiet', '--hard', 'HEAD~1'], { cwd: dir });
      await commitFile(dir, 'docs/guide.md');
      expect((await push(dir, httpUrl(full, writer), 'HEAD:refs/heads/feature')).code).toBe(0);

      // A push refused for one branch is refused whole; tags are free.
      await commitFile(dir, 'src/e.txt');
      const both = await client.run(['push', httpUrl(full, owner), 'HEAD:refs/heads/feature', 'HEAD:refs/heads/other'], { cwd: dir });
      refused(both, 'Not allowed to push to protected branch feature');
      const branches = await t.http
        .get(t.api(`/repos/${full}/branches`))
        .set(withToken(owner.token))
        .expect(200);
      expect(branches.body.map((branch: { name: string }) => branch.name)).not.toContain('other');
      expect((await push(dir, httpUrl(full, owner), 'HEAD:refs/tags/v1')).code).toBe(0);
    });

    it('judges a push of 100 000 changed paths by the protected file among them', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main', enable_push: true, protected_file_patterns: 'zz/**' });
      const dir = await cloneOf(full);
      // One commit adding 100 000 files (one blob, a hundred directories), the protected one sorted last.
      const lines = [
        'blob',
        'mark :1',
        'data 2',
        'x',
        '',
        'commit refs/heads/bulk',
        'committer Test <t@example.com> 1700000000 +0000',
        'data 5',
        'bulk',
        'from refs/heads/main',
      ];
      for (let i = 0; i < 100_000; i++) lines.push(`M 100644 :1 d${Math.floor(i / 1000)}/f${i}.txt`);
      lines.push('M 100644 :1 zz/last.txt', '');
      await client.ok(['fast-import', '--quiet'], { cwd: dir, input: lines.join('\n') });
      refused(await push(dir, httpUrl(full, owner), 'bulk:refs/heads/main'), 'branch main is protected from changing file zz/last.txt');
      await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ protected_file_patterns: '' })
        .expect(200);
      expect((await push(dir, httpUrl(full, owner), 'bulk:refs/heads/main')).code).toBe(0);
    });

    it('whitelists are read at push time: a rule change holds for the next push', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: [releaser.name] });
      const dir = await cloneOf(full);
      await commitFile(dir, 'a.txt');
      refused(await push(dir, httpUrl(full, writer), 'HEAD:refs/heads/main'), 'Not allowed to push to protected branch main');
      expect((await push(dir, httpUrl(full, releaser), 'HEAD:refs/heads/main')).code).toBe(0);
      await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ push_whitelist_usernames: [writer.name] })
        .expect(200);
      await commitFile(dir, 'b.txt');
      refused(await push(dir, httpUrl(full, releaser), 'HEAD:refs/heads/main'), 'Not allowed to push to protected branch main');
      expect((await push(dir, httpUrl(full, writer), 'HEAD:refs/heads/main')).code).toBe(0);
    });

    it('SSH pushes with a user key and with deploy keys (push_whitelist_deploy_keys)', async () => {
      const full = await seeded();
      await protect(full, { rule_name: 'main', enable_push: true, enable_push_whitelist: true, push_whitelist_usernames: [releaser.name] });
      const dir = await cloneOf(full);
      await commitFile(dir, 'a.txt');
      refused(
        await push(dir, sshUrl(full), 'HEAD:refs/heads/main', { GIT_SSH_COMMAND: sshCommand(ownerKey.privateKey) }),
        'Not allowed to push to protected branch main',
      );
      const deployKey = generateSshKey(client.home, uniqueName('deploy'));
      await t.http
        .post(t.api(`/repos/${full}/keys`))
        .set(withToken(owner.token))
        .send({ title: 'ci', key: deployKey.publicLine, read_only: false })
        .expect(201);
      const asDeployKey = { GIT_SSH_COMMAND: sshCommand(deployKey.privateKey) };
      refused(await push(dir, sshUrl(full), 'HEAD:refs/heads/main', asDeployKey), 'Not allowed to push to protected branch main');
      // Unprotected branches stay open to the key.
      expect((await push(dir, sshUrl(full), 'HEAD:refs/heads/side', asDeployKey)).code).toBe(0);
      await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ enable_push: true, enable_push_whitelist: true, push_whitelist_deploy_keys: true })
        .expect(200);
      expect((await push(dir, sshUrl(full), 'HEAD:refs/heads/main', asDeployKey)).code).toBe(0);
    });

    it("the contents API refuses with Forgejo's texts", async () => {
      const full = await seeded();
      await protect(full, {
        rule_name: 'main',
        enable_push: true,
        enable_push_whitelist: true,
        push_whitelist_usernames: [releaser.name],
        protected_file_patterns: 'secret/**',
        unprotected_file_patterns: 'docs/**',
      });
      const write = (who: TestUser, file: string, body: Record<string, unknown> = {}) =>
        t.http
          .post(t.api(`/repos/${full}/contents/${file}`))
          .set(withToken(who.token))
          .send({ content: Buffer.from('x').toString('base64'), ...body });
      const denied = await write(writer, 'src/a.txt');
      expect(denied.status).toBe(403);
      expect(denied.body.message).toBe(`user cannot commit to repo [user: ${writer.name.toLowerCase()}]`);
      expect((await write(writer, 'docs/a.md')).status).toBe(201);
      const secret = await write(releaser, 'secret/key.txt');
      expect(secret.status).toBe(403);
      expect(secret.body.message).toBe('path is protected and can not be changed [path: secret/key.txt]');
      expect((await write(releaser, 'src/b.txt')).status).toBe(201);
      // Updating and deleting a file are judged the same way.
      const written = await t.http
        .get(t.api(`/repos/${full}/contents/docs/a.md`))
        .set(withToken(owner.token))
        .expect(200);
      const update = await t.http
        .put(t.api(`/repos/${full}/contents/src/b.txt`))
        .set(withToken(writer.token))
        .send({ content: Buffer.from('y').toString('base64'), sha: written.body.sha });
      expect(update.status).toBe(403);
      expect(update.body.message).toBe(`user cannot commit to repo [user: ${writer.name.toLowerCase()}]`);
      const removal = await t.http
        .delete(t.api(`/repos/${full}/contents/docs/a.md`))
        .set(withToken(writer.token))
        .send({ sha: written.body.sha });
      expect(removal.status).toBe(200);
      const many = await t.http
        .post(t.api(`/repos/${full}/contents`))
        .set(withToken(owner.token))
        .send({ files: [{ operation: 'create', path: 'src/c.txt', content: '' }] });
      expect(many.status).toBe(403);
      // A new branch matching no rule is free; one matching a rule is judged as the push creating it.
      expect((await write(writer, 'src/d.txt', { new_branch: 'topic' })).status).toBe(201);
      await protect(full, { rule_name: 'release/*' });
      const release = await write(writer, 'src/e.txt', { new_branch: 'release/1' });
      expect(release.status).toBe(403);
      expect(release.body.message).toBe('Not allowed to push to protected branch release/1');
    });

    it("merges: the merge whitelist, required statuses, protected files, force_merge; Forgejo's 405 texts", async () => {
      const full = await seeded();
      const dir = await cloneOf(full);
      await client.ok(['checkout', '--quiet', '-b', 'feature'], { cwd: dir });
      await commitFile(dir, 'src/feature.txt');
      await client.ok(['push', '--quiet', httpUrl(full, owner), 'feature:feature'], { cwd: dir });
      await client.ok(['checkout', '--quiet', '-b', 'secret', 'origin/main'], { cwd: dir });
      await commitFile(dir, 'secret/key.txt');
      await client.ok(['push', '--quiet', httpUrl(full, owner), 'secret:secret'], { cwd: dir });
      await protect(full, {
        rule_name: 'main',
        enable_status_check: true,
        status_check_contexts: ['ci/*'],
        enable_merge_whitelist: true,
        merge_whitelist_usernames: [releaser.name, owner.name],
        protected_file_patterns: 'secret/**',
      });
      const open = async (head: string): Promise<{ index: number; sha: string }> => {
        const created = await t.http
          .post(t.api(`/repos/${full}/pulls`))
          .set(withToken(owner.token))
          .send({ head, base: 'main', title: `merge ${head}` })
          .expect(201);
        for (let attempt = 0; attempt < 400; attempt++) {
          const pull = await t.http
            .get(t.api(`/repos/${full}/pulls/${created.body.number}`))
            .set(withToken(owner.token))
            .expect(200);
          if (pull.body.mergeable) return { index: created.body.number, sha: pull.body.head.sha };
          await new Promise((resolve) => setTimeout(resolve, 25));
        }
        throw new Error('the pull request never became mergeable');
      };
      const merge = (index: number, who: TestUser, body: Record<string, unknown> = {}) =>
        t.http
          .post(t.api(`/repos/${full}/pulls/${index}/merge`))
          .set(withToken(who.token))
          .send({ Do: 'merge', ...body });
      const feature = await open('feature');
      const notListed = await merge(feature.index, writer);
      expect(notListed.status).toBe(405);
      expect(notListed.body.message).toBe('User not allowed to merge PR');
      const red = await merge(feature.index, releaser);
      expect(red.status).toBe(405);
      expect(red.body.message).toBe('not allowed to merge [reason: Not all required status checks successful]');
      await t.http
        .post(t.api(`/repos/${full}/statuses/${feature.sha}`))
        .set(withToken(owner.token))
        .send({ state: 'success', context: 'ci/build' })
        .expect(201);
      // Pushing is off on main, but a merge is judged by the merge rules.
      expect((await merge(feature.index, releaser)).status).toBe(200);

      const secret = await open('secret');
      await t.http
        .post(t.api(`/repos/${full}/statuses/${secret.sha}`))
        .set(withToken(owner.token))
        .send({ state: 'success', context: 'ci/build' })
        .expect(201);
      const protectedFile = await merge(secret.index, releaser, { force_merge: true });
      expect(protectedFile.status).toBe(405);
      expect(protectedFile.body.message).toBe('not allowed to merge [reason: Changed protected files]');
      // A repository administrator may force it, unless the rule applies to administrators.
      await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ apply_to_admins: true })
        .expect(200);
      expect((await merge(secret.index, owner, { force_merge: true })).status).toBe(405);
      await t.http
        .patch(`${protections(full)}/main`)
        .set(withToken(owner.token))
        .send({ apply_to_admins: false })
        .expect(200);
      expect((await merge(secret.index, owner, { force_merge: true })).status).toBe(200);
    });

    it('DELETE /branches and POST /branches', async () => {
      const full = await seeded();
      await t.http
        .post(t.api(`/repos/${full}/branches`))
        .set(withToken(owner.token))
        .send({ new_branch_name: 'stable' })
        .expect(201);
      await protect(full, { rule_name: 'Stable' });
      const deleted = await t.http.delete(t.api(`/repos/${full}/branches/stable`)).set(withToken(siteAdmin.token));
      expect(deleted.status).toBe(403);
      expect(deleted.body.message).toBe('branch protected');
      await protect(full, { rule_name: 'release/**' });
      const created = await t.http
        .post(t.api(`/repos/${full}/branches`))
        .set(withToken(owner.token))
        .send({ new_branch_name: 'release/v1/rc' });
      expect(created.status).toBe(403);
      expect(created.body.message).toBe('Not allowed to push to protected branch release/v1/rc');
      await t.http
        .patch(`${protections(full)}/release%2F%2A%2A`)
        .set(withToken(owner.token))
        .send({ enable_push: true })
        .expect(200);
      await t.http
        .post(t.api(`/repos/${full}/branches`))
        .set(withToken(writer.token))
        .send({ new_branch_name: 'release/v1/rc' })
        .expect(201);
      await t.http
        .delete(t.api(`/repos/${full}/branches/unprotected-missing`))
        .set(withToken(owner.token))
        .expect(404);
    });
  });
});
