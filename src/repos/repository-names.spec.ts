import { assertUsableRepositoryName, GIT_REF_NAME, maxSize } from './repository-names';

describe('repository names', () => {
  it.each(['.', '..', '-'])('reserves %p', (name) => {
    expect(() => assertUsableRepositoryName(name)).toThrow(`name is reserved [name: ${name}]`);
  });

  it.each([
    ['project.git', '*.git'],
    ['Project.GIT', '*.git'],
    ['notes.wiki', '*.wiki'],
    ['feed.rss', '*.rss'],
    ['feed.atom', '*.atom'],
  ])('refuses the pattern of %p', (name, pattern) => {
    expect(() => assertUsableRepositoryName(name)).toThrow(`name pattern is not allowed [pattern: ${pattern}]`);
  });

  it.each(['anvil', '.dotfiles', 'git', 'my.gitignore', 'a-b_c.d'])('accepts %p', (name) => {
    expect(() => assertUsableRepositoryName(name)).not.toThrow();
  });

  it('counts characters, not bytes, for MaxSize', () => {
    expect(maxSize(3).test('ééé')).toBe(true);
    expect(maxSize(3).test('éééé')).toBe(false);
  });

  it('names the GitRefName rule', () => {
    expect(GIT_REF_NAME.name).toBe('GitRefName');
    expect(GIT_REF_NAME.test('main')).toBe(true);
    expect(GIT_REF_NAME.test('a..b')).toBe(false);
  });
});
