import type { RepositoryWire } from '../../src/repos/repository.wire';
import { as, makeRepo, makeUser } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('settings: /settings/api|repository|attachment|ui tell the limits the server enforces', () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ MAX_RESPONSE_ITEMS: '4', DEFAULT_PAGING_NUM: '2', ATTACHMENT_MAX_SIZE: '5MiB', MAX_DISPLAY_FILE_SIZE: '1024' });
  });
  afterAll(() => t.close());

  it('/settings/api gives the paging limits the lists apply', async () => {
    const settings = await as(t, null).get<{ default_paging_num: number; max_response_items: number }>('/settings/api');
    expect(settings.status).toBe(200);
    expect(settings.body).toEqual({ max_response_items: 4, default_paging_num: 2, default_git_trees_per_page: 1000, default_max_blob_size: 1024 });
    const user = await makeUser(t);
    for (let i = 0; i < 5; i++) await makeRepo(t, user);
    const byDefault = await as(t, null).get<RepositoryWire[]>(`/users/${user.name}/repos`);
    expect(byDefault.body).toHaveLength(settings.body.default_paging_num);
    const capped = await as(t, user).get<RepositoryWire[]>(`/users/${user.name}/repos`, { limit: 50 });
    expect(capped.status).toBe(200);
    expect(capped.body).toHaveLength(settings.body.max_response_items);
    expect(capped.body.every((repo) => repo.owner.login === user.name)).toBe(true);
  });

  it('/settings/repository tells which features Anvil has', async () => {
    const settings = await t.http.get(t.api('/settings/repository')).expect(200);
    expect(settings.body).toEqual({
      mirrors_disabled: false,
      http_git_disabled: false,
      migrations_disabled: false,
      stars_disabled: false,
      time_tracking_disabled: true,
      lfs_disabled: false,
      forks_disabled: false,
    });
  });

  it('/settings/repository says lfs_disabled when LFS_START_SERVER is off, and the LFS routes answer 404', async () => {
    const user = await makeUser(t);
    const repo = await makeRepo(t, user);
    const batch = () =>
      t.http
        .post(`/${user.name}/${repo.name}.git/info/lfs/objects/batch`)
        .set({ Accept: 'application/vnd.git-lfs+json', 'Content-Type': 'application/vnd.git-lfs+json' })
        .send(JSON.stringify({ operation: 'download', objects: [] }));
    expect((await batch()).status).toBe(200);
    t.config.lfs.startServer = false;
    try {
      expect((await t.http.get(t.api('/settings/repository')).expect(200)).body.lfs_disabled).toBe(true);
      expect((await batch()).status).toBe(404);
    } finally {
      t.config.lfs.startServer = true;
    }
  });

  it('/settings/attachment gives the attachment size limit in MiB', async () => {
    const settings = await t.http.get(t.api('/settings/attachment')).expect(200);
    expect(settings.body).toEqual({ enabled: true, allowed_types: '*/*', max_size: 5, max_files: 1 });
  });

  it('/settings/ui answers Forgejo’s shape', async () => {
    const settings = await t.http.get(t.api('/settings/ui')).expect(200);
    expect(settings.body).toEqual({ default_theme: 'forgejo-auto', allowed_reactions: [], custom_emojis: [] });
  });
});
