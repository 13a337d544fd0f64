import { DecodedBody } from '../http/body-decoding';
import { BadRequestError, InvalidInputError } from '../common/errors';
import { contextBase, mentionCandidates, readMarkdownOption, renderMode } from './markdown.option';

const ROOT = 'http://anvil.test/';

describe('readMarkdownOption', () => {
  const read = (value: Record<string, unknown>, fromForm = false) => readMarkdownOption(new DecodedBody(value, fromForm));

  it('defaults every field', () => {
    expect(read({})).toEqual({ text: '', mode: '', context: '', wiki: false });
  });

  it('matches keys case-insensitively and lets a later spelling win', () => {
    expect(read({ TEXT: 'a', mode: 'gfm', Context: 'o/r', wIKI: true })).toEqual({ text: 'a', mode: 'gfm', context: 'o/r', wiki: true });
    expect(read({ Text: 'first', text: 'second' }).text).toBe('second');
  });

  it('treats null as absent and ignores unknown keys', () => {
    expect(read({ Text: null, Wiki: null, extra: 1 })).toEqual({ text: '', mode: '', context: '', wiki: false });
  });

  it('reports the first field of the wrong type by its option name', () => {
    expect(() => read({ text: 1 })).toThrow(new InvalidInputError('[Text]: must be a string'));
    expect(() => read({ wiki: 'true' })).toThrow(new InvalidInputError('[Wiki]: must be a boolean'));
  });

  it('raises the decoding error the body carries', () => {
    const error = new BadRequestError('invalid JSON body');
    expect(() => readMarkdownOption(new DecodedBody({}, false, error))).toThrow(error);
  });

  it('reads form fields as their last value, Wiki as a boolean', () => {
    expect(read({ text: ['a', 'b'], wiki: ['on'] }, true)).toEqual({ text: 'b', mode: '', context: '', wiki: true });
    expect(read({ wiki: ['0'] }, true).wiki).toBe(false);
    expect(() => read({ wiki: ['maybe'] }, true)).toThrow(new InvalidInputError('[Wiki]: must be a boolean'));
  });
});

describe('renderMode', () => {
  it.each([
    ['gfm', 'gfm'],
    ['comment', 'comment'],
    ['markdown', 'markdown'],
    ['', 'markdown'],
    ['GFM', 'markdown'],
    ['wiki', 'markdown'],
  ])('%p → %p', (mode, expected) => {
    expect(renderMode(mode)).toBe(expected);
  });
});

describe('contextBase', () => {
  it.each([
    ['', ROOT],
    ['owner/repo', `${ROOT}owner/repo`],
    ['/owner/repo/', `${ROOT}owner/repo/`],
    ['https://example.com/o/r', 'https://example.com/o/r'],
    ['HTTP://Example.com/o?x=1#y', 'http://example.com/o'],
    ['javascript:alert(1)', `${ROOT}javascript:alert(1)`],
    ['//evil.example/x', `${ROOT}evil.example/x`],
    ['a b?c#d', `${ROOT}a%20b%3Fc%23d`],
  ])('%p → %p', (context, expected) => {
    expect(contextBase(context, ROOT)).toBe(expected);
  });

  it('keeps the path of a ROOT_URL below the host', () => {
    expect(contextBase('o/r', 'https://example.com/forge/')).toBe('https://example.com/forge/o/r');
  });
});

describe('mentionCandidates', () => {
  it('finds distinct lower-cased names in document order', () => {
    expect(mentionCandidates('hi @Alice, @bob and @alice. (@carol) `@dave`', 10)).toEqual(['alice', 'bob', 'carol', 'dave']);
  });

  it('skips e-mail addresses and names that cannot exist', () => {
    expect(mentionCandidates(`mail@example.com @${'x'.repeat(41)} @ alone @-x`, 10)).toEqual([]);
  });

  it('drops a trailing dot', () => {
    expect(mentionCandidates('thanks @a.b.', 10)).toEqual(['a.b']);
  });

  it('stops at the limit', () => {
    expect(mentionCandidates('@a @b @c @d', 2)).toEqual(['a', 'b']);
  });
});
