import { cutDiffAroundLine } from './diff-hunk';
import { diffHunkOf } from './review.mapper';

const EXAMPLE = [
  'diff --git a/README.md b/README.md',
  '--- a/README.md',
  '+++ b/README.md',
  '@@ -1,3 +1,6 @@',
  ' # gitea-github-migrator',
  '+',
  '+ Build Status',
  '- Latest Release',
  ' Docker Pulls',
  '+ cut off',
  '+ cut off',
].join('\n');

describe('the diff around a commented line', () => {
  it('keeps the headers and the lines up to the commented one, with the hunk header counted anew', () => {
    const lines = cutDiffAroundLine(EXAMPLE, 4, false, 3).split('\n');
    expect(lines).toHaveLength(7);
    expect(lines.slice(0, 3)).toEqual(['diff --git a/README.md b/README.md', '--- a/README.md', '+++ b/README.md']);
    expect(lines[3]).toBe('@@ -2,2 +3,2 @@');
    expect(lines[4]).toBe('+ Build Status');
  });

  it('reads the same around the same line on the old side (old line 3 is new line 5)', () => {
    expect(cutDiffAroundLine(EXAMPLE, 3, true, 3)).toBe(cutDiffAroundLine(EXAMPLE, 4, false, 3));
  });

  it('keeps the diff whole when it is shorter than asked; a minus line is counted on the old side', () => {
    expect(cutDiffAroundLine(EXAMPLE, 6, false, 300)).toBe(EXAMPLE);
    const breaking = [
      'diff --git a/aaa.sql b/aaa.sql',
      'index d8e4c92..19dc8ad 100644',
      '--- a/aaa.sql',
      '+++ b/aaa.sql',
      '@@ -1,9 +1,10 @@',
      ' --some comment',
      '--- some comment 5',
      '+--some coment 2',
      '+-- some comment 3',
      ' create or replace procedure test(p1 varchar2)',
      '',
    ].join('\n');
    expect(cutDiffAroundLine(breaking, 2, false, 4)).toBe(
      [
        'diff --git a/aaa.sql b/aaa.sql',
        '--- a/aaa.sql',
        '+++ b/aaa.sql',
        '@@ -1,9 +1,10 @@',
        ' --some comment',
        '--- some comment 5',
        '+--some coment 2',
      ].join('\n'),
    );
  });

  it('answers empty for a line in no hunk, line 0, or no lines asked', () => {
    expect(cutDiffAroundLine(EXAMPLE, 434, false)).toBe('');
    expect(cutDiffAroundLine(EXAMPLE, 0, false)).toBe('');
    expect(cutDiffAroundLine(EXAMPLE, 6, false, 0)).toBe('');
  });

  it('diff_hunk is the kept part from the hunk header on', () => {
    expect(diffHunkOf(cutDiffAroundLine(EXAMPLE, 4, false, 3))).toBe(['@@ -2,2 +3,2 @@', '+ Build Status', '- Latest Release', ' Docker Pulls'].join('\n'));
    expect(diffHunkOf('')).toBe('');
  });
});
