// Why: which labels an issue ends up with is a rule of its own (scopes, owners), kept pure and tested apart.

/** A label as the rule needs it. */
export interface LabelFacts {
  id: number;
  name: string;
  exclusive: boolean;
  repoId: number;
  orgId: number;
}

/** The scope of an exclusive label `scope/value` (the part before the last `/`), or undefined. */
export function exclusiveScope(label: LabelFacts): string | undefined {
  if (!label.exclusive) return undefined;
  const slash = label.name.lastIndexOf('/');
  return slash > 0 ? label.name.slice(0, slash) : undefined;
}

/** Labels that may go on an issue of this repository: its own, and its organisation's. */
export function usableOn(label: LabelFacts, repoId: number, ownerId: number): boolean {
  return (label.repoId === repoId && label.orgId === 0) || (label.repoId === 0 && label.orgId === ownerId);
}

/** A label put on (`added`) or taken off an issue: one timeline entry each. */
export interface LabelStep<L extends LabelFacts> {
  label: L;
  added: boolean;
}

const byId = (a: LabelFacts, b: LabelFacts) => a.id - b.id;

/**
 * Adding `added` to `current`, in order (POST …/labels): a label already on is skipped; an exclusive label first
 * takes off every other label of its scope (the one added last wins), as Forgejo's exclusive scopes. The labels
 * afterwards, and the steps in the order Forgejo writes their timeline entries.
 */
export function addingLabels<L extends LabelFacts>(current: L[], added: L[]): { labels: L[]; steps: LabelStep<L>[] } {
  let labels = [...current];
  const steps: LabelStep<L>[] = [];
  for (const label of added) {
    if (labels.some((existing) => existing.id === label.id)) continue;
    const scope = exclusiveScope(label);
    if (scope !== undefined) {
      for (const existing of labels) if (exclusiveScope(existing) === scope) steps.push({ label: existing, added: false });
      labels = labels.filter((existing) => exclusiveScope(existing) !== scope);
    }
    labels.push(label);
    steps.push({ label, added: true });
  }
  return { labels, steps };
}

/** The labels after adding `added` to `current` (addingLabels without its steps). */
export function withLabels<L extends LabelFacts>(current: L[], added: L[]): L[] {
  return addingLabels(current, added).labels;
}

/**
 * Replacing the labels with `wanted` (PUT …/labels, a new issue's labels, a pull request's edit): of one exclusive
 * scope only the last named stays; the new ones go on by id, each first taking off the others of its scope, then
 * the ones not wanted come off by id, as Forgejo orders their timeline entries.
 */
export function replacingLabels<L extends LabelFacts>(current: L[], wanted: L[]): { labels: L[]; steps: LabelStep<L>[] } {
  const kept = withLabels([], wanted);
  const adding = kept.filter((label) => !current.some((existing) => existing.id === label.id)).sort(byId);
  const { labels, steps } = addingLabels([...current].sort(byId), adding);
  const leaving = labels.filter((label) => !kept.some((other) => other.id === label.id)).sort(byId);
  for (const label of leaving) steps.push({ label, added: false });
  return { labels: labels.filter((label) => !leaving.includes(label)), steps };
}
