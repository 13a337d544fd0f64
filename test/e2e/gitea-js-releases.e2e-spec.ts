import { randomBytes } from 'node:crypto';
import { giteaApi } from 'gitea-js';
import { makeUser, TestUser, uniqueName } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/** The npm client gitea-js, driven against the real server: a release with an asset, and a package's API views. */
describe('gitea-js client', () => {
  let t: TestApp;
  let base: string;
  let alice: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    base = (await t.listen()).replace(/\/$/, '');
    alice = await makeUser(t);
  });
  afterAll(() => t.close());

  it('creates a release, uploads an asset, reads both back and downloads the asset byte-identical', async () => {
    const api = giteaApi(base, { token: alice.token, customFetch: fetch });
    const repo = (await api.user.createCurrentUserRepo({ name: uniqueName('repo'), auto_init: true })).data;
    const release = (await api.repos.repoCreateRelease(alice.name, repo.name!, { tag_name: 'v1.0.0', name: 'One', body: 'first' })).data;
    expect(release).toMatchObject({ tag_name: 'v1.0.0', name: 'One', draft: false, target_commitish: 'main' });

    const content = randomBytes(64 * 1024);
    const uploaded = (await api.repos.repoCreateReleaseAttachment(alice.name, repo.name!, release.id!, { attachment: new File([content], 'build.tar.gz') }))
      .data;
    expect(uploaded).toMatchObject({ name: 'build.tar.gz', size: content.length });

    const listed = (await api.repos.repoListReleases(alice.name, repo.name!)).data;
    expect(listed.map((item) => item.tag_name)).toEqual(['v1.0.0']);
    expect(listed[0].assets?.map((asset) => asset.name)).toEqual(['build.tar.gz']);
    const byTag = (await api.repos.repoGetReleaseByTag(alice.name, repo.name!, 'v1.0.0')).data;
    expect(byTag.id).toBe(release.id);
    // As Forgejo: a release lists its assets by name ("predictable URLs"); one attachment answers its uuid URL.
    expect(listed[0].assets?.[0].browser_download_url).toBe(`http://anvil.test/${alice.name}/${repo.name}/releases/download/v1.0.0/build.tar.gz`);
    const asset = (await api.repos.repoGetReleaseAttachment(alice.name, repo.name!, release.id!, uploaded.id!)).data;
    expect(asset.browser_download_url).toBe(`http://anvil.test/attachments/${uploaded.uuid}`);

    // browser_download_url is built from ROOT_URL (http://anvil.test/ in tests); fetch the same paths here.
    for (const url of [listed[0].assets![0].browser_download_url!, asset.browser_download_url!]) {
      const download = await fetch(`${base}${new URL(url).pathname}`);
      expect(download.status).toBe(200);
      expect(Buffer.compare(Buffer.from(await download.arrayBuffer()), content)).toBe(0);
    }

    await api.repos.repoDeleteRelease(alice.name, repo.name!, release.id!);
    const gone = await api.repos.repoGetRelease(alice.name, repo.name!, release.id!).catch((error: Response) => error);
    expect((gone as Response).status).toBe(404);
  });

  it('reads a generic package published with curl-style Basic auth through the package API views', async () => {
    const content = Buffer.from('package bytes');
    const put = await fetch(`${base}/api/packages/${alice.name}/generic/tool/1.2.3/tool.bin`, {
      method: 'PUT',
      headers: { Authorization: `Basic ${Buffer.from(`${alice.name}:${alice.token}`).toString('base64')}` },
      body: content,
    });
    expect(put.status).toBe(201);
    const api = giteaApi(base, { token: alice.token, customFetch: fetch });
    const packages = (await api.packages.listPackages(alice.name, { type: 'generic' })).data;
    expect(packages.map((item) => [item.name, item.version])).toEqual([['tool', '1.2.3']]);
    const files = (await api.packages.listPackageFiles(alice.name, 'generic', 'tool', '1.2.3')).data;
    expect(files).toHaveLength(1);
    expect(files[0]).toMatchObject({ name: 'tool.bin', Size: content.length });
  });
});
