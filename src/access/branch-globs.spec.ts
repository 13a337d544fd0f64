import { compileGlob, filePatterns, filePatternsError, globError, isGlob, pathMatches } from './branch-globs';

describe('branch protection globs', () => {
  it('tells plain names from globs', () => {
    expect(isGlob('main')).toBe(false);
    expect(isGlob('release-1.0')).toBe(false);
    for (const name of ['release/*', '**', 'v?', '[ab]', '{a,b}', 'a\\b']) expect(isGlob(name)).toBe(true);
  });

  it('matches rule names with / as the separator', () => {
    const one = compileGlob('release/*', '/');
    expect(one.test('release/1.0')).toBe(true);
    expect(one.test('release/1.0/hotfix')).toBe(false);
    expect(one.test('Release/1.0')).toBe(false);
    expect(compileGlob('release/**', '/').test('release/1.0/hotfix')).toBe(true);
    expect(compileGlob('**', '/').test('any/thing')).toBe(true);
    expect(compileGlob('v?', '/').test('v1')).toBe(true);
    expect(compileGlob('v?', '/').test('v/')).toBe(false);
    expect(compileGlob('[!a-c]x', '/').test('dx')).toBe(true);
    expect(compileGlob('[!a-c]x', '/').test('bx')).toBe(false);
    expect(compileGlob('{main,release/*}', '/').test('release/2')).toBe(true);
    expect(compileGlob('{main,release/*}', '/').test('dev')).toBe(false);
    expect(compileGlob('a\\*', '/').test('a*')).toBe(true);
    expect(compileGlob('a\\*', '/').test('ab')).toBe(false);
    expect(compileGlob('a.b+(c)', '/').test('a.b+(c)')).toBe(true);
  });

  it('takes every printable character as a literal, outside and inside a class, with either separator set', () => {
    const printable = Array.from({ length: 95 }, (_, code) => String.fromCharCode(32 + code));
    for (const separators of ['/', './']) {
      for (const char of printable) {
        const quoted = `\\${char}`;
        expect([char, compileGlob(`rel${quoted}*`, separators).test(`rel${char}x`)]).toEqual([char, true]);
        expect([char, compileGlob(`v[${quoted}]`, separators).test(`v${char}`)]).toEqual([char, true]);
        expect([char, compileGlob(`v[!${quoted}]`, separators).test(`v${char}`)]).toEqual([char, false]);
      }
      expect(compileGlob('rel-*', separators).test('rel-1')).toBe(true);
      expect(compileGlob('[a-c-]x', separators).test('-x')).toBe(true);
    }
  });

  it('refuses malformed globs with a reason', () => {
    for (const bad of ['release/[', 'a{b,c', 'x]', 'y}', 'z\\', '[]', '[z-a]']) expect(globError(bad, '/')).not.toBeNull();
    expect(globError('release/{a,b}/*', '/')).toBeNull();
  });

  it('matches file patterns lower-cased, with / and . as separators, skipping invalid ones', () => {
    const globs = filePatterns(' .forgejo/workflows/** ; *.MD ; [ ');
    expect(globs).toHaveLength(2);
    expect(pathMatches(globs, '.Forgejo/Workflows/ci.yml')).toBe(true);
    expect(pathMatches(globs, 'README.md')).toBe(true);
    // `*` stops at a dot as well as a slash.
    expect(pathMatches(filePatterns('docs/*'), 'docs/guide.md')).toBe(false);
    expect(pathMatches(filePatterns('docs/**'), 'docs/guide.md')).toBe(true);
    expect(filePatternsError('ok/**;bad[')).toContain('bad[');
    expect(filePatternsError('')).toBeNull();
  });
});
