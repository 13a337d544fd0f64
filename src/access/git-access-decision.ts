import type { ScopeSet } from '../auth/scopes';
import type { RepositoryPermission } from './repository-permission';

// Why: git over HTTP, LFS and SSH decide a clone or a push in one order, here; each transport only words the
// refusal in its own way (docs/git-transports.md).

export type GitOperation = 'pull' | 'push';

/** Who asks: a user or anonymous caller (over SSH always signed in, without a token), or an SSH deploy key. */
export type GitAccessCaller = { kind: 'user'; signedIn: boolean; restricted: boolean; scopes: ScopeSet | null; publicOnly: boolean } | { kind: 'deploy-key' };

/** Why a transport refuses, in the order the decision asks. */
export type GitRefusal =
  /** Not signed in (HTTP 401). */
  | 'sign-in'
  /** The token lacks `read:repository` (pull) or `write:repository` (push). */
  | 'scope'
  /** The caller may not read the code: the repository is as good as unknown. */
  | 'not-found'
  /** As `not-found`, for a deploy key on a public repository, which Forgejo tells it is not authorized. */
  | 'deploy-key-not-authorized'
  /** A public-only token on a private repository. */
  | 'public-only'
  | 'mirror'
  | 'not-writer'
  | 'archived';

/**
 * `asMaintainer`: a push admitted only because the caller may push some branch as a maintainer of an open pull
 * request from the repository (maintainer-pushes.ts); pre-receive then judges each ref by that rule.
 */
export type GitDecision = { allowed: true; asMaintainer?: true } | { allowed: false; refusal: GitRefusal };

export interface GitAccessQuestion {
  caller: GitAccessCaller;
  operation: GitOperation;
  /** The repository and its owner, null when unknown. */
  repo: { isPrivate: boolean; isMirror: boolean; isArchived: boolean } | null;
  /** A public repository of a public owner (anonymous GET /repos/{o}/{r} answers 200). */
  publicPull: boolean;
  /** Over SSH a restricted user's pull of a public repository is the policy's to decide, as Forgejo checks it. */
  transport: 'http' | 'ssh';
  /** The caller's permission on the repository (read once however often asked, and only when the order reaches it). */
  permission: () => Promise<RepositoryPermission | null>;
  /**
   * Only for a push whose refs pre-receive judges one by one (receive-pack; not an LFS upload, which writes the
   * whole repository's objects): whether the caller may push some branch as a maintainer of an open pull request
   * from this repository. Asked only of a user who does not write the code.
   */
  maintainerPush?: () => Promise<boolean>;
}

const ALLOWED: GitDecision = { allowed: true };
const refuse = (refusal: GitRefusal): GitDecision => ({ allowed: false, refusal });

/**
 * The one decision order of every git door: a public pull needs nothing more (scopes, public-only and the
 * caller's own rights are not consulted); else sign-in → scope → read (not found) → public-only token on a
 * private repository; and for a push, mirror → write on the code (or, for receive-pack, a maintainer's push of
 * a pull request's head branch, judged ref by ref in pre-receive) → archived.
 */
export async function decideGitAccess(question: GitAccessQuestion): Promise<GitDecision> {
  const { caller, operation, repo } = question;
  const publicPull = caller.kind === 'user' && question.publicPull && !(question.transport === 'ssh' && caller.restricted);
  if (publicPull && operation === 'pull') return ALLOWED;
  if (caller.kind === 'user') {
    if (!caller.signedIn) return refuse('sign-in');
    if (caller.scopes && !caller.scopes.allows('repository', operation === 'pull' ? 'read' : 'write')) return refuse('scope');
  }
  if (!repo) return refuse('not-found');
  // Over SSH, a user's push to a public repository is not asked the read question again (Forgejo's serv order).
  const readKnown = publicPull && question.transport === 'ssh';
  if (!readKnown && !(await question.permission())?.canRead('repo.code')) {
    return refuse(caller.kind === 'deploy-key' && question.publicPull ? 'deploy-key-not-authorized' : 'not-found');
  }
  if (caller.kind === 'user' && caller.publicOnly && repo.isPrivate) return refuse('public-only');
  if (operation === 'push') {
    if (repo.isMirror) return refuse('mirror');
    const writer = (await question.permission())?.canWrite('repo.code') ?? false;
    const asMaintainer = !writer && caller.kind === 'user' && question.maintainerPush !== undefined && (await question.maintainerPush());
    if (!writer && !asMaintainer) return refuse('not-writer');
    if (repo.isArchived) return refuse('archived');
    if (asMaintainer) return { allowed: true, asMaintainer: true };
  }
  return ALLOWED;
}
