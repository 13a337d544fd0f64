import { indexEntries, mentionsOf, prefixRange, queryWords, wordsOf } from './issue-words';

describe('issue words', () => {
  it('splits on anything but letters, digits and underscores, lower-cased and without repeats', () => {
    expect(wordsOf('Dependency Dashboard: update lodash-es to v4.17.21, dashboard')).toEqual([
      'dependency',
      'dashboard',
      'update',
      'lodash',
      'es',
      'to',
      'v4',
      '17',
      '21',
    ]);
    expect(wordsOf('Ünïcode ÉTÉ')).toEqual(['ünïcode', 'été']);
  });

  it('cuts long words and stops at the cap', () => {
    expect(wordsOf('x'.repeat(100))[0]).toHaveLength(64);
    expect(wordsOf('a b c d e', 3)).toEqual(['a', 'b', 'c']);
  });

  it('finds mentions, not e-mail addresses', () => {
    expect(mentionsOf('thanks @Alice and @bob.smith. Mail me at carol@example.com')).toEqual(['alice', 'bob.smith']);
    expect(indexEntries('Title', 'cc @alice')).toEqual(['title', 'cc', 'alice']);
  });

  it('turns a prefix into the range of the words it begins', () => {
    expect(prefixRange('client')).toEqual(['client', 'clienu']);
    expect(prefixRange('été')).toEqual(['été', 'étê']);
    expect(prefixRange('a_z')).toEqual(['a_z', 'a_{']);
  });

  it('splits a query into words', () => {
    expect(queryWords('snake_case 100%')).toEqual(['snake_case', '100']);
  });
});

describe('words longer than the column', () => {
  it('keeps the first 64 characters of a long word once, its rest not as words of their own', () => {
    const long = `${'a'.repeat(64)}${'b'.repeat(36)}`;
    expect(wordsOf(`${long} next`)).toEqual(['a'.repeat(64), 'next']);
    expect(wordsOf(`${'c'.repeat(128)} ${'c'.repeat(64)}`)).toEqual(['c'.repeat(64)]);
    expect(wordsOf(`${'d'.repeat(64)} ${'e'.repeat(10)}`)).toEqual(['d'.repeat(64), 'e'.repeat(10)]);
  });

  it('reads a run of letters as long as a 4 MiB body as one word', () => {
    expect(wordsOf(`title\n${'x'.repeat(4 * 1024 * 1024)} tail`)).toEqual(['title', 'x'.repeat(64), 'tail']);
  });
});
