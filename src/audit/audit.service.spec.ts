import { auditFilter } from './audit.service';

describe('the audit list query', () => {
  it('reads actor, an action or a family, a typed or untyped target, and RFC 3339 times', () => {
    expect(
      auditFilter({ actor: 'Alice', action: 'repository.*', target: 'repository:alice/tools', since: '2026-01-01T00:00:00Z', before: '2026-01-02T00:00:00Z' }),
    ).toEqual({
      actor: 'Alice',
      action: 'repository.*',
      target: { type: 'repository', name: 'alice/tools' },
      since: 1767225600,
      before: 1767312000,
    });
    expect(auditFilter({ target: 'alice', action: 'sign_in' })).toMatchObject({ target: { name: 'alice' }, action: 'sign_in' });
    expect(auditFilter({})).toEqual({ actor: undefined, action: undefined, target: undefined, since: undefined, before: undefined });
  });

  it('refuses an unknown action, a bad date and repeated parameters (422)', () => {
    for (const query of [{ action: 'drop tables' }, { action: 'repository.%' }, { since: 'yesterday' }, { before: '2026-13-45' }, { actor: ['a', 'b'] }]) {
      expect(() => auditFilter(query)).toThrow(expect.objectContaining({ status: 422 }));
    }
  });
});
