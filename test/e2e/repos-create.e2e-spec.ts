import * as fs from 'node:fs';
import * as path from 'node:path';
import type { UserEntity } from '../../src/users/user.entity';
import { UsersService } from '../../src/users/users.service';
import { makeOrg, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { git, regularFileBytes, repositoryDir } from '../support/git';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';
import { SshEndpoint } from '../../src/common/ssh-endpoint';

const REPOSITORY_KEYS = [
  'allow_fast_forward_only_merge',
  'allow_merge_commits',
  'allow_rebase',
  'allow_rebase_explicit',
  'allow_rebase_update',
  'allow_squash_merge',
  'archived',
  'archived_at',
  'avatar_url',
  'clone_url',
  'created_at',
  'default_allow_maintainer_edit',
  'default_branch',
  'default_delete_branch_after_merge',
  'default_merge_style',
  'description',
  'empty',
  'fork',
  'forks_count',
  'full_name',
  'globally_editable_wiki',
  'has_actions',
  'has_issues',
  'has_packages',
  'has_projects',
  'has_pull_requests',
  'has_releases',
  'has_wiki',
  'html_url',
  'id',
  'ignore_whitespace_conflicts',
  'internal',
  'internal_tracker',
  'language',
  'languages_url',
  'licenses',
  'link',
  'mirror',
  'mirror_interval',
  'mirror_updated',
  'name',
  'object_format_name',
  'open_issues_count',
  'open_pr_counter',
  'original_url',
  'owner',
  'parent',
  'permissions',
  'private',
  'repo_transfer',
  'size',
  'ssh_url',
  'stars_count',
  'template',
  'topics',
  'updated_at',
  'url',
  'watchers_count',
  'website',
];

describe('repository creation', () => {
  let t: TestApp;
  let alice: TestUser;
  let bob: TestUser;
  let admin: TestUser;
  let org: UserEntity;

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    alice = await makeUser(t);
    bob = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    org = await makeOrg(t, alice.user);
  });
  afterAll(() => t.close());

  const repoDir = (owner: string, name: string) => repositoryDir(t.dataDir, owner, name);
  const createFor = (user: TestUser, body: unknown) =>
    t.http
      .post(t.api('/user/repos'))
      .set(withToken(user.token))
      .send(body as object);
  const numRepos = async (id: number) => Number((await t.dataSource.query(`SELECT num_repos AS n FROM ${quoted('user')} WHERE id = ${id}`))[0].n);
  const repoRows = async (name: string) =>
    Number((await t.dataSource.query(`SELECT COUNT(*) AS n FROM repository WHERE lower_name = '${name.toLowerCase()}'`))[0].n);
  const quoted = (table: string) => (t.dataSource.options.type === 'mysql' ? `\`${table}\`` : `"${table}"`);

  describe('POST /user/repos', () => {
    it('creates an empty bare repository with HEAD on main and answers the exact Repository JSON', async () => {
      const before = await numRepos(alice.user.id);
      const name = uniqueName('Empty');
      const response = await createFor(alice, { name, description: 'just a test' }).expect(201);
      const repo = response.body;
      expect(Object.keys(repo).sort()).toEqual(REPOSITORY_KEYS);
      expect(repo).toMatchObject({
        name,
        full_name: `${alice.name}/${name}`,
        description: 'just a test',
        empty: true,
        private: false,
        fork: false,
        template: false,
        parent: null,
        mirror: false,
        html_url: `http://anvil.test/${alice.name}/${name}`,
        url: `http://anvil.test/api/v1/repos/${alice.name}/${name}`,
        ssh_url: `ssh://git@anvil.test:${t.app.get(SshEndpoint).port}/${alice.name}/${name}.git`,
        clone_url: `http://anvil.test/${alice.name}/${name}.git`,
        original_url: '',
        website: '',
        stars_count: 0,
        forks_count: 0,
        watchers_count: 1,
        open_issues_count: 0,
        has_issues: true,
        internal_tracker: { enable_time_tracker: true, allow_only_contributors_to_track_time: true, enable_issue_dependencies: true },
        default_branch: 'main',
        archived: false,
        internal: false,
        mirror_interval: '',
        mirror_updated: '0001-01-01T00:00:00Z',
        object_format_name: 'sha1',
        topics: [],
        permissions: { admin: true, push: true, pull: true },
      });
      expect(repo.owner.login).toBe(alice.name);
      expect(repo.owner.email).toBe(alice.email);
      expect(repo.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(repo.updated_at).toBe(repo.created_at);

      const dir = repoDir(alice.name, name);
      expect(git(dir, 'rev-parse', '--is-bare-repository').trim()).toBe('true');
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/main');
      expect(() => git(dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main')).toThrow();
      expect(repo.size).toBe(Math.floor(regularFileBytes(dir) / 1024));
      expect(await numRepos(alice.user.id)).toBe(before + 1);
    });

    it('auto_init makes one real commit by the creator with README, .gitignore and LICENSE', async () => {
      const name = uniqueName('Init');
      const response = await createFor(alice, {
        name,
        description: 'Described here',
        auto_init: true,
        gitignores: 'Go,Node',
        license: 'MIT',
        default_branch: 'trunk',
      }).expect(201);
      expect(response.body.empty).toBe(false);
      expect(response.body.default_branch).toBe('trunk');
      const dir = repoDir(alice.name, name);
      expect(git(dir, 'symbolic-ref', 'HEAD').trim()).toBe('refs/heads/trunk');
      const log = git(dir, 'log', '--format=%an|%ae|%cn|%ce|%B', 'trunk').trim();
      expect(log).toBe(`${alice.name}|${alice.email}|${alice.name}|${alice.email}|Initial commit`);
      expect(git(dir, 'rev-list', '--count', 'trunk').trim()).toBe('1');
      expect(git(dir, 'ls-tree', '--name-only', 'trunk').trim().split('\n')).toEqual(['.gitignore', 'LICENSE', 'README.md']);
      expect(git(dir, 'show', 'trunk:README.md')).toBe(`# ${name}\n\nDescribed here`);
      const gitignore = git(dir, 'show', 'trunk:.gitignore');
      expect(gitignore.startsWith('# ---> Go\n')).toBe(true);
      expect(gitignore).toContain('\n# ---> Node\n');
      expect(gitignore).toContain('node_modules/');
      const license = git(dir, 'show', 'trunk:LICENSE');
      expect(license).toContain(`Copyright (c) ${new Date().getUTCFullYear()} ${alice.name}`);
      expect(license).not.toContain('<year>');
      expect(license).toContain('Permission is hereby granted');
      expect(response.body.size).toBe(Math.floor(regularFileBytes(dir) / 1024));
    });

    it('auto_init without templates commits only the Default README', async () => {
      const name = uniqueName('plain');
      await createFor(alice, { name, auto_init: true }).expect(201);
      const dir = repoDir(alice.name, name);
      expect(git(dir, 'ls-tree', '--name-only', 'main').trim()).toBe('README.md');
      expect(git(dir, 'show', 'main:README.md')).toBe(`# ${name}\n\n`);
    });

    it('signs the commit with the full name, and with the no-reply address when the email is hidden', async () => {
      const carol = await makeUser(t, { fullName: 'Carol Example' });
      await t.app.get(UsersService).edit(carol.name, { hideEmail: true });
      const name = uniqueName('signed');
      await createFor(carol, { name, auto_init: true, license: 'Apache-2.0' }).expect(201);
      const dir = repoDir(carol.name, name);
      const noReply = `${carol.name.toLowerCase()}@noreply.anvil.test`;
      expect(git(dir, 'log', '--format=%an|%ae', 'main').trim()).toBe(`Carol Example|${noReply}`);
      expect(git(dir, 'show', 'main:LICENSE')).toContain(`Copyright ${new Date().getUTCFullYear()} ${carol.name}`);
    });

    it('creates a sha256 repository when asked', async () => {
      const name = uniqueName('sha');
      const response = await createFor(alice, { name, auto_init: true, object_format_name: 'sha256' }).expect(201);
      expect(response.body.object_format_name).toBe('sha256');
      const dir = repoDir(alice.name, name);
      expect(git(dir, 'rev-parse', '--show-object-format').trim()).toBe('sha256');
      expect(git(dir, 'rev-parse', 'main').trim()).toMatch(/^[0-9a-f]{64}$/);
    });

    it('stores private and template and echoes them', async () => {
      const response = await createFor(alice, { name: uniqueName('priv'), private: true, template: true }).expect(201);
      expect(response.body.private).toBe(true);
      expect(response.body.template).toBe(true);
    });

    it('the creator watches the new repository', async () => {
      const name = uniqueName('watched');
      await createFor(alice, { name }).expect(201);
      const watch = await t.http
        .get(t.api(`/repos/${alice.name}/${name}/subscription`))
        .set(withToken(alice.token))
        .expect(200);
      expect(watch.body.subscribed).toBe(true);
    });

    const invalid: [string | null, Record<string, unknown>, string][] = [
      [null, {}, '[Name]: Required'],
      [null, { name: '' }, '[Name]: Required'],
      [null, { name: 'bad name' }, '[Name]: AlphaDashDot'],
      [null, { name: 'bad/name' }, '[Name]: AlphaDashDot'],
      ['a 101-character name', { name: 'a'.repeat(101) }, '[Name]: MaxSize'],
      ['a 2049-character description', { name: 'ok', description: 'd'.repeat(2049) }, '[Description]: MaxSize'],
      [null, { name: 'ok', default_branch: 'a..b' }, '[DefaultBranch]: GitRefName'],
      [null, { name: 'ok', default_branch: '-dash' }, '[DefaultBranch]: GitRefName'],
      [null, { name: 'ok', default_branch: 'has space' }, '[DefaultBranch]: GitRefName'],
      ['a 101-character default branch', { name: 'ok', default_branch: 'b'.repeat(101) }, '[DefaultBranch]: MaxSize'],
      [null, { name: 'ok', object_format_name: 'md5' }, '[ObjectFormatName]: In'],
      [null, { name: 'ok', private: 'yes' }, '[Private]: must be a boolean'],
      [null, { name: '.' }, 'name is reserved [name: .]'],
      [null, { name: '..' }, 'name is reserved [name: ..]'],
      [null, { name: '-' }, 'name is reserved [name: -]'],
      [null, { name: 'thing.git' }, 'name pattern is not allowed [pattern: *.git]'],
      [null, { name: 'thing.WIKI' }, 'name pattern is not allowed [pattern: *.wiki]'],
      [null, { name: 'thing.rss' }, 'name pattern is not allowed [pattern: *.rss]'],
      [null, { name: 'thing.atom' }, 'name pattern is not allowed [pattern: *.atom]'],
      [null, { name: 'ok', auto_init: true, readme: 'Fancy' }, 'readme template does not exist, available templates: [Default]'],
    ];
    it.each(invalid.map(([label, body, message]) => [label ?? JSON.stringify(body), message, body] as const))(
      'refuses %s with 422 %s and writes nothing',
      async (_label, message, body) => {
        const before = await numRepos(alice.user.id);
        const response = await createFor(alice, body).expect(422);
        expect(response.body).toEqual({ message, url: 'http://anvil.test/api/swagger' });
        expect(await numRepos(alice.user.id)).toBe(before);
        const name = (body as { name?: string }).name;
        if (name && !name.includes('/')) expect(fs.existsSync(repoDir(alice.name, name))).toBe(false);
      },
    );

    it('names the available templates when a gitignore or license template is unknown', async () => {
      const gitignore = await createFor(alice, { name: uniqueName('gi'), auto_init: true, gitignores: 'Go,NoSuchThing' }).expect(422);
      expect(gitignore.body.message).toMatch(/^gitignore template does not exist, available templates: \[.*\bGo\b.*\bNode\b.*\]$/);
      const license = await createFor(alice, { name: uniqueName('li'), auto_init: true, license: 'NoSuchLicense' }).expect(422);
      expect(license.body.message).toMatch(/^license template does not exist, available templates: \[.*\bMIT\b.*\]$/);
    });

    it('ignores template names without auto_init, as they are only used by the first commit', async () => {
      const response = await createFor(alice, { name: uniqueName('noinit'), license: 'NoSuchLicense', gitignores: 'Nope' }).expect(201);
      expect(response.body.empty).toBe(true);
    });

    it('a duplicate name, in any case, is 409; template errors come first', async () => {
      const name = uniqueName('Dup');
      await createFor(alice, { name }).expect(201);
      const duplicate = await createFor(alice, { name: name.toUpperCase() }).expect(409);
      expect(duplicate.body.message).toBe('The repository with the same name already exists.');
      await createFor(alice, { name, auto_init: true, readme: 'Nope' }).expect(422);
      // Another owner may use the same name.
      await createFor(bob, { name }).expect(201);
    });

    it('accepts form-encoded bodies', async () => {
      const name = uniqueName('form');
      const response = await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).type('form').send({ name, private: 'true' }).expect(201);
      expect(response.body.private).toBe(true);
    });

    it('checks scope, then sign-in, then the body', async () => {
      const repoOnly = await makeToken(t, alice.user, ['write:repository']);
      const scoped = await t.http.post(t.api('/user/repos')).set(withToken(repoOnly)).send({ name: 'x' }).expect(403);
      expect(scoped.body.message).toBe('token does not have at least one of required scope(s): [write:user write:repository]');
      const anonymous = await t.http.post(t.api('/user/repos')).set('Content-Type', 'application/json').send('{bad').expect(401);
      expect(anonymous.body.message).toBe('token is required');
      await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).set('Content-Type', 'application/json').send('{bad').expect(400);
      const empty = await t.http.post(t.api('/user/repos')).set(withToken(alice.token)).expect(422);
      expect(empty.body.message).toBe('Empty Content-Type');
    });

    it('a failed creation on disk leaves neither row nor directory (a file at the target path)', async () => {
      const name = uniqueName('blocked');
      const target = repoDir(alice.name, name);
      fs.mkdirSync(path.dirname(target), { recursive: true });
      fs.writeFileSync(target, 'not a repository');
      const before = await numRepos(alice.user.id);
      await createFor(alice, { name, auto_init: true }).expect(500);
      expect(await repoRows(name)).toBe(0);
      expect(await numRepos(alice.user.id)).toBe(before);
      expect(fs.readFileSync(target, 'utf8')).toBe('not a repository');
      await t.http
        .get(t.api(`/repos/${alice.name}/${name}`))
        .set(withToken(alice.token))
        .expect(404);
      const watches = await t.dataSource.query(`SELECT COUNT(*) AS n FROM watch WHERE uid = ${alice.user.id} AND repo_id NOT IN (SELECT id FROM repository)`);
      expect(Number(watches[0].n)).toBe(0);
      fs.rmSync(target);
      await createFor(alice, { name }).expect(201);
    });

    it('a failed creation on disk leaves neither row nor directory (the owner directory cannot be made)', async () => {
      const dave = await makeUser(t);
      const ownerDir = path.join(t.dataDir, 'repositories', dave.name.toLowerCase());
      fs.mkdirSync(path.dirname(ownerDir), { recursive: true });
      fs.writeFileSync(ownerDir, 'in the way');
      const name = uniqueName('nodir');
      const response = await createFor(dave, { name }).expect(500);
      expect(response.body.message).toBe('');
      expect(await repoRows(name)).toBe(0);
      expect(await numRepos(dave.user.id)).toBe(0);
      fs.rmSync(ownerDir);
    });

    it('clears the directory a deletion left behind before creating the repository again', async () => {
      const name = uniqueName('again');
      await createFor(alice, { name, auto_init: true }).expect(201);
      const dir = repoDir(alice.name, name);
      const leftover = `${dir}-saved`;
      fs.cpSync(dir, leftover, { recursive: true });
      await t.http
        .delete(t.api(`/repos/${alice.name}/${name}`))
        .set(withToken(alice.token))
        .expect(204);
      expect(fs.existsSync(dir)).toBe(false);
      // As if the process had died between the row's deletion and the directory's.
      fs.renameSync(leftover, dir);
      const again = await createFor(alice, { name }).expect(201);
      expect(again.body.empty).toBe(true);
      expect(() => git(dir, 'rev-parse', '--verify', '--quiet', 'refs/heads/main')).toThrow();
    });
  });

  describe('POST /orgs/{org}/repos', () => {
    it('creates a repository owned by the organisation, for an org owner', async () => {
      const name = uniqueName('orgrepo');
      const response = await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(alice.token))
        .send({ name, auto_init: true })
        .expect(201);
      expect(response.body.owner.login).toBe(org.name);
      expect(response.body.full_name).toBe(`${org.name}/${name}`);
      expect(response.body.permissions).toEqual({ admin: true, push: true, pull: true });
      const dir = repoDir(org.name, name);
      expect(git(dir, 'log', '--format=%an', 'main').trim()).toBe(alice.name);
      expect(await numRepos(org.id)).toBeGreaterThanOrEqual(1);
      await t.http
        .get(t.api(`/repos/${org.name}/${name}/subscription`))
        .set(withToken(alice.token))
        .expect(200);
    });

    it('lets a site admin create in any organisation', async () => {
      await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(admin.token))
        .send({ name: uniqueName('adm') })
        .expect(201);
    });

    it('refuses a visible organisation the caller does not own with 403', async () => {
      const response = await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(403);
      expect(response.body.message).toBe('Given user is not allowed to create repository in organization.');
    });

    it('unknown organisation, a user, or an invisible organisation → 404, before sign-in and the body', async () => {
      await t.http.post(t.api('/orgs/no-such-org/repos')).set(withToken(alice.token)).send({ name: 'x' }).expect(404);
      await t.http
        .post(t.api(`/orgs/${bob.name}/repos`))
        .set(withToken(alice.token))
        .send({ name: 'x' })
        .expect(404);
      const hidden = await makeOrg(t, alice.user, { visibility: 'private' });
      await t.http
        .post(t.api(`/orgs/${hidden.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(404);
      await t.http.post(t.api('/orgs/no-such-org/repos')).set(withToken(alice.token)).set('Content-Type', 'application/json').send('{bad').expect(404);
      await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set('Content-Type', 'application/json')
        .send('{bad')
        .expect(401);
    });

    it('a public-only token on a non-public organisation → 403', async () => {
      const limited = await makeOrg(t, alice.user, { visibility: 'limited' });
      const publicOnly = await makeToken(t, alice.user, ['public-only', 'write:organization', 'write:repository']);
      const response = await t.http
        .post(t.api(`/orgs/${limited.name}/repos`))
        .set(withToken(publicOnly))
        .send({ name: 'x' })
        .expect(403);
      expect(response.body.message).toBe('token scope is limited to public orgs');
    });

    it('checks the body before the permission', async () => {
      const response = await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'bad name' })
        .expect(422);
      expect(response.body.message).toBe('[Name]: AlphaDashDot');
    });
  });

  describe('POST /org/{org}/repos (deprecated)', () => {
    it('creates in the organisation for an owner', async () => {
      const response = await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .set(withToken(alice.token))
        .send({ name: uniqueName('old') })
        .expect(201);
      expect(response.body.owner.login).toBe(org.name);
    });

    it('needs write:organization and write:repository', async () => {
      const token = await makeToken(t, alice.user, ['write:repository', 'write:user']);
      const response = await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .set(withToken(token))
        .send({ name: 'x' })
        .expect(403);
      expect(response.body.message).toBe('token does not have at least one of required scope(s): [write:organization write:repository]');
      await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .send({ name: 'x' })
        .expect(401);
    });

    it('unknown org or a user → 422, invisible → 404, not an owner → 403; the body is checked first', async () => {
      const unknown = await t.http.post(t.api('/org/nope/repos')).set(withToken(alice.token)).send({ name: 'x' }).expect(422);
      expect(unknown.body.message).toBe('org does not exist [id: 0, name: nope]');
      const user = await t.http
        .post(t.api(`/org/${bob.name}/repos`))
        .set(withToken(alice.token))
        .send({ name: 'x' })
        .expect(422);
      expect(user.body.message).toBe(`org does not exist [id: 0, name: ${bob.name}]`);
      const hidden = await makeOrg(t, alice.user, { visibility: 'private' });
      await t.http
        .post(t.api(`/org/${hidden.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(404);
      const refused = await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(403);
      expect(refused.body.message).toBe('Given user is not allowed to create repository in organization.');
      await t.http.post(t.api('/org/nope/repos')).set(withToken(alice.token)).set('Content-Type', 'application/json').send('{bad').expect(400);
      const noName = await t.http.post(t.api('/org/nope/repos')).set(withToken(alice.token)).send({}).expect(422);
      expect(noName.body.message).toBe('[Name]: Required');
    });
  });

  describe('quota gate', () => {
    // A real quota group refusing everything, for the caller and the organisation (docs/quota.md).
    const group = uniqueName('nothing');
    beforeAll(async () => {
      const adminPost = (apiPath: string, body: unknown) =>
        t.http
          .post(t.api(apiPath))
          .set(withToken(admin.token))
          .send(body as object);
      await adminPost('/admin/quota/groups', { name: group, rules: [{ name: group, limit: 0, subjects: ['size:all'] }] }).expect(201);
      for (const target of [alice.name, org.name])
        await t.http
          .put(t.api(`/admin/quota/groups/${group}/users/${target}`))
          .set(withToken(admin.token))
          .expect(204);
    });
    afterAll(async () => {
      await t.http
        .delete(t.api(`/admin/quota/groups/${group}`))
        .set(withToken(admin.token))
        .expect(204);
    });

    it('is asked about the caller on POST /user/repos, after the body and before templates', async () => {
      await createFor(alice, { name: 'bad name' }).expect(422);
      const response = await createFor(alice, { name: uniqueName('q'), auto_init: true, readme: 'Nope' }).expect(413);
      expect(response.body).toEqual({ message: 'quota exceeded', user_id: alice.user.id, username: alice.name, url: 'http://anvil.test/api/swagger' });
    });

    it('is asked about the organisation, after visibility and before the permission check', async () => {
      const deprecated = await t.http
        .post(t.api(`/org/${org.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(413);
      expect(deprecated.body).toMatchObject({ user_id: org.id, username: org.name });
      await t.http.post(t.api('/org/nope/repos')).set(withToken(bob.token)).send({ name: 'x' }).expect(422);
      const current = await t.http
        .post(t.api(`/orgs/${org.name}/repos`))
        .set(withToken(bob.token))
        .send({ name: 'x' })
        .expect(413);
      expect(current.body).toMatchObject({ user_id: org.id, username: org.name });
    });
  });
});
