import { isValidFileName, isValidPackageName, isValidPackageVersion } from './package-names';

describe('generic package names (as Forgejo)', () => {
  it('accepts word characters and -_+. in names, refusing . and .. and lone punctuation', () => {
    for (const good of ['app', 'my-app_1.0+x', 'A', '7']) expect(isValidPackageName(good)).toBe(true);
    for (const bad of ['', '.', '..', '-', 'a/b', 'a b', 'a:b', 'päckage', 'пакет', 'é']) expect(isValidPackageName(bad)).toBe(false);
  });

  it('accepts spaces and punctuation inside file names, not around them or slashes', () => {
    for (const good of ['app.tar.gz', 'file (1).zip', 'a=b;c[1]{2}~!@#$%^&.bin']) expect(isValidFileName(good)).toBe(true);
    for (const bad of ['', ' lead', 'trail ', '.', '..', 'a/b', 'a\\b', 'a?b', 'fïle.bin']) expect(isValidFileName(bad)).toBe(false);
  });

  it('refuses versions with surrounding spaces or path separators', () => {
    expect(isValidPackageVersion('1.0.0')).toBe(true);
    for (const bad of ['', ' 1.0', '1.0 ', '1/0']) expect(isValidPackageVersion(bad)).toBe(false);
  });
});
