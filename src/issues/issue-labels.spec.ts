import { addingLabels, exclusiveScope, LabelFacts, replacingLabels, usableOn, withLabels } from './issue-labels';

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

  const steps = (result: { steps: { label: LabelFacts; added: boolean }[] }) => result.steps.map((step) => `${step.added ? '+' : '-'}${step.label.id}`);

  it('adds in the order named, each exclusive label first taking off the others of its scope', () => {
    const high = label(1, 'priority/high', true);
    const low = label(2, 'priority/low', true);
    const bug = label(3, 'bug');
    const docs = label(4, 'docs');
    const added = addingLabels([high, bug], [docs, bug, low]);
    expect(added.labels.map((l) => l.id)).toEqual([3, 4, 2]);
    expect(steps(added)).toEqual(['+4', '-1', '+2']);
  });

  it('replaces by putting the new labels on by id, then taking the unwanted off by id', () => {
    const high = label(1, 'priority/high', true);
    const low = label(2, 'priority/low', true);
    const bug = label(3, 'bug');
    const docs = label(4, 'docs');
    const wontfix = label(5, 'wontfix');
    const replaced = replacingLabels([wontfix, high, bug], [docs, high, low]);
    expect(replaced.labels.map((l) => l.id).sort()).toEqual([2, 4]);
    expect(steps(replaced)).toEqual(['-1', '+2', '+4', '-3', '-5']);
    expect(steps(replacingLabels([], [docs, bug, high, low]))).toEqual(['+2', '+3', '+4']);
    expect(steps(replacingLabels([bug], [bug]))).toEqual([]);
  });
});
