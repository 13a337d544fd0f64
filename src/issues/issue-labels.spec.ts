import { exclusiveScope, LabelFacts, usableOn, withLabels } from './issue-labels';

const label = (id: number, name: string, exclusive = false, repoId = 1, orgId = 0): LabelFacts => ({ id, name, exclusive, repoId, orgId });

describe('labels on issues', () => {
  it('reads the scope of exclusive labels only', () => {
    expect(exclusiveScope(label(1, 'priority/high', true))).toBe('priority');
    expect(exclusiveScope(label(1, 'a/b/c', true))).toBe('a/b');
    expect(exclusiveScope(label(1, 'priority/high'))).toBeUndefined();
    expect(exclusiveScope(label(1, 'plain', true))).toBeUndefined();
  });

  it('lets an exclusive label replace the others of its scope, and keeps the rest', () => {
    const high = label(1, 'priority/high', true);
    const low = label(2, 'priority/low', true);
    const bug = label(3, 'bug');
    expect(withLabels([high, bug], [low]).map((l) => l.id)).toEqual([3, 2]);
    expect(withLabels([bug], [bug, high]).map((l) => l.id)).toEqual([3, 1]);
  });

  it('accepts labels of the repository and of its organisation only', () => {
    expect(usableOn(label(1, 'x', false, 7, 0), 7, 9)).toBe(true);
    expect(usableOn(label(1, 'x', false, 0, 9), 7, 9)).toBe(true);
    expect(usableOn(label(1, 'x', false, 8, 0), 7, 9)).toBe(false);
    expect(usableOn(label(1, 'x', false, 0, 10), 7, 9)).toBe(false);
  });
});
