import * as path from 'node:path';
import { repositoriesRoot, repositoryPath, trashRoot } from './repository-paths';

describe('repository paths', () => {
  it('puts a repository at DATA_DIR/repositories/<owner lowercased>/<name lowercased>.git', () => {
    expect(repositoryPath('/data', 'Alice', 'My-Repo.js')).toBe(path.join('/data', 'repositories', 'alice', 'my-repo.js.git'));
  });

  it('keeps everything under the repositories root', () => {
    expect(repositoriesRoot('/srv/anvil')).toBe('/srv/anvil/repositories');
    expect(trashRoot('/srv/anvil')).toBe('/srv/anvil/repositories/.trash');
  });

  it.each([
    ['..', 'x'],
    ['alice', '..'],
    ['alice', '.'],
    ['a/b', 'x'],
    ['alice', 'x\\y'],
    ['', 'x'],
  ])('refuses names that would leave their directory: %p / %p', (owner, name) => {
    expect(() => repositoryPath('/data', owner, name)).toThrow(/unsafe name/);
  });
});
