import { containsPattern, gramLookup, MAX_QUERY_GRAMS, searchGrams } from './user-search.grams';

/** The property the index relies on: a field contains the query only if the lookup would select the field. */
function lookupSelects(fields: string[], query: string): boolean {
  const grams = searchGrams(fields);
  const lookup = gramLookup(query);
  if (lookup.kind === 'prefix') return grams.some((gram) => gram >= lookup.low && gram < lookup.high);
  return lookup.grams.every((gram) => grams.includes(gram));
}

describe('user search grams', () => {
  it('gives one gram per position (trigrams, then the two tail grams) and one per character', () => {
    expect(searchGrams(['Alice'])).toEqual(['ali', 'lic', 'ice', 'ce', 'e', 'a', 'l', 'i', 'c']);
  });

  it('merges the grams of all fields without duplicates', () => {
    expect(searchGrams(['aaa', 'aa'])).toEqual(['aaa', 'aa', 'a']);
  });

  it('lower-cases, including non-ASCII letters', () => {
    expect(searchGrams(['ÄÖ'])).toEqual(['äö', 'ö', 'ä']);
  });

  it('never puts a space or control character into a gram (MySQL PAD SPACE)', () => {
    for (const gram of searchGrams(['a b\tc\u0001d '])) expect(gram).not.toMatch(/[\s\u0000-\u001f]/);
  });

  it('counts characters, not UTF-16 units', () => {
    expect(searchGrams(['😀ab'])).toEqual(['😀ab', 'ab', 'b', '😀', 'a']);
  });

  it('looks up a query of one character by its own gram', () => {
    expect(gramLookup('Ä')).toEqual({ kind: 'all', grams: ['ä'] });
  });

  it('looks up queries of two characters by prefix range', () => {
    expect(gramLookup('Ab')).toEqual({ kind: 'prefix', low: 'ab', high: 'ab\u{10FFFF}' });
  });

  it('looks up longer queries by all their distinct trigrams', () => {
    expect(gramLookup('abcabc')).toEqual({ kind: 'all', grams: ['abc', 'bca', 'cab'] });
  });

  it('caps the number of trigrams of a long query, keeping the first and the last', () => {
    const lookup = gramLookup('abcdefghijklmnopqrstuvwxyz');
    expect(lookup.kind).toBe('all');
    if (lookup.kind !== 'all') return;
    expect(lookup.grams.length).toBeLessThanOrEqual(MAX_QUERY_GRAMS);
    expect(lookup.grams[0]).toBe('abc');
    expect(lookup.grams[lookup.grams.length - 1]).toBe('xyz');
  });

  it('selects every field that contains the query, whatever its position and length', () => {
    const fields = ['jdoe', 'John Q. Doe-Ülker', 'j.doe@example.com'];
    const text = fields.join('\n').toLowerCase();
    for (const field of fields) {
      const lowered = field.toLowerCase();
      for (let start = 0; start < lowered.length; start++) {
        for (let end = start + 1; end <= lowered.length; end++) {
          const query = lowered.slice(start, end).trim();
          if (query === '' || !text.includes(query)) continue;
          expect([query, lookupSelects(fields, query)]).toEqual([query, true]);
        }
      }
    }
  });

  it('escapes LIKE wildcards and the escape character', () => {
    expect(containsPattern('A_b%c!')).toBe('%a!_b!%c!!%');
  });
});
