import { parseTag, parseTreeListing } from './git-data';

describe('git data parsing', () => {
  it('reads ls-tree -z -l records, trees with size 0, and skips a record cut short', () => {
    const sha = 'a'.repeat(40);
    const output = [
      `100644 blob ${sha}     12\tdir/a b.txt`,
      `040000 tree ${sha}       -\tdir`,
      `160000 commit ${sha}       -\tsub`,
      `100644 blob ${sha}`,
    ].join('\0');
    expect(parseTreeListing(output)).toEqual([
      { path: 'dir/a b.txt', mode: '100644', type: 'blob', sha, size: 12 },
      { path: 'dir', mode: '040000', type: 'tree', sha, size: 0 },
      { path: 'sub', mode: '160000', type: 'commit', sha, size: 0 },
    ]);
  });

  it('reads a tag object: target, tagger with time and offset, message', () => {
    const text = `object ${'b'.repeat(40)}\ntype commit\ntag v1.0\ntagger Ann Example <ann@example.com> 1700000000 +0200\n\nfirst release\n`;
    expect(parseTag('c'.repeat(40), text)).toEqual({
      sha: 'c'.repeat(40),
      name: 'v1.0',
      objectSha: 'b'.repeat(40),
      objectType: 'commit',
      taggerName: 'Ann Example',
      taggerEmail: 'ann@example.com',
      taggerUnix: 1700000000,
      taggerOffset: '+0200',
      message: 'first release\n',
    });
  });
});
