import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { RepositoryPaths } from '../git/repository-paths';
import { UserEntity, Visibility } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { decideGitAccess, GitAccessCaller, GitDecision, GitOperation } from '../access/git-access-decision';
import { MaintainerPushes } from '../access/maintainer-pushes';
import { DeployKeyPrincipal, RepositoryPolicy, subjectOf } from '../access/repository-policy';
import type { RepositoryPermission } from '../access/repository-permission';
import type { RepositoryEntity } from './repository.entity';
import { RepositoryStore } from './repository.store';

/** A repository as a git transport found it; `repo` is null when the owner or the name is unknown. */
export interface GitTarget {
  owner: UserEntity | null;
  repo: RepositoryEntity | null;
  /** The caller's permission, once asked (a transport asks for one caller per target). */
  permission?: { viewer: GitCaller; value: Promise<RepositoryPermission> };
}

/** Who asks a git transport: a user (or anonymous), or a deploy key over SSH. */
export type GitCaller = AuthContext | DeployKeyPrincipal;

/** A repository a transport serves, and who asked. */
export interface ServedTarget {
  owner: UserEntity;
  repo: RepositoryEntity;
  /** The caller (0 for anonymous pulls). */
  pusherId: number;
  /** A push admitted as a maintainer's of a pull request's head branch (GitDecision): pre-receive judges each ref. */
  asMaintainer?: boolean;
}

/**
 * Account state of an authenticated git caller (docs/git-transports.md), or null when usable.
 */
export function accountStateProblem(user: UserEntity, rootUrl: string): string | null {
  if (!user.isActive || user.prohibitLogin) return 'Your account is disabled.';
  if (user.mustChangePassword) return `You must change your password. Change it at: ${rootUrl}user/settings/change_password`;
  return null;
}

/**
 * The repository lookup and access decision of the git transports (git over HTTP, LFS, SSH). The decision is
 * the access policy's (git-access-decision.ts, access-policy.ts), as the API's is, so that git access and API
 * visibility always agree; each transport words its refusals in its own way.
 */
@Injectable()
export class RepositoryGitAccess {
  constructor(
    private readonly users: UserAccounts,
    private readonly repositories: RepositoryStore,
    private readonly policy: RepositoryPolicy,
    private readonly paths: RepositoryPaths,
    private readonly maintainers: MaintainerPushes,
  ) {}

  /** Case-insensitive; `.wiki` names are reserved, so they never name a repository here. */
  async find(ownerName: string, repoName: string): Promise<GitTarget> {
    const owner = await this.users.byName(ownerName);
    if (!owner || repoName.toLowerCase().endsWith('.wiki')) return { owner, repo: null };
    return { owner, repo: await this.repositories.findByOwnerAndName(owner.id, repoName) };
  }

  /** public-pull(R): public repository of a public owner (anonymous GET /repos/{o}/{r} answers 200). */
  isPublicPull(target: GitTarget): boolean {
    return target.repo !== null && target.owner !== null && !target.repo.isPrivate && target.owner.visibility === Visibility.Public;
  }

  /** Clone and fetch: the access policy's read of the code unit. */
  async canRead(viewer: GitCaller, target: GitTarget): Promise<boolean> {
    return (await this.permission(viewer, target))?.canRead('repo.code') ?? false;
  }

  /**
   * The decision of every git door (git-access-decision.ts) for this caller, target and operation. `refsJudged`:
   * a receive-pack, whose refs pre-receive judges one by one, so that a maintainer of a pull request's head
   * branch may be let in (never an LFS upload).
   */
  decide(viewer: GitCaller, target: GitTarget, operation: GitOperation, transport: 'http' | 'ssh', refsJudged = false): Promise<GitDecision> {
    const caller: GitAccessCaller =
      viewer instanceof DeployKeyPrincipal
        ? { kind: 'deploy-key' }
        : { kind: 'user', signedIn: viewer.isSignedIn, restricted: viewer.user?.isRestricted ?? false, scopes: viewer.scopes, publicOnly: viewer.publicOnly };
    return decideGitAccess({
      caller,
      operation,
      repo: target.owner ? target.repo : null,
      publicPull: this.isPublicPull(target),
      transport,
      permission: () => this.permission(viewer, target),
      maintainerPush:
        refsJudged && !(viewer instanceof DeployKeyPrincipal) && target.repo && target.owner
          ? () => this.maintainers.mayPush(subjectOf(viewer), { repo: target.repo!, owner: target.owner! }, null)
          : undefined,
    });
  }

  private async permission(viewer: GitCaller, target: GitTarget): Promise<RepositoryPermission | null> {
    if (!target.repo || !target.owner) return null;
    if (target.permission?.viewer !== viewer) {
      const value =
        viewer instanceof DeployKeyPrincipal ? this.policy.deployKeyPermission(viewer, target.repo) : this.policy.permission(viewer, target.repo, target.owner);
      target.permission = { viewer, value };
    }
    return target.permission.value;
  }

  directory(target: { owner: UserEntity; repo: RepositoryEntity }): string {
    return this.paths.repository(target.owner.name, target.repo.name);
  }
}
