import { InvalidInputError } from '../common/errors';
import { assertFilePath, assertSafePath } from './content-paths';

describe('repository paths given by callers', () => {
  it('keeps relative paths with spaces and unicode, and drops trailing slashes', () => {
    expect(assertSafePath('dir with space/ünï.txt')).toBe('dir with space/ünï.txt');
    expect(assertSafePath('docs/')).toBe('docs');
    expect(assertSafePath('')).toBe('');
  });

  it.each(['../x', 'a/../b', '/etc/passwd', 'a//b', './a', 'a/.git/config', '.GIT', 'a\nb', 'a\0b'])('refuses %j with 422', (path) => {
    expect(() => assertSafePath(path)).toThrow(InvalidInputError);
  });

  it('refuses the root as the target of a write', () => {
    expect(() => assertFilePath('/')).toThrow(InvalidInputError);
    expect(() => assertFilePath('')).toThrow(InvalidInputError);
  });
});
