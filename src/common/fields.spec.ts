import { ALPHA_DASH_DOT, EMAIL, fieldFailure, VALID_URL } from './fields';

describe('fieldFailure', () => {
  const name = { field: 'Name', type: 'string' as const, required: true, maxSize: 5, rules: [ALPHA_DASH_DOT] };

  it.each([
    [undefined, '[Name]: Required'],
    [null, '[Name]: Required'],
    ['', '[Name]: Required'],
    [42, '[Name]: must be a string'],
    ['toolong', '[Name]: MaxSize'],
    ['a b', '[Name]: AlphaDashDot'],
    ['a-b.c', undefined],
  ])('%j → %s', (value, message) => {
    expect(fieldFailure(name, value)).toBe(message);
  });

  it('counts characters, not bytes', () => {
    expect(fieldFailure({ field: 'Title', type: 'string', maxSize: 3 }, 'äöü')).toBeUndefined();
  });

  it('lets an optional field be absent', () => {
    expect(fieldFailure({ field: 'Private', type: 'boolean' }, undefined)).toBeUndefined();
    expect(fieldFailure({ field: 'Private', type: 'boolean' }, 'yes')).toBe('[Private]: must be a boolean');
  });

  it('checks enumerations', () => {
    expect(fieldFailure({ field: 'Visibility', type: 'string', in: ['public'] }, 'secret')).toBe('[Visibility]: In');
  });

  it('checks integers and string arrays', () => {
    expect(fieldFailure({ field: 'Limit', type: 'integer', required: true }, 1.5)).toBe('[Limit]: must be an integer');
    expect(fieldFailure({ field: 'Limit', type: 'integer', required: true }, 0)).toBeUndefined();
    expect(fieldFailure({ field: 'Scopes', type: 'strings' }, ['a', 1])).toBe('[Scopes]: must be an array of strings');
  });
});

describe('rules', () => {
  it('EMAIL', () => {
    expect(EMAIL.test('a@b.co')).toBe(true);
    expect(EMAIL.test('a@b')).toBe(false);
    expect(EMAIL.test('a b@c.de')).toBe(false);
  });

  it('VALID_URL accepts http(s) and empty', () => {
    expect(VALID_URL.test('')).toBe(true);
    expect(VALID_URL.test('https://example.com/x')).toBe(true);
    expect(VALID_URL.test('javascript:alert(1)')).toBe(false);
  });
});
