import { FORGEJO_API_VERSION, serverVersion } from './package-version';

describe('serverVersion', () => {
  it('reads as Forgejo 10 before `+gitea-`, keeps the Gitea version and shows Anvil’s own', () => {
    const version = serverVersion('2.0.0+gitea-1.22.0');
    expect(version).toBe('10.0.0+gitea-1.22.0.anvil-2.0.0');
    expect(version.split('+gitea-')[0]).toBe(FORGEJO_API_VERSION);
    expect(Number(version.split('.')[0])).toBeGreaterThanOrEqual(10);
    // A valid semver: core, then build identifiers of letters, digits and hyphens.
    expect(version).toMatch(/^\d+\.\d+\.\d+\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/);
  });

  it('falls back to the Gitea version Forgejo 10 reports when the package names none', () => {
    expect(serverVersion('3.1.0')).toBe('10.0.0+gitea-1.22.0.anvil-3.1.0');
  });
});
