import { makeRepo, makeUser, TestUser, uniqueName, withToken } from '../../support/factories';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * The Gitea Terraform provider's `gitea_repository_branch_protection`, replayed call by call as it makes them
 * through the Go SDK: the SDK's version check, CreateBranchProtection with every field of the resource (the
 * deprecated `branch_name` set to the rule name, empty lists rather than absent ones, `block_admin_merge_override`
 * which Forgejo ignores), GetBranchProtection on every plan, EditBranchProtection with every field as a pointer,
 * import by `<owner>/<repo>/<rule_name>`, DeleteBranchProtection, and the 404 after it that drops the resource
 * from the state. Every field setRepositoryBranchProtectionData reads is asserted.
 */
describe('client journey: Terraform provider, gitea_repository_branch_protection', () => {
  let t: TestApp;
  let owner: TestUser;
  let releaser: TestUser;

  const call = (method: 'get' | 'post' | 'put' | 'patch' | 'delete', url: string, body?: object) => {
    const request = t.http[method](t.api(url)).set(withToken(owner.token));
    return body === undefined ? request : request.send(body);
  };

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    releaser = await makeUser(t);
  });
  afterAll(() => t.close());

  /** setRepositoryBranchProtectionData: what the provider keeps in its state. */
  function expectState(bp: Record<string, any>, expected: Record<string, unknown>) {
    for (const field of ['rule_name', 'protected_file_patterns', 'unprotected_file_patterns', 'created_at', 'updated_at'])
      expect(typeof bp[field]).toBe('string');
    for (const field of [
      'enable_push',
      'enable_push_whitelist',
      'push_whitelist_deploy_keys',
      'require_signed_commits',
      'enable_approvals_whitelist',
      'dismiss_stale_approvals',
      'enable_status_check',
      'enable_merge_whitelist',
      'block_on_rejected_reviews',
      'block_on_official_review_requests',
      'block_on_outdated_branch',
    ]) {
      expect(typeof bp[field]).toBe('boolean');
    }
    for (const field of [
      'push_whitelist_usernames',
      'push_whitelist_teams',
      'approvals_whitelist_username',
      'approvals_whitelist_teams',
      'status_check_contexts',
      'merge_whitelist_usernames',
      'merge_whitelist_teams',
    ]) {
      expect(Array.isArray(bp[field])).toBe(true);
    }
    expect(typeof bp.required_approvals).toBe('number');
    expect(bp).toMatchObject(expected);
  }

  it('creates, reads on each plan, updates, imports and deletes a rule', async () => {
    const name = uniqueName('tf');
    await makeRepo(t, owner, { name, autoInit: true });
    await call('put', `/repos/${owner.name}/${name}/collaborators/${releaser.name}`, { permission: 'write' }).expect(204);
    const base = `/repos/${owner.name}/${name}/branch_protections`;
    // The SDK asks the server's version before its first branch protection call.
    const version = await t.http.get(t.api('/version')).expect(200);
    expect(typeof version.body.version).toBe('string');

    const ruleName = 'release/*';
    const created = await call('post', base, {
      branch_name: ruleName,
      rule_name: ruleName,
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [releaser.name],
      push_whitelist_teams: [],
      push_whitelist_deploy_keys: false,
      enable_merge_whitelist: false,
      merge_whitelist_usernames: [],
      merge_whitelist_teams: [],
      enable_status_check: true,
      status_check_contexts: ['ci/*'],
      required_approvals: 1,
      enable_approvals_whitelist: false,
      approvals_whitelist_username: [],
      approvals_whitelist_teams: [],
      block_on_rejected_reviews: true,
      block_on_official_review_requests: false,
      block_on_outdated_branch: false,
      dismiss_stale_approvals: true,
      require_signed_commits: false,
      protected_file_patterns: '.forgejo/**',
      unprotected_file_patterns: '',
      block_admin_merge_override: false,
    }).expect(201);
    const wanted = {
      rule_name: ruleName,
      branch_name: '',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [releaser.name],
      status_check_contexts: ['ci/*'],
      enable_status_check: true,
      required_approvals: 1,
      block_on_rejected_reviews: true,
      dismiss_stale_approvals: true,
      protected_file_patterns: '.forgejo/**',
    };
    expectState(created.body, wanted);

    // The SDK escapes the rule name as one path segment.
    const path = `${base}/${encodeURIComponent(ruleName)}`;
    const planned = await call('get', path).expect(200);
    expect(planned.body).toEqual(created.body);

    // Update: every field as a pointer; whitelists emptied turn the push whitelist off in the provider.
    const updated = await call('patch', path, {
      enable_push: true,
      enable_push_whitelist: false,
      push_whitelist_usernames: [],
      push_whitelist_teams: [],
      push_whitelist_deploy_keys: false,
      enable_merge_whitelist: false,
      merge_whitelist_usernames: [],
      merge_whitelist_teams: [],
      enable_status_check: false,
      status_check_contexts: [],
      required_approvals: 2,
      enable_approvals_whitelist: false,
      approvals_whitelist_username: [],
      approvals_whitelist_teams: [],
      block_on_rejected_reviews: false,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      dismiss_stale_approvals: false,
      require_signed_commits: false,
      protected_file_patterns: '',
      unprotected_file_patterns: 'docs/**',
      block_admin_merge_override: true,
    }).expect(200);
    expectState(updated.body, {
      rule_name: ruleName,
      enable_push: true,
      enable_push_whitelist: false,
      push_whitelist_usernames: [],
      enable_status_check: false,
      status_check_contexts: [],
      required_approvals: 2,
      block_on_official_review_requests: true,
      block_on_outdated_branch: true,
      unprotected_file_patterns: 'docs/**',
    });

    // Import by `<owner>/<repo>/<rule_name>`: the rule is read by its name.
    const imported = await call('get', path).expect(200);
    expect(imported.body).toEqual(updated.body);

    await call('delete', path).expect(204);
    // The next plan's read is a 404: the provider drops the resource from its state.
    await call('get', path).expect(404);
    const listed = await call('get', base).expect(200);
    expect(listed.body).toEqual([]);
  });
});
