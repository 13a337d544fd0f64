import { generateSshKey } from '../../support/ssh-keys';
import { makeUser, TestUser, uniqueName, withToken } from '../../support/factories';
import { startTestApp, TestApp } from '../../support/test-app';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';

/**
 * The Gitea Terraform provider, replayed call by call as its resources make them through the Go SDK: the
 * repository resource (create via GetOrg → AdminListUsers →
 * AdminCreateRepo or CreateOrgRepo, read back by GetRepoByID, update via EditRepo with every field, import by
 * id, delete), the organisation resource (CreateOrg, read through AdminListOrgs and ListOrgRepos,
 * GetOrg + EditOrg, DeleteOrg) and the public key resource (AdminCreateUserPublicKey, GetPublicKey,
 * AdminDeleteUserPublicKey). Every field setRepoResourceData, setOrgResourceData and setPublicKeyResourceData
 * read is asserted.
 */
describe('client journey: Terraform provider for Gitea', () => {
  let t: TestApp;
  let admin: TestUser;
  let owner: TestUser;

  const call = (method: 'get' | 'post' | 'patch' | 'delete', url: string, body?: object) => {
    const request = t.http[method](t.api(url)).set(withToken(admin.token));
    return body === undefined ? request : request.send(body);
  };

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
    owner = await makeUser(t);
  });
  afterAll(() => t.close());

  /** setRepoResourceData: the fields the provider stores in its state. */
  function expectRepositoryState(repo: Record<string, any>, expected: { name: string; description: string; owner: string }) {
    expect(repo).toMatchObject({ name: expected.name, description: expected.description, full_name: `${expected.owner}/${expected.name}` });
    expect(repo.owner.login).toBe(expected.owner);
    for (const field of [
      'private',
      'fork',
      'template',
      'mirror',
      'has_issues',
      'has_wiki',
      'has_pull_requests',
      'has_projects',
      'ignore_whitespace_conflicts',
      'allow_merge_commits',
      'allow_rebase',
      'allow_rebase_explicit',
      'allow_squash_merge',
      'archived',
    ]) {
      expect(typeof repo[field]).toBe('boolean');
    }
    for (const field of ['size', 'stars_count', 'forks_count', 'watchers_count', 'open_issues_count', 'id']) expect(typeof repo[field]).toBe('number');
    for (const field of [
      'html_url',
      'ssh_url',
      'clone_url',
      'website',
      'default_branch',
      'default_merge_style',
      'mirror_interval',
      'created_at',
      'updated_at',
    ]) {
      expect(typeof repo[field]).toBe('string');
    }
    expect(repo.permissions).toEqual({ admin: true, push: true, pull: true });
  }

  it('gitea_repository for a user: create, read back by id on the next plan, update, import, delete', async () => {
    const name = uniqueName('tf');
    // resourceRepoCreate: GetOrg(owner) is 404 for a user, so it looks the user up with AdminListUsers (pages of 50).
    await call('get', `/orgs/${owner.name}`).expect(404);
    let found: Record<string, any> | undefined;
    for (let page = 1; !found; page++) {
      const users = await call('get', `/admin/users?page=${page}&limit=50`).expect(200);
      expect(users.body.length).toBeGreaterThan(0);
      found = users.body.find((user: { login: string }) => user.login === owner.name);
    }
    // An admin creates it on the user's behalf.
    const created = await call('post', `/admin/users/${owner.name}/repos`, {
      name,
      description: 'managed by terraform',
      private: false,
      issue_labels: '',
      auto_init: true,
      template: false,
      gitignores: '',
      license: '',
      readme: '',
      default_branch: 'main',
      trust_model: 'default',
    }).expect(201);
    expectRepositoryState(created.body, { name, description: 'managed by terraform', owner: owner.name });

    // resourceRepoRead on the next plan: GetRepoByID(id) must find it (before, a 404 dropped it from the state).
    const read = await call('get', `/repositories/${created.body.id}`).expect(200);
    expect(read.body).toEqual((await call('get', `/repos/${owner.name}/${name}`).expect(200)).body);
    expectRepositoryState(read.body, { name, description: 'managed by terraform', owner: owner.name });

    // resourceRepoUpdate: EditRepo with every field of the resource.
    const updated = await call('patch', `/repos/${owner.name}/${name}`, {
      name,
      description: 'changed',
      website: 'https://example.com',
      private: true,
      template: false,
      has_issues: false,
      has_wiki: false,
      default_branch: 'main',
      has_pull_requests: false,
      has_projects: false,
      ignore_whitespace_conflicts: false,
      allow_merge_commits: false,
      allow_rebase: false,
      allow_rebase_explicit: false,
      allow_squash_merge: false,
      allow_manual_merge: false,
      autodetect_manual_merge: false,
      archived: false,
    }).expect(200);
    expectRepositoryState(updated.body, { name, description: 'changed', owner: owner.name });
    expect(updated.body).toMatchObject({ private: true, website: 'https://example.com' });
    // The issue tracker follows the provider's setting; what Anvil does not have stays false whatever the
    // provider asks, so a configuration that asks for it shows a difference on every plan rather than a pretend
    // feature.
    expect(updated.body).toMatchObject({ has_issues: false, has_wiki: false, has_pull_requests: false, has_projects: false });
    expect(updated.body.internal_tracker).toBeUndefined();

    // `terraform import gitea_repository.x <id>`: the passthrough importer reads by id.
    const imported = await call('get', `/repositories/${created.body.id}`).expect(200);
    expect(imported.body).toMatchObject({ id: created.body.id, private: true, description: 'changed' });

    // archive_on_destroy: EditRepo with archived true; then a plain destroy deletes it.
    const archived = await call('patch', `/repos/${owner.name}/${name}`, { name, archived: true }).expect(200);
    expect(archived.body.archived).toBe(true);
    await call('delete', `/repos/${owner.name}/${name}`).expect(204);
    // After the destroy, the read answers 404: the provider then forgets the resource.
    await call('get', `/repositories/${created.body.id}`).expect(404);
  });

  it('gitea_org and a gitea_repository inside it: create, read through the admin list, edit, delete', async () => {
    const orgName = uniqueName('tforg');
    // resourceOrgCreate: CreateOrg, then ListOrgRepos until an empty page.
    const org = await call('post', '/orgs', {
      username: orgName,
      full_name: 'Terraform Org',
      description: 'desc',
      website: 'https://org.example',
      location: 'Berlin',
      visibility: 'private',
      repo_admin_change_team_access: true,
    }).expect(201);
    expect(org.body).toMatchObject({ username: orgName, full_name: 'Terraform Org', visibility: 'private', avatar_url: expect.any(String) });
    expect((await call('get', `/orgs/${orgName}/repos?page=1&limit=50`).expect(200)).body).toEqual([]);

    // gitea_repository with username = the organisation: GetOrg succeeds, so CreateOrgRepo.
    await call('get', `/orgs/${orgName}`).expect(200);
    const repo = await call('post', `/orgs/${orgName}/repos`, { name: 'infra', auto_init: true, default_branch: 'main', trust_model: 'default' }).expect(201);
    expectRepositoryState(repo.body, { name: 'infra', description: '', owner: orgName });

    // resourceOrgRead: AdminListOrgs pages of 50 until the id is found, then the repository names.
    let listed: Record<string, any> | undefined;
    for (let page = 1; !listed; page++) {
      const orgs = await call('get', `/admin/orgs?page=${page}&limit=50`).expect(200);
      expect(orgs.body.length).toBeGreaterThan(0);
      listed = orgs.body.find((candidate: { id: number }) => candidate.id === org.body.id);
    }
    expect(listed).toMatchObject({
      username: orgName,
      full_name: 'Terraform Org',
      description: 'desc',
      website: 'https://org.example',
      location: 'Berlin',
      visibility: 'private',
    });
    const repos = await call('get', `/orgs/${orgName}/repos?page=1&limit=50`).expect(200);
    expect(repos.body.map((item: { name: string }) => item.name)).toEqual(['infra']);
    expect((await call('get', `/orgs/${orgName}/repos?page=2&limit=50`).expect(200)).body).toEqual([]);

    // resourceOrgUpdate: GetOrg, EditOrg, GetOrg.
    await call('patch', `/orgs/${orgName}`, {
      full_name: 'Renamed',
      description: 'desc',
      website: 'https://org.example',
      location: 'Berlin',
      visibility: 'limited',
    }).expect(200);
    expect((await call('get', `/orgs/${orgName}`).expect(200)).body).toMatchObject({ full_name: 'Renamed', visibility: 'limited' });

    // Destroy: the repository first, then the organisation.
    await call('delete', `/repos/${orgName}/infra`).expect(204);
    await call('delete', `/orgs/${orgName}`).expect(204);
    await call('get', `/orgs/${orgName}`).expect(404);
  });

  it('gitea_public_key: create for a user, read by id, delete', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-tf-key-'));
    try {
      const key = generateSshKey(dir, 'tf');
      const created = await call('post', `/admin/users/${owner.name}/keys`, { title: 'deploy', key: key.publicLine, read_only: false }).expect(201);
      const state = (body: Record<string, any>) => ({
        id: body.id,
        user: body.user.login,
        key: body.key,
        title: body.title,
        fingerprint: body.fingerprint,
        created: body.created_at,
        type: body.key_type,
      });
      expect(state(created.body)).toMatchObject({ user: owner.name, title: 'deploy', type: 'user', key: key.publicLine });
      const read = await call('get', `/user/keys/${created.body.id}`).expect(200);
      expect(state(read.body)).toEqual(state(created.body));
      await call('delete', `/admin/users/${owner.name}/keys/${created.body.id}`).expect(204);
      await call('get', `/user/keys/${created.body.id}`).expect(404);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
