import type { AuthContext } from '../auth/auth-context';
import { ForbiddenError, NotFoundError } from '../common/errors';
import type { IssueEntity } from '../issues/issue.entity';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { UserEntity } from '../users/user.entity';
import { AccessMode } from './access-mode';
import type { RepositoryPermission } from './repository-permission';
import type { RepositoryPolicy, RepositoryTarget } from './repository-policy';

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

/** The unit whose writers change an issue: the pull requests' for the issue of a pull request. */
function unitOfIssue(issue: { isPull: boolean }): 'repo.issues' | 'repo.pulls' {
  return issue.isPull ? 'repo.pulls' : 'repo.issues';
}

/**
 * Whether the caller may set the writer-only fields of an issue of `unit` (labels, milestone, assignees, due
 * date): writers of that unit; the fields of anyone else are dropped silently, as Forgejo.
 */
export function maySetIssueMetadata(target: RepositoryTarget, unit: 'repo.issues' | 'repo.pulls'): Promise<boolean> {
  return target.canWrite(unit);
}

/**
 * PATCH …/issues/{index}, after the issue's lookup: its poster or a writer of its unit (403); `writer` tells
 * which, for the writer-only fields (maySetIssueMetadata).
 */
export async function assertMayEditIssue(target: RepositoryTarget, issue: { isPull: boolean; posterId: number }): Promise<{ writer: boolean }> {
  const writer = await maySetIssueMetadata(target, unitOfIssue(issue));
  if (!writer && issue.posterId !== target.viewer.user?.id) throw new ForbiddenError('user should be the poster or have write access to issues');
  return { writer };
}

/** POST …/issues/{index}/deadline, after the issue's lookup: writers of its unit only (403). */
export async function assertMaySetDeadline(target: RepositoryTarget, issue: { isPull: boolean }): Promise<void> {
  if (!(await maySetIssueMetadata(target, unitOfIssue(issue)))) throw new ForbiddenError('Not repo writer');
}

/** An issue's labels (add, replace, remove, clear), after the issue's lookup: writers of issues only (403). */
export async function assertMayChangeIssueLabels(target: RepositoryTarget): Promise<void> {
  if (!(await target.canWrite('repo.issues'))) throw new ForbiddenError('user should have write access to issues');
}

/** POST …/issues/{index}/comments, after the issue's lookup: a locked issue takes comments from writers and site admins only (403). */
export async function assertMayComment(target: RepositoryTarget, issue: { isLocked: boolean }): Promise<void> {
  if (issue.isLocked && !(await target.canWrite('repo.issues')) && !target.viewer.isAdmin) throw new ForbiddenError('issue is locked');
}

/** PATCH and DELETE of a comment, after its lookup: its poster or a writer of issues (403). */
export async function assertMayChangeComment(target: RepositoryTarget, comment: { posterId: number }): Promise<void> {
  if (comment.posterId === target.viewer.user?.id) return;
  if (!(await target.canWrite('repo.issues'))) throw new ForbiddenError('user should be the poster or have write access to issues');
}

/** A repository an issue route reaches besides its own (a linked issue's), with its owner. */
export interface IssueRepository {
  repo: RepositoryEntity;
  owner: UserEntity;
}

/** The caller's permission on `place`: the route's own (read once per request) when it is the route's repository. */
function permissionOn(target: RepositoryTarget, policy: RepositoryPolicy, place: IssueRepository): Promise<RepositoryPermission> {
  return place.repo.id === target.repo.id ? target.permission() : policy.permission(target.viewer, place.repo, place.owner);
}

/**
 * Whether the caller may read an issue of `place` (listed dependencies and blocks, timeline references):
 * the issues or pull requests unit of its repository; the others are left out, as Forgejo.
 */
export async function mayReadIssue(target: RepositoryTarget, policy: RepositoryPolicy, place: IssueRepository, issue: { isPull: boolean }): Promise<boolean> {
  return (await permissionOn(target, policy, place)).canRead(unitOfIssue(issue));
}

/** One side of a link between issues (…/dependencies, …/blocks), with the caller's permission on its repository. */
export interface LinkedIssue extends IssueRepository {
  issue: IssueEntity;
  permission: RepositoryPermission;
}

/** An issue a link names, after its lookup: 404 when the caller cannot see its repository. */
export async function linkedIssue(target: RepositoryTarget, policy: RepositoryPolicy, place: IssueRepository, issue: IssueEntity): Promise<LinkedIssue> {
  const permission = await permissionOn(target, policy, place);
  if (!permission.hasAccess) throw new NotFoundError();
  return { ...place, issue, permission };
}

/**
 * Linking or unlinking issues, after both lookups: the waiting issue's repository takes links (not archived,
 * dependencies and the tracker on), and the caller writes the waiting issue and reads the awaited one; 404
 * otherwise, as Forgejo.
 */
export function assertMayLinkIssues(waiting: LinkedIssue, awaited: LinkedIssue): void {
  if (waiting.repo.isArchived || !waiting.repo.enableIssueDependencies || !waiting.repo.hasIssues) throw new NotFoundError();
  if (!waiting.permission.canWrite(unitOfIssue(waiting.issue)) || !awaited.permission.canRead(unitOfIssue(awaited.issue))) throw new NotFoundError();
}

/**
 * A pushed commit that names an issue of `place` (`fixes #N`, `owner/repo#N`), for the pusher: the reference is
 * recorded when they can read its issues; it closes or reopens the issue when they also write issues, administer
 * the repository or posted the issue, as Forgejo.
 */
export async function commitReferenceRights(
  policy: RepositoryPolicy,
  pusher: AuthContext,
  place: IssueRepository,
  issue: { posterId: number },
): Promise<{ record: boolean; changeState: boolean; permission: RepositoryPermission }> {
  const permission = await policy.permission(pusher, place.repo, place.owner);
  const record = permission.canRead('repo.issues');
  const changeState = record && (permission.mode >= AccessMode.Admin || permission.canWrite('repo.issues') || issue.posterId === pusher.user?.id);
  return { record, changeState, permission };
}

/** PUT and DELETE /teams/{id}/repos/{org}/{repo}, after the team's own rule: the caller administers the repository (403). */
export async function assertAdministersRepository(policy: RepositoryPolicy, viewer: AuthContext, place: IssueRepository, message: string): Promise<void> {
  if (!(await policy.permission(viewer, place.repo, place.owner)).isAdmin) throw new ForbiddenError(message);
}
