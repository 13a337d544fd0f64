import { AsyncLocalStorage } from 'node:async_hooks';
import type { AuditActor } from '../audit/audit-context';
import type { GitClient } from '../git/git-client';

/**
 * What the work now running was started for, carried along its asynchronous calls: one store for every such
 * fact (the git client whose share and signal git commands use, the actor audit events name), so that a request
 * enters one scope, and every promise made while it runs copies one store, not one per fact. Each fact has its
 * own module (git/git-client.ts, audit/audit-context.ts) that reads and sets it here.
 */
export interface RequestScope {
  /** Whom git work is done for; null: shared background work, for nobody. */
  readonly gitClient?: GitClient | null;
  /** Who acts, for the audit log. */
  readonly actor?: AuditActor;
  /** Work nobody waits for (mergeability tests): the git it starts yields the processor to requests. */
  readonly background?: boolean;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `work` with `facts` in scope, on top of (replacing only those facts of) the scope it is called in. */
export function runInScope<T>(facts: RequestScope, work: () => T): T {
  const outer = scope.getStore();
  return scope.run(outer ? { ...outer, ...facts } : facts, work);
}

/** The scope of the work now running (undefined outside any). */
export function currentScope(): RequestScope | undefined {
  return scope.getStore();
}
