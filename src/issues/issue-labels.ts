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

/**
 * The labels after adding `added` to `current`, in order: an exclusive label takes off every other label of its
 * scope (the one added last wins), as Forgejo's exclusive scopes.
 */
export function withLabels(current: LabelFacts[], added: LabelFacts[]): LabelFacts[] {
  let result = [...current];
  for (const label of added) {
    if (result.some((existing) => existing.id === label.id)) continue;
    const scope = exclusiveScope(label);
    if (scope !== undefined) result = result.filter((existing) => exclusiveScope(existing) !== scope);
    result.push(label);
  }
  return result;
}
