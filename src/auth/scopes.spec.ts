import { InvalidScopeError, ScopeSet } from './scopes';

describe('ScopeSet', () => {
  it('write implies read', () => {
    const scopes = ScopeSet.parse(['write:user']);
    expect(scopes.allows('user', 'read')).toBe(true);
    expect(scopes.allows('user', 'write')).toBe(true);
    expect(scopes.allows('repository', 'read')).toBe(false);
  });

  it('read does not imply write', () => {
    expect(ScopeSet.parse(['read:admin']).allows('admin', 'write')).toBe(false);
  });

  it('all is every write scope and not public-only', () => {
    const scopes = ScopeSet.parse(['all']);
    expect(scopes.allows('activitypub', 'write')).toBe(true);
    expect(scopes.publicOnly).toBe(false);
    expect(scopes.toList()).toEqual(['all']);
  });

  it('ignores sudo and empty items, drops duplicates and implied scopes, and orders the rest', () => {
    expect(ScopeSet.parse(['read:user', 'sudo', '', 'write:user', 'read:admin', 'read:admin', 'public-only']).toList()).toEqual([
      'public-only',
      'read:admin',
      'write:user',
    ]);
  });

  it('splits comma-separated items', () => {
    expect(ScopeSet.parse(['read:issue,write:misc']).toList()).toEqual(['write:misc', 'read:issue']);
  });

  it('collapses a complete write set to all, keeping public-only first', () => {
    const everything = ['activitypub', 'admin', 'misc', 'notification', 'organization', 'package', 'issue', 'repository', 'user'].map((c) => `write:${c}`);
    expect(ScopeSet.parse([...everything, 'public-only']).toList()).toEqual(['public-only', 'all']);
  });

  it.each(['write:everything', 'admin', 'READ:user', 'read:'])('refuses %s', (scope) => {
    expect(() => ScopeSet.parse([scope])).toThrow(InvalidScopeError);
  });

  it('round-trips through its stored form', () => {
    const scopes = ScopeSet.parse(['public-only', 'write:repository']);
    expect(ScopeSet.fromStored(scopes.toStored()).toList()).toEqual(scopes.toList());
  });

  it('knows an empty set', () => {
    expect(ScopeSet.parse(['sudo', '']).isEmpty).toBe(true);
    expect(ScopeSet.parse(['public-only']).isEmpty).toBe(false);
  });
});
