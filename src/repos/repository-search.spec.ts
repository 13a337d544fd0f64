import { candidateLookup, DESCRIPTION_SOURCE, ftsMatch, NAME_SOURCE, searchTerms, trigrams } from './repository-search';

describe('repository search index lookups', () => {
  it('lowers the alternatives and adds the name part of the owner/name form, names only', () => {
    expect(searchTerms(['Foo', 'BAR'], true, ['Alice', 'Repo'])).toEqual([
      { text: 'foo', includeDescription: true },
      { text: 'bar', includeDescription: true },
      { text: 'repo', includeDescription: false },
    ]);
  });

  it('scans when any term is shorter than three characters (code points, so one emoji counts once)', () => {
    expect(candidateLookup(searchTerms(['abc', 'ab'], false), 'sqlite')).toEqual({ kind: 'scan' });
    expect(candidateLookup(searchTerms(['abc'], false, ['x', 'y']), 'mysql')).toEqual({ kind: 'scan' });
    expect(candidateLookup(searchTerms(['🚀🚀'], false), 'sqlite')).toEqual({ kind: 'scan' });
    expect(candidateLookup(searchTerms(['🚀🚀🚀'], false), 'sqlite').kind).toBe('fts');
    // FTS5 reads its query as a C string; the gram table takes any character.
    expect(candidateLookup(searchTerms(['a\u0000bc'], false), 'sqlite')).toEqual({ kind: 'scan' });
    expect(candidateLookup(searchTerms(['a\u0000bc'], false), 'mysql').kind).toBe('grams');
  });

  it('SQLite: phrases joined by OR, descriptions only for the terms that search them, quotes doubled', () => {
    expect(candidateLookup(searchTerms(['api', 'say "hi"'], false), 'sqlite')).toEqual({ kind: 'fts', names: '"api" OR "say ""hi"""' });
    expect(candidateLookup(searchTerms(['api'], true, ['o', 'cli']), 'sqlite')).toEqual({ kind: 'fts', names: '"api" OR "cli"', descriptions: '"api"' });
    // FTS5 operators and LIKE wildcards are plain text inside a phrase.
    expect(ftsMatch([{ text: 'a*b OR c:%_', includeDescription: false }])).toBe('"a*b OR c:%_"');
  });

  it('MariaDB: the distinct trigrams of each term, in names or in names and descriptions', () => {
    expect(candidateLookup(searchTerms(['Banana'], true), 'mysql')).toEqual({
      kind: 'grams',
      terms: [{ grams: ['ban', 'ana', 'nan'], sources: [NAME_SOURCE, DESCRIPTION_SOURCE] }],
    });
    expect(trigrams('é🚀xy')).toEqual(['é🚀x', '🚀xy']);
  });
});
