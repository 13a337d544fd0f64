import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../../support/factories';
import { startTestApp, TestApp } from '../../support/test-app';

/**
 * Jenkins' Gitea plugin scanning an organisation folder (its Gitea connection, driven by the plugin's SCM
 * navigator and SCM source): fetchVersion, fetchCurrentUser, fetchOwner (organisation first),
 * fetchOrganizationRepositories, then per repository fetchRepository, fetchBranches, fetchTags,
 * fetchAnnotatedTag (git/tags/{sha}), fetchCommit (git/commits/{sha}), fetchPullRequests (a 404 reads as "none")
 * and fetchFile (raw/{ref}/{path}) for the Jenkinsfile. The fields its GiteaRepository, GiteaBranch, GiteaTag
 * and GiteaAnnotatedTag read are asserted.
 */
describe('client journey: Jenkins Gitea plugin, organisation scan', () => {
  let t: TestApp;
  let owner: TestUser;
  let jenkins: TestUser;

  const get = (url: string) => t.http.get(t.api(url)).set(withToken(jenkins.token));

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    jenkins = await makeUser(t);
  });
  afterAll(() => t.close());

  it('scans an organisation: repositories, branches, tags, Jenkinsfiles', async () => {
    const org = await makeOrg(t, owner.user);
    await makeRepo(t, owner, { org: org.name, name: 'app', autoInit: true });
    await makeRepo(t, owner, { org: org.name, name: 'docs', autoInit: true });
    const put = (url: string, body: object) => t.http.post(t.api(url)).set(withToken(owner.token)).send(body);
    await put(`/repos/${org.name}/app/contents/Jenkinsfile`, {
      content: Buffer.from("pipeline { agent any; stages { stage('b') { steps { sh 'make' } } } }\n").toString('base64'),
      message: 'ci',
    }).expect(201);
    await put(`/repos/${org.name}/app/branches`, { new_branch_name: 'feature/login' }).expect(201);
    const tag = await put(`/repos/${org.name}/app/tags`, { tag_name: 'v1.0.0', message: 'first release' }).expect(201);

    expect((await get('/version').expect(200)).body.version).toEqual(expect.any(String));
    expect((await get('/user').expect(200)).body.login).toBe(jenkins.name);
    // fetchOwner: the organisation answers, so no user lookup.
    const ownerJson = (await get(`/orgs/${org.name}`).expect(200)).body;
    expect(ownerJson.username).toBe(org.name);
    const repos = (await get(`/orgs/${org.name}/repos?page=1&limit=50`).expect(200)).body;
    expect(repos.map((repo: { name: string }) => repo.name)).toEqual(['app', 'docs']);

    for (const listed of repos) {
      // GiteaRepository: owner.username, name, html_url, clone_url, ssh_url, default_branch, private, fork, mirror, archived, empty, permissions.
      const repo = (await get(`/repos/${org.name}/${listed.name}`).expect(200)).body;
      expect(repo).toMatchObject({ name: listed.name, default_branch: 'main', private: false, fork: false, mirror: false, archived: false, empty: false });
      expect(repo.owner.username).toBe(org.name);
      for (const field of ['html_url', 'clone_url', 'ssh_url']) expect(repo[field]).toEqual(expect.any(String));
      expect(repo.permissions).toEqual({ admin: false, push: false, pull: true });

      const branches = (await get(`/repos/${org.name}/${listed.name}/branches`).expect(200)).body;
      for (const branch of branches) expect(branch.commit.id).toMatch(/^[0-9a-f]{40}$/);
      // The plugin lists the open pull requests of each repository: none here.
      expect((await get(`/repos/${org.name}/${listed.name}/pulls?state=open`).expect(200)).body).toEqual([]);
      const jenkinsfile = await get(`/repos/${org.name}/${listed.name}/raw/main/Jenkinsfile`);
      expect(jenkinsfile.status).toBe(listed.name === 'app' ? 200 : 404);
    }
    const appBranches = (await get(`/repos/${org.name}/app/branches`).expect(200)).body;
    expect(appBranches.map((branch: { name: string }) => branch.name).sort()).toEqual(['feature/login', 'main']);
    // A branch name with a slash: the plugin finds it in the list, and the raw file under it.
    await get(`/repos/${org.name}/app/raw/feature/login/Jenkinsfile`).expect(200);

    // Tags: GiteaTag.id is the tag object of an annotated tag, which fetchAnnotatedTag reads for its date.
    const tags = (await get(`/repos/${org.name}/app/tags`).expect(200)).body;
    expect(tags.map((item: { name: string }) => item.name)).toEqual(['v1.0.0']);
    expect(tags[0].id).toBe(tag.body.id);
    const annotated = (await get(`/repos/${org.name}/app/git/tags/${tags[0].id}`).expect(200)).body;
    expect(annotated).toMatchObject({
      tag: 'v1.0.0',
      sha: tags[0].id,
      message: expect.stringContaining('first release'),
      object: { type: 'commit', sha: tags[0].commit.sha },
    });
    expect(Date.parse(annotated.tagger.date)).toBeGreaterThan(0);
    // fetchCommit for the commit a head or tag points at.
    const commit = (await get(`/repos/${org.name}/app/git/commits/${tags[0].commit.sha}`).expect(200)).body;
    expect(commit.sha).toBe(tags[0].commit.sha);
  });
});
