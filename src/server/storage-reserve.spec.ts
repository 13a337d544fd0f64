import { ballastBytes, growsData } from './storage-reserve';

describe('the low-space door', () => {
  it('refuses what makes the data grow: API writes, pushes, LFS uploads', () => {
    expect(growsData('POST', '/api/v1/user/repos')).toBe(true);
    expect(growsData('PUT', '/api/v1/repos/a/b/contents/x')).toBe(true);
    expect(growsData('PATCH', '/api/v1/repos/a/b')).toBe(true);
    expect(growsData('POST', '/a/b.git/git-receive-pack')).toBe(true);
    expect(growsData('PUT', `/a/b.git/info/lfs/objects/${'a'.repeat(64)}/12`)).toBe(true);
    expect(growsData('PUT', '/api/packages/a/generic/p/1/f.bin')).toBe(true);
  });

  it('lets through reads, deletions, sign-ins, rendering and fetches', () => {
    expect(growsData('GET', '/api/v1/user/repos')).toBe(false);
    expect(growsData('HEAD', '/api/v1/version')).toBe(false);
    expect(growsData('DELETE', '/api/v1/repos/a/b')).toBe(false);
    expect(growsData('DELETE', '/api/packages/a/generic/p/1')).toBe(false);
    expect(growsData('POST', '/api/v1/users/alice/tokens')).toBe(false);
    expect(growsData('POST', '/api/v1/markdown')).toBe(false);
    expect(growsData('POST', '/api/v1/markdown/raw')).toBe(false);
    expect(growsData('POST', '/a/b.git/git-upload-pack')).toBe(false);
    expect(growsData('POST', '/login/oauth/access_token')).toBe(false);
    expect(growsData('POST', '/a/b.git/info/lfs/objects/batch')).toBe(false);
  });

  it('holds half the reserve as the ballast', () => {
    expect(ballastBytes(64 * 1024 * 1024)).toBe(32 * 1024 * 1024);
    expect(ballastBytes(0)).toBe(0);
  });
});
