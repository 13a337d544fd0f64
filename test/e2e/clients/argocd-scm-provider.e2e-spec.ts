import type { giteaApi } from 'gitea-js';
import { listeningApp } from '../../support/client-journey';
import { makeOrg, makeRepo, makeUser, TestUser } from '../../support/factories';
import type { TestApp } from '../../support/test-app';

/**
 * Argo CD's ApplicationSet SCM provider for Gitea, replayed through gitea-js: ListRepos (ListOrgRepos, then
 * ListRepoLabels for every repository, failing on any error), GetBranches (GetRepoBranch of the default
 * branch, or ListRepoBranches with allBranches) and RepoHasPath (GetContents, 404 meaning "no"). The fields it
 * copies into its Repository records are asserted: name, default_branch, ssh_url/html_url, id, label names,
 * the branch's commit id.
 */
describe('client journey: Argo CD SCM provider (Gitea)', () => {
  let t: TestApp;
  let sdk: (token?: string) => ReturnType<typeof giteaApi>;
  let owner: TestUser;
  let argo: TestUser;

  beforeAll(async () => {
    ({ t, sdk } = await listeningApp());
    owner = await makeUser(t);
    argo = await makeUser(t);
  });
  afterAll(() => t.close());

  it('lists an organisation’s repositories with their labels, default branch heads and paths', async () => {
    const org = await makeOrg(t, owner.user);
    const deployed = await makeRepo(t, owner, { org: org.name, name: 'deployed', autoInit: true });
    await makeRepo(t, owner, { org: org.name, name: 'empty-one' });
    await makeRepo(t, owner, { org: org.name, name: 'hidden', private: true, autoInit: true });
    const ownerApi = sdk(owner.token);
    await ownerApi.repos.issueCreateLabel(org.name, 'deployed', { name: 'env/prod', color: '#ff0000' });
    await ownerApi.repos.issueCreateLabel(org.name, 'deployed', { name: 'team-a', color: '00ff00' });

    // The token Argo CD is configured with: a user outside the organisation sees its public repositories.
    const api = sdk(argo.token);
    expect((await api.version.getVersion()).status).toBe(200);
    const repos = (await api.orgs.orgListRepos(org.name, {})).data;
    expect(repos.map((repo) => repo.name)).toEqual(['deployed', 'empty-one']);
    const records = [];
    for (const repo of repos) {
      const labels = await api.repos.issueListLabels(org.name, repo.name!, {});
      expect(labels.status).toBe(200);
      records.push({
        Organization: org.name,
        Repository: repo.name,
        Branch: repo.default_branch,
        URL: repo.ssh_url,
        HTTPS: repo.html_url,
        Labels: labels.data.map((label) => label.name),
        RepositoryId: repo.id,
      });
    }
    expect(records[0]).toMatchObject({ Repository: 'deployed', Branch: 'main', RepositoryId: deployed.id, Labels: ['env/prod', 'team-a'] });
    expect(records[0].URL).toBe(deployed.ssh_url);
    expect(records[1]).toMatchObject({ Repository: 'empty-one', Labels: [] });

    // GetBranches without allBranches: the default branch's head commit.
    const branch = (await api.repos.repoGetBranch(org.name, 'deployed', 'main')).data;
    expect(branch.commit?.id).toMatch(/^[0-9a-f]{40}$/);
    // With allBranches.
    const branches = (await api.repos.repoListBranches(org.name, 'deployed', {})).data;
    expect(branches.map((item) => item.name)).toEqual(['main']);
    // An empty repository has no default branch yet: the provider reports the 404 it gets.
    await expect(api.repos.repoGetBranch(org.name, 'empty-one', 'main')).rejects.toMatchObject({ status: 404 });

    // RepoHasPath: a file is there, a directory is there, a missing path is a 404.
    expect((await api.repos.repoGetContents(org.name, 'deployed', 'README.md', { ref: 'main' })).status).toBe(200);
    await expect(api.repos.repoGetContents(org.name, 'deployed', 'kustomization.yaml', { ref: 'main' })).rejects.toMatchObject({ status: 404 });
  });

  it('an unknown organisation is a 404, which the generator reports', async () => {
    await expect(sdk(argo.token).orgs.orgListRepos('no-such-org-here', {})).rejects.toMatchObject({ status: 404 });
  });
});
