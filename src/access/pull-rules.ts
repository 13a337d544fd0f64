import { ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { assertAcceptsWrites } from './access-policy';
import type { RepositoryPermission } from './repository-permission';
import type { RepositoryTarget } from './repository-policy';

// Why: the rules of pull requests and their reviews that depend on more than the route (the pull request's
// poster, its head repository, a scheduled merge's author, a review's reviewer, the reviewer asked for). The
// services ask these by name after their lookups; the route's own rule is declared on the handler
// (`@RepositoryRoute({ needsPullRequests, mode })`, repository-route-rule.ts). Kept apart from
// repository-rules.ts, the issues' rules, so that the two modules change their rules independently.

/**
 * The pull requests of a repository exist for the caller: the unit is on and they read its code (404 otherwise;
 * Forgejo's route group of pull requests asks mustAllowPulls, then the code's reader). The route's door asks it
 * for `needsPullRequests`, before sign-in.
 */
export async function assertPullRequestsReadable(target: RepositoryTarget): Promise<void> {
  if (!target.repo.hasPullRequests) throw new NotFoundError();
  if (!(await target.permission()).canRead('repo.code')) throw new NotFoundError();
}

/** A comparison of revisions reads the code: 404 for a caller who may not (a route of the code unit). */
export async function assertCodeReadable(target: RepositoryTarget): Promise<void> {
  if (!(await target.permission()).canRead('repo.code')) throw new NotFoundError();
}

/** A head in another repository of the network is seen only by those who read its code (Forgejo: else not found). */
export async function mayReadPullHead(head: RepositoryTarget): Promise<boolean> {
  return (await head.permission()).canRead('repo.code');
}

/** POST …/pulls, after the head's lookups: the author may push the head branch, its repository's writers (403). */
export async function assertMayOpenPullFrom(head: RepositoryTarget): Promise<void> {
  if (!(await head.canWrite('repo.code'))) throw new ForbiddenError('user should have a permission to push to the head branch');
}

/** What the caller is to a pull request they edit. */
export interface PullEditor {
  /** Writes the repository's pull requests: may change every field. */
  writer: boolean;
  /** Opened it: may change its text and state, and whether maintainers may push to its head. */
  poster: boolean;
}

/**
 * PATCH …/pulls/{index}, after the body and the pull request's lookup (Forgejo's order): its poster or a writer
 * of pull requests (403 otherwise).
 */
export async function assertMayEditPull(target: RepositoryTarget, issue: { posterId: number }): Promise<PullEditor> {
  const writer = await target.canWrite('repo.pulls');
  const poster = issue.posterId === target.viewer.user?.id;
  if (!writer && !poster) throw new ForbiddenError('user should be the poster or have write access to pull requests');
  return { writer, poster };
}

/** A new base branch: writers of pull requests only (403). */
export function assertMayChangePullBase(editor: PullEditor): void {
  if (!editor.writer) throw new ForbiddenError('user should have write access to pull requests to change the base');
}

/** `allow_maintainer_edit`: the poster only (403, in Forgejo's words). */
export function assertMaySetMaintainerEdit(editor: PullEditor): void {
  if (!editor.poster) throw new ForbiddenError('SetAllowEdits: user is not the poster of the pull request');
}

/** DELETE …/pulls/{index}/merge, after the scheduled merge's lookup: its scheduler or a repository admin (403). */
export async function assertMayCancelAutoMerge(target: RepositoryTarget, scheduled: { doerId: number }): Promise<void> {
  if (scheduled.doerId !== target.viewer.user?.id && !(await target.permission()).isAdmin)
    throw new ForbiddenError('user has no permission to cancel the scheduled auto merge');
}

/**
 * POST …/pulls/{index}/update, after the pull request's lookups (Forgejo's IsUserAllowedToUpdate): writers of the
 * head repository's code, or of the base's when the poster allows maintainers to edit (403); a rebase only where
 * the base repository allows rebasing updates (403); then the head repository takes writes (423).
 */
export async function assertMayUpdatePullHead(
  base: RepositoryTarget,
  head: RepositoryTarget,
  pull: { allowMaintainerEdit: boolean },
  rebase: boolean,
): Promise<void> {
  const mayPush = (await head.canWrite('repo.code')) || (pull.allowMaintainerEdit && (await base.canWrite('repo.code')));
  if (!mayPush || (rebase && !base.repo.allowRebaseUpdate)) throw new ForbiddenError('');
  assertAcceptsWrites(head.repo, head.owner);
}

/**
 * The contents API's file writes, after the body names the branch (Forgejo's branch-writer check): the code's
 * writers, or a maintainer whom an open pull request from this repository lets push that very branch
 * (maintainer-pushes.ts); a new branch (`new_branch`) only the code's writers (403).
 */
export async function assertMayWriteBranch(target: RepositoryTarget, branch: string, newBranch: string | undefined): Promise<void> {
  if (await target.canWrite('repo.code')) return;
  if (newBranch === undefined && (await target.mayPushAsMaintainer(branch))) return;
  throw new ForbiddenError('user should have a permission to write to this branch');
}

/**
 * delete_branch_after_merge: a head branch in another repository goes only when the merger may push there (its
 * writers, or anyone who merged it when the poster allows maintainers to edit); the base's own branch always.
 */
export async function mayDeleteMergedHead(base: RepositoryTarget, head: RepositoryTarget, pull: { allowMaintainerEdit: boolean }): Promise<boolean> {
  return head === base || pull.allowMaintainerEdit || (await head.canWrite('repo.code'));
}

/** DELETE …/reviews/{id}, after the review's lookup: its reviewer or a site administrator (403). */
export function assertMayDeleteReview(target: RepositoryTarget, review: { reviewerId: number }): void {
  if (!target.viewer.isAdmin && target.viewer.user?.id !== review.reviewerId) throw new ForbiddenError('only admin and user itself can delete a review');
}

/** DELETE …/reviews/{id}/comments/{comment}, after the comment's lookup: its poster or a writer of pull requests (403). */
export async function assertMayDeleteReviewComment(target: RepositoryTarget, comment: { posterId: number }): Promise<void> {
  if (target.viewer.user?.id !== comment.posterId && !(await target.canWrite('repo.pulls'))) throw new ForbiddenError('');
}

/**
 * Who may change a pull request's review requests: its poster, the repository's owner, and its collaborators and
 * team members (here: whoever may write pull requests, or read them in a private repository, where only those
 * granted access do).
 */
async function mayChangeReviewRequests(target: RepositoryTarget, issue: { posterId: number }): Promise<boolean> {
  const doer = target.viewer.user!;
  if (doer.id === issue.posterId || doer.id === target.repo.ownerId) return true;
  const permission = await target.permission();
  return permission.canWrite('repo.pulls') || (target.repo.isPrivate && permission.canRead('repo.pulls'));
}

/** A user asked (or no longer asked) for a review, with their permission on the repository and their latest review. */
export interface RequestedReviewer {
  user: { id: number; isOrganization: boolean };
  /** Read only when it decides (asking for a review). */
  permission: () => Promise<RepositoryPermission>;
  latest: { requested: boolean; reviewerId: number } | null;
}

/**
 * Forgejo's IsValidReviewRequest, after the body and the lookups: 422 with its reasons. Asking: the reviewer is a
 * user who reads pull requests and did not open this one, and the caller may change its requests. Withdrawing:
 * the caller may change its requests, or withdraws the request made of themselves.
 */
export async function assertValidReviewRequest(
  target: RepositoryTarget,
  issue: { posterId: number },
  reviewer: RequestedReviewer,
  add: boolean,
): Promise<void> {
  const doer = target.viewer.user!;
  const refuse = (reason: string) => new InvalidInputError(`${reason} [user_id: ${doer.id}, repo_id: ${target.repo.id}]`);
  if (reviewer.user.isOrganization) throw refuse("Organization can't be added as reviewer");
  const mayChange = await mayChangeReviewRequests(target, issue);
  if (add) {
    if (!(await reviewer.permission()).canRead('repo.pulls')) throw refuse("Reviewer can't read");
    if (reviewer.user.id === issue.posterId) throw refuse("poster of pr can't be reviewer");
    if (mayChange) return;
    throw refuse("Doer can't choose reviewer");
  }
  if (mayChange) return;
  if (reviewer.latest?.requested && reviewer.latest.reviewerId === doer.id) return;
  throw refuse("Doer can't remove reviewer");
}

/** A team asked (or no longer asked) for a review: whether it reaches the repository, read only when it decides. */
export interface RequestedTeam {
  reachesRepository: () => Promise<boolean>;
}

/**
 * Forgejo's IsValidTeamReviewRequest, after the body and the team's lookup: 422 with its reasons. Asking: a private
 * repository's team must reach it (a public one is read by every team of its organisation), and the caller may
 * change the pull request's requests. Withdrawing: the caller may change them.
 */
export async function assertValidTeamReviewRequest(target: RepositoryTarget, issue: { posterId: number }, team: RequestedTeam, add: boolean): Promise<void> {
  const doer = target.viewer.user!;
  const refuse = (reason: string) => new InvalidInputError(`${reason} [user_id: ${doer.id}, repo_id: ${target.repo.id}]`);
  const mayChange = await mayChangeReviewRequests(target, issue);
  if (add) {
    if (target.repo.isPrivate && !(await team.reachesRepository())) throw refuse("Reviewing team can't read repo");
    if (mayChange) return;
    throw refuse("Doer can't choose reviewer");
  }
  if (mayChange) return;
  throw refuse("Doer can't remove reviewer");
}
