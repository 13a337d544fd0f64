import { execFileSync } from 'node:child_process';
import { isValidBranchName, isValidRefName } from './ref-names';

const VALID = ['main', 'feature/login', 'release-1.0', 'a.b', 'UPPER', 'é-accent', 'x@y', 'a/b/c', '@x', '@', 'v1.2.3_rc'];
const INVALID = [
  '',
  'HEAD',
  '-leading-dash',
  'a..b',
  'a b',
  'tab\tname',
  'ctrl\u0001',
  'del\u007f',
  'tilde~',
  'caret^',
  'colon:',
  'question?',
  'star*',
  'bracket[',
  'back\\slash',
  '/leading',
  'trailing/',
  'double//slash',
  'trailing.',
  '.hidden',
  'dir/.hidden',
  'name.lock',
  'dir/name.lock/x',
  'at@{brace',
];

describe('branch names (git check-ref-format --branch)', () => {
  it.each(VALID)('accepts %p', (name) => expect(isValidBranchName(name)).toBe(true));
  it.each(INVALID)('refuses %p', (name) => expect(isValidBranchName(name)).toBe(false));

  it('agrees with git itself on every example', () => {
    for (const name of [...VALID, ...INVALID].filter((candidate) => candidate !== '' && !candidate.includes('\u0000'))) {
      let gitAccepts = true;
      try {
        execFileSync('git', ['check-ref-format', '--branch', name], { stdio: 'ignore' });
      } catch {
        gitAccepts = false;
      }
      expect([name, isValidBranchName(name)]).toEqual([name, gitAccepts]);
    }
  });

  it('checks full reference names', () => {
    expect(isValidRefName('refs/heads/main')).toBe(true);
    expect(isValidRefName('refs/heads/-x')).toBe(true);
    expect(isValidRefName('refs//heads')).toBe(false);
  });
});
