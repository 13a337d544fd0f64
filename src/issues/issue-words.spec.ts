import { indexEntries, mentionsOf, prefixRange, queryWords, wordsOf } from './issue-words';

describe('issue words', () => {
  it('splits on anything but letters, digits and underscores, lower-cased and without repeats', () => {
    expect(wordsOf('Dependency Dashboard: update lodash-es to v4.17.21, dashboard')).toEqual(['dependency', 'dashboard', 'update', 'lodash', 'es', 'to', 'v4', '17', '21']);
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
