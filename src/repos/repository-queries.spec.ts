import { InvalidInputError } from '../common/errors';
import { parseSearchQuery, parseUserRepositoryOrder } from './repository-queries';

describe('GET /repos/search query', () => {
  it('defaults: name ascending, private repositories included for signed-in callers only', () => {
    const signedIn = parseSearchQuery({}, true);
    expect(signedIn.sort).toEqual([{ key: 'name' }]);
    expect(signedIn.includePrivate).toBe(true);
    expect(parseSearchQuery({}, false).includePrivate).toBe(false);
    expect(parseSearchQuery({ private: 'false' }, true).includePrivate).toBe(false);
    expect(parseSearchQuery({ private: 'nonsense' }, true).includePrivate).toBe(false);
  });

  it('reads booleans like Go ParseBool and integers leniently', () => {
    const query = parseSearchQuery({ includeDesc: 'T', exclusive: '1', topic: 'yes', uid: '42', starredBy: 'x', is_private: 'False' }, true);
    expect(query.includeDescription).toBe(true);
    expect(query.exclusive).toBe(true);
    expect(query.topicOnly).toBe(false);
    expect(query.uid).toBe(42);
    expect(query.starredBy).toBe(0);
    expect(query.isPrivate).toBe(false);
    expect(query.template).toBeUndefined();
  });

  it('trims q and takes the first of repeated values', () => {
    expect(parseSearchQuery({ q: ['  first ', 'second'] }, false).keyword).toBe('first');
  });

  it('maps sort and order', () => {
    expect(parseSearchQuery({ sort: 'alpha', order: 'desc' }, false).sort).toEqual([
      { key: 'owner', descending: true },
      { key: 'name', descending: true },
    ]);
    expect(parseSearchQuery({ sort: 'git_size' }, false).sort).toEqual([{ key: 'gitSize', descending: false }]);
    expect(parseSearchQuery({ sort: 'lfs_size', order: 'desc' }, false).sort).toEqual([{ key: 'lfsSize', descending: true }]);
    expect(parseSearchQuery({ sort: 'forks' }, false).sort).toEqual([]);
  });

  it.each([
    [{ mode: 'other' }, 'Invalid search mode: "other"'],
    [{ sort: 'other' }, 'Invalid sort mode: "other"'],
    // Names of Object.prototype's members are not sort modes (the fuzzer found sort=valueOf answering 500).
    [{ sort: 'valueOf' }, 'Invalid sort mode: "valueOf"'],
    [{ sort: '__proto__' }, 'Invalid sort mode: "__proto__"'],
    [{ sort: 'constructor', order: 'desc' }, 'Invalid sort mode: "constructor"'],
    [{ sort: 'id', order: 'up' }, 'Invalid sort order: "up"'],
    [{ sort: 'other', order: 'up' }, 'Invalid sort order: "up"'],
    [{ mode: 'other', sort: 'other' }, 'Invalid search mode: "other"'],
  ])('refuses %j: %s', (query, message) => {
    expect(() => parseSearchQuery(query, true)).toThrow(new InvalidInputError(message));
  });

  it('ignores order without sort', () => {
    expect(parseSearchQuery({ order: 'up' }, true).sort).toEqual([{ key: 'name' }]);
  });
});

describe('GET /user/repos order_by', () => {
  it('defaults to name and knows every documented value', () => {
    expect(parseUserRepositoryOrder({})).toEqual([{ key: 'name' }]);
    expect(parseUserRepositoryOrder({ order_by: 'newest' })).toEqual([{ key: 'created', descending: true }]);
    expect(parseUserRepositoryOrder({ order_by: 'feweststars' })).toEqual([{ key: 'stars' }]);
    for (const value of [
      'name',
      'id',
      'oldest',
      'recentupdate',
      'leastupdate',
      'alphabetically',
      'reversealphabetically',
      'size',
      'reversesize',
      'gitsize',
      'reversegitsize',
      'lfssize',
      'reverselfssize',
      'moststars',
      'mostforks',
      'fewestforks',
    ]) {
      expect(() => parseUserRepositoryOrder({ order_by: value })).not.toThrow();
    }
  });

  it.each(['random', 'toString', 'NAME'])('refuses %p with invalid order_by', (value) => {
    expect(() => parseUserRepositoryOrder({ order_by: value })).toThrow(new InvalidInputError('invalid order_by'));
  });
});
