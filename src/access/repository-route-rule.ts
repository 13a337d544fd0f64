import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, NotFoundError } from '../common/errors';
import type { RepositoryUnit } from './access-mode';
import { assertAcceptsWrites } from './access-policy';
import { assertPullRequestsReadable } from './pull-rules';
import type { RepositoryTarget } from './repository-policy';

/**
 * What a repository route asks of the caller beyond reading the repository (which every route asks):
 * - `read`: nothing more (the route may still be a write that a named rule of this folder decides);
 * - `signed-in`: sign-in (401), the rest decided by a named rule the service asks;
 * - `write`: sign-in, then write on a unit (403);
 * - `admin`, `owner`: sign-in, then the repository's admin or owner mode (403).
 */
export type RepositoryRouteMode = 'read' | 'signed-in' | 'write' | 'admin' | 'owner';

export interface RepositoryRouteRule {
  /** The unit the route reads (404 when the caller cannot read it); none: any readable unit. */
  unit?: RepositoryUnit;
  /** The route is about the repository's own issue tracker: 404 when it has none (disabled or external), before sign-in. */
  needsIssueTracker?: boolean;
  /**
   * The route is about the repository's pull requests: 404 when they are off or the caller may not read the code
   * (Forgejo's route group of pull requests), before sign-in.
   */
  needsPullRequests?: boolean;
  /** What the caller must be or hold on the repository; default `read`. */
  mode?: RepositoryRouteMode;
  /** `write`: the unit written, when it is not the unit read; of several, write on any one of them admits. */
  writes?: RepositoryUnit | RepositoryUnit[];
  /**
   * `write` on `repo.code` of a route that moves one named branch (the contents API's file writes): a caller who
   * does not write the code is let in when they may push some branch as a maintainer of an open pull request from
   * this repository (maintainer-pushes.ts); the service then asks `assertMayWriteBranch` for the branch the body
   * names, as Forgejo decides by the branch.
   */
  maintainerEdits?: boolean;
  /** The 403 text of a refused `write`, `admin` or `owner`, in Forgejo's words for the route. */
  message?: string;
  /**
   * Whether an archived repository refuses the route (423), after the permission: `write` refuses by default
   * (labels, which Forgejo leaves writable, say `accept`); the other modes accept by default.
   */
  archived?: 'refuse' | 'accept';
}

const DEFAULT_REFUSALS = {
  write: 'user should have a permission to write to the repository',
  admin: 'user should be an owner or a collaborator with admin write of a repository',
  owner: 'user should be the owner of the repo',
};

/** The units a `write` rule writes (any one admits). */
export function writtenUnits(rule: RepositoryRouteRule): RepositoryUnit[] {
  const units = ([] as RepositoryUnit[]).concat(rule.writes ?? rule.unit ?? []);
  if (units.length === 0) throw new Error("a repository route of mode 'write' names the unit it writes");
  return units;
}

/**
 * The door of a repository route, after the read rule and before any body is read (docs/check-order.md):
 * issue tracker or pull requests (404) → sign-in (401) → permission (403 with the route's message) → archived (423). The account's state was decided
 * for every request by the authentication middleware (403 for a disabled account).
 */
export async function admitToRepositoryRoute(target: RepositoryTarget, rule: RepositoryRouteRule): Promise<void> {
  if (rule.needsIssueTracker && !hasIssueTracker(target.repo)) throw new NotFoundError();
  if (rule.needsPullRequests) await assertPullRequestsReadable(target);
  const mode = rule.mode ?? 'read';
  if (mode === 'read') return;
  requireSignedIn(target.viewer);
  if (mode !== 'signed-in') {
    const permission = await target.permission();
    const granted =
      mode === 'write' ? writtenUnits(rule).some((unit) => permission.canWrite(unit)) : mode === 'admin' ? permission.isAdmin : permission.isOwner;
    const maintainer = !granted && mode === 'write' && rule.maintainerEdits === true && (await target.mayPushAsMaintainer(null));
    if (!granted && !maintainer) throw new ForbiddenError(rule.message ?? DEFAULT_REFUSALS[mode]);
  }
  if (rule.archived === 'refuse' || (rule.archived === undefined && mode === 'write')) assertAcceptsWrites(target.repo, target.owner);
}

/** Whether the repository has its own issue tracker (enabled, not an external one). */
export function hasIssueTracker(repo: { hasIssues: boolean; externalTrackerUrl: string }): boolean {
  return repo.hasIssues && repo.externalTrackerUrl === '';
}
