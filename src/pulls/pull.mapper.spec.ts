import { parseRawNumstat } from '../git/git-compare';
import { PullRequestEntity, PullStatus } from './pull-request.entity';
import { isMergeable, isWorkInProgress, toChangedFileWire } from './pull.mapper';

describe('pull request mapping', () => {
  it('reads `WIP:` and `[WIP]` at the start of a title, in any case, as a draft', () => {
    expect(isWorkInProgress('WIP: later')).toBe(true);
    expect(isWorkInProgress('[wip] later')).toBe(true);
    expect(isWorkInProgress('Wip:x')).toBe(true);
    expect(isWorkInProgress('not WIP: yet')).toBe(false);
  });

  it('is mergeable once tested without conflict or error, and never as a draft', () => {
    const pull = (status: PullStatus) => ({ status }) as PullRequestEntity;
    expect(isMergeable(pull(PullStatus.Mergeable), 'ready')).toBe(true);
    expect(isMergeable(pull(PullStatus.Empty), 'ready')).toBe(true);
    expect(isMergeable(pull(PullStatus.Ancestor), 'ready')).toBe(true);
    expect(isMergeable(pull(PullStatus.Checking), 'ready')).toBe(false);
    expect(isMergeable(pull(PullStatus.Conflict), 'ready')).toBe(false);
    expect(isMergeable(pull(PullStatus.Error), 'ready')).toBe(false);
    expect(isMergeable(pull(PullStatus.Mergeable), 'WIP: ready')).toBe(false);
  });

  it('parses `diff -z --raw --numstat` with renames, additions and binary files', () => {
    const output = [
      ':100644 100644 422c2b7 de98044 R066',
      'f',
      'h',
      ':000000 100644 0000000 975fbec A',
      'n',
      ':100644 100644 1111111 2222222 M',
      'image.png',
      '1\t0\t',
      'f',
      'h',
      '1\t0\tn',
      '-\t-\timage.png',
      '',
    ].join('\0');
    expect(parseRawNumstat(output)).toEqual([
      { path: 'h', previousPath: 'f', status: 'R', additions: 1, deletions: 0 },
      { path: 'n', status: 'A', additions: 1, deletions: 0 },
      { path: 'image.png', status: 'M', additions: 0, deletions: 0 },
    ]);
  });

  it('names changed files as Forgejo does, with links at the head commit', () => {
    const wire = toChangedFileWire(
      { path: 'a dir/b.txt', previousPath: 'old.txt', status: 'R', additions: 2, deletions: 1 },
      'http://h/o/r',
      'http://h/api/v1/repos/o/r',
      'abc',
    );
    expect(wire).toEqual({
      filename: 'a dir/b.txt',
      previous_filename: 'old.txt',
      status: 'renamed',
      additions: 2,
      deletions: 1,
      changes: 3,
      html_url: 'http://h/o/r/src/commit/abc/a%20dir/b.txt',
      contents_url: 'http://h/api/v1/repos/o/r/contents/a%20dir/b.txt?ref=abc',
      raw_url: 'http://h/o/r/raw/commit/abc/a%20dir/b.txt',
    });
    expect(toChangedFileWire({ path: 'x', status: 'A', additions: 1, deletions: 0 }, 'h', 'a', 's')).not.toHaveProperty('previous_filename');
  });
});
