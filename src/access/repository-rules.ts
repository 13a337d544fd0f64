import { ForbiddenError } from '../common/errors';
import { AccessMode } from './access-mode';
import type { RepositoryTarget } from './repository-policy';

// Why: the rules of repository writes that depend on more than the route (the item's poster, its lock, a field of
// the body, the organisation's settings). Services ask these by name; the route's own rule is declared on the
// handler (`@RepositoryRoute({ mode })`, repository-route-rule.ts), and nothing else decides repository access.

/**
 * PUT and DELETE /repos/{o}/{r}/teams/{team}, after the route admitted repository admins: only the
 * organisation's owners unless it lets repository admins change team access (403).
 */
export async function assertMayChangeTeamAccess(target: RepositoryTarget): Promise<void> {
  if (!target.owner.repoAdminChangeTeamAccess && (await target.permission()).mode < AccessMode.Owner)
    throw new ForbiddenError('user is nor repo admin nor owner');
}

/** Reactions on a locked issue or its comments: writers of issues only (403), as Forgejo. */
export async function assertMayChangeReaction(target: RepositoryTarget, issue: { isLocked: boolean }): Promise<void> {
  if (issue.isLocked && !(await target.canWrite('repo.issues'))) throw new ForbiddenError('no permission to change reaction');
}
