import { firstBranch } from './repository-pushes.service';

describe('firstBranch', () => {
  it('prefers the current default branch, then main, then master, then push order', () => {
    expect(firstBranch('develop', ['main', 'develop'])).toBe('develop');
    expect(firstBranch('develop', ['master', 'feature', 'main'])).toBe('main');
    expect(firstBranch('main', ['feature', 'master'])).toBe('master');
    expect(firstBranch('main', ['zeta', 'alpha'])).toBe('zeta');
  });

  it('gives nothing when no branch was created (a push of tags only)', () => {
    expect(firstBranch('main', [])).toBeUndefined();
  });
});
