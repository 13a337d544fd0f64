import { ForbiddenError } from '../common/errors';
import type { PermissionWire } from './repository-permission';
import type { RepositoryTarget } from './repository-policy';

// Why: what a repository route shows the caller, or lets them ask about others, beyond the route's own rule
// (which its `@RepositoryRoute` declares): their permissions on a `Repository` answer, a release's drafts, another
// user's permission. Services ask these by name after their lookups; the rules of writes that depend on the item
// or the body are in repository-rules.ts.

/** The `permissions` of a `Repository` answer: what the caller may do there (admin, push, pull), as Forgejo shows it. */
export async function permissionsOnWire(target: RepositoryTarget): Promise<PermissionWire> {
  return (await target.permission()).toWire();
}

/** Drafts of releases (in lists, by id, by tag) are seen only by writers of releases; others get 404 or none. */
export function seesReleaseDrafts(target: RepositoryTarget): Promise<boolean> {
  return target.canWrite('repo.releases');
}

/**
 * GET …/collaborators/{c}/permission, for a signed-in caller and before the lookup of that user (Forgejo asks
 * before it: a stranger asking about an unknown name gets 403, not 404): site admins and the repository's admins
 * may ask about anyone, others only about themselves (403).
 */
export async function assertMayQueryPermissionOf(target: RepositoryTarget, username: string): Promise<void> {
  const own = target.viewer.user !== null && target.viewer.user.lowerName === username.toLowerCase();
  if (!own && !(await target.permission()).isAdmin) {
    throw new ForbiddenError('Only admins can query all permissions, repo admins can query all repo permissions, collaborators can query only their own');
  }
}
