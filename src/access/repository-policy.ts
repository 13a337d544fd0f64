import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, NotFoundError } from '../common/errors';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserEntity, Visibility } from '../users/user.entity';
import type { RepositoryUnit } from './access-mode';
import {
  AccessGrants,
  AccessSubject,
  assertAcceptsWrites,
  NO_GRANTS,
  readableWithoutGrants,
  resolveDeployKeyPermission,
  resolvePermission,
} from './access-policy';
import { AccessStore, ViewerStanding, writesSomeUnit } from './access.store';
import { AccessMode } from './access-mode';
import { MaintainerPushes } from './maintainer-pushes';
import { RepositoryPermission } from './repository-permission';

export function subjectOf(viewer: AuthContext): AccessSubject {
  return { userId: viewer.user?.id ?? null, isAdmin: viewer.isAdmin, restricted: viewer.user?.isRestricted ?? false };
}

/** A caller over SSH who logged in with a deploy key: the key's material, not a user. */
export class DeployKeyPrincipal {
  constructor(readonly fingerprint: string) {}
}

/**
 * A repository resolved for one request, with the caller's permission on it, read at most once. Routes receive
 * it from the repository assignment; services ask it, never the database, what the caller may do.
 */
export class RepositoryTarget {
  private resolved: Promise<RepositoryPermission> | null;

  constructor(
    readonly repo: RepositoryEntity,
    readonly owner: UserEntity,
    readonly viewer: AuthContext,
    private readonly resolve: () => Promise<RepositoryPermission>,
    known: RepositoryPermission | null,
    private readonly maintainerPush: (branch: string | null) => Promise<boolean> = async () => false,
  ) {
    this.resolved = known ? Promise.resolve(known) : null;
  }

  /**
   * Whether the caller may push `branch` (null: some branch) as a maintainer of an open pull request from this
   * repository (maintainer-pushes.ts); false for a target made without the policy. Asked by the rules only.
   */
  mayPushAsMaintainer(branch: string | null): Promise<boolean> {
    return this.viewer.isSignedIn ? this.maintainerPush(branch) : Promise.resolve(false);
  }

  permission(): Promise<RepositoryPermission> {
    this.resolved ??= this.resolve();
    return this.resolved;
  }

  /**
   * Sign-in (401), then write on `unit` (403 with `message`), then the repository's state (archived: 423) unless
   * the write is to metadata that Forgejo lets writers change on an archived repository (labels).
   */
  async assertCanWrite(
    unit: RepositoryUnit,
    message = 'user should have a permission to write to the repository',
    options: { evenWhenArchived?: boolean } = {},
  ): Promise<void> {
    requireSignedIn(this.viewer);
    if (!(await this.permission()).canWrite(unit)) throw new ForbiddenError(message);
    if (!options.evenWhenArchived) assertAcceptsWrites(this.repo, this.owner);
  }

  /** Sign-in (401), then admin of the repository (403 with `message`). */
  async assertAdmin(message: string): Promise<void> {
    requireSignedIn(this.viewer);
    if (!(await this.permission()).isAdmin) throw new ForbiddenError(message);
  }

  /** Sign-in (401), then the owner's mode on the repository (403 with `message`). */
  async assertOwner(message: string): Promise<void> {
    requireSignedIn(this.viewer);
    if (!(await this.permission()).isOwner) throw new ForbiddenError(message);
  }

  async canWrite(unit: RepositoryUnit): Promise<boolean> {
    return this.viewer.isSignedIn && (await this.permission()).canWrite(unit);
  }
}

/** Forgejo's refusal of a route whose unit the caller may not read. */
export const UNIT_NOT_READABLE = 'user should have specific read permission or be a repo admin or a site admin';

/**
 * The access policy as a service: the caller's permission on a repository (one indexed read of their grants,
 * none when who they are decides), and the read rule every repository door starts with.
 */
@Injectable()
export class RepositoryPolicy {
  constructor(
    private readonly store: AccessStore,
    private readonly maintainers: MaintainerPushes,
  ) {}

  /** `grants`: the caller's grants on the repository when the lookup read them along (else read here if needed). */
  async permission(viewer: AuthContext, repo: RepositoryEntity, owner: UserEntity, grants: AccessGrants | null = null): Promise<RepositoryPermission> {
    const subject = subjectOf(viewer);
    if (subject.userId === null || subject.isAdmin || subject.userId === repo.ownerId) return resolvePermission(subject, repo, owner, NO_GRANTS);
    return resolvePermission(subject, repo, owner, grants ?? (await this.store.grants(subject.userId, repo)));
  }

  /**
   * Whose grants a lookup of a repository should read along with it (access.store.ts grantsAlongsideRepository):
   * the caller's, unless who they are decides alone (anonymous callers, site admins).
   */
  grantsHolder(viewer: AuthContext): number | null {
    const subject = subjectOf(viewer);
    return subject.userId === null || subject.isAdmin ? null : subject.userId;
  }

  /**
   * Who may be assigned to the repository's issues: its owner (a user), collaborators with write or admin, and
   * members of the owning organisation's teams that reach it and write some unit (Owners among them).
   */
  async assignableUserIds(repo: RepositoryEntity, owner: UserEntity): Promise<number[]> {
    const ids = new Set(await this.store.usersGranted(repo, AccessMode.Write, writesSomeUnit));
    if (!owner.isOrganization) ids.add(owner.id);
    return [...ids];
  }

  /**
   * Who may be asked to review the repository's pull requests (`GET …/reviewers`): its owner (a user),
   * collaborators who read it, and members of the owning organisation's teams that reach it and read its pull
   * requests. Each request is still judged on its own when made (pull-rules.ts, assertValidReviewRequest).
   */
  async requestableReviewerIds(repo: RepositoryEntity, owner: UserEntity): Promise<number[]> {
    const ids = new Set(await this.store.usersGranted(repo, AccessMode.Read, (team) => (team.units['repo.pulls'] ?? AccessMode.None) >= AccessMode.Read));
    if (!owner.isOrganization) ids.add(owner.id);
    return [...ids];
  }

  /** Whether one user may be assigned to the repository's issues (the rule of assignableUserIds). */
  async mayBeAssigned(userId: number, repo: RepositoryEntity, owner: UserEntity): Promise<boolean> {
    if (userId === repo.ownerId) return !owner.isOrganization;
    const grants = await this.store.grants(userId, repo);
    return (grants.collaboration ?? AccessMode.None) >= AccessMode.Write || grants.teams.some(writesSomeUnit);
  }

  /**
   * A deploy key's permission on a repository: read from the database on every call (one indexed row), so that
   * deleting the key or the repository locks it out at the next connection on every instance.
   */
  async deployKeyPermission(principal: DeployKeyPrincipal, repo: RepositoryEntity): Promise<RepositoryPermission> {
    return resolveDeployKeyPermission(await this.store.deployKeyMode(principal.fingerprint, repo.id));
  }

  /**
   * The start of every repository door: unreadable (no unit readable, or not `unit`) → 404, as if it did not
   * exist; then a public-only token on a private repository or a non-public owner → 403. `grants`: the
   * caller's, when the lookup read them along (grantsHolder).
   */
  async open(
    viewer: AuthContext,
    repo: RepositoryEntity,
    owner: UserEntity,
    unit?: RepositoryUnit,
    grants: AccessGrants | null = null,
  ): Promise<RepositoryTarget> {
    const resolve = () => this.permission(viewer, repo, owner, grants);
    let known: RepositoryPermission | null = null;
    if (!readableWithoutGrants(subjectOf(viewer), repo, owner)) {
      known = await resolve();
      if (!known.hasAccess) throw new NotFoundError();
    }
    if (viewer.publicOnly && (repo.isPrivate || owner.visibility !== Visibility.Public)) throw new ForbiddenError('token scope is limited to public repos');
    // A caller who sees the repository but not the route's unit (a team without `repo.code`, say) learns nothing
    // new from a refusal: Forgejo answers 403 there, after the public-only check.
    if (known && unit !== undefined && !known.canRead(unit)) throw new ForbiddenError(UNIT_NOT_READABLE);
    const maintainerPush = (branch: string | null) => this.maintainers.mayPush(subjectOf(viewer), { repo, owner }, branch);
    return new RepositoryTarget(repo, owner, viewer, resolve, known, maintainerPush);
  }

  /** What lists need of the caller (null for anonymous callers). */
  standing(viewer: AuthContext): Promise<ViewerStanding | null> {
    return viewer.user ? this.store.standing(viewer.user.id) : Promise.resolve(null);
  }

  /** The caller's permission on each repository of a page, with at most one read of their grants. */
  async permissions(
    viewer: AuthContext,
    standing: ViewerStanding | null,
    repos: { repo: RepositoryEntity; owner: UserEntity }[],
  ): Promise<Map<number, RepositoryPermission>> {
    const subject = subjectOf(viewer);
    const result = new Map<number, RepositoryPermission>();
    const undecided: { repo: RepositoryEntity; owner: UserEntity }[] = [];
    const memberOrgs = new Set(standing?.memberOrgIds ?? []);
    // Teams grant only on their organisation's repositories (as AccessStore.grants reads them), and a team member
    // is a member of its organisation (the organisation store keeps org_user so, in the same transaction);
    // collaborations grant on any repository. Elsewhere there is nothing to read.
    const needsGrants = (repo: RepositoryEntity) =>
      subject.userId !== null &&
      !subject.isAdmin &&
      subject.userId !== repo.ownerId &&
      (memberOrgs.has(repo.ownerId) || (standing?.hasCollaborations ?? false));
    for (const entry of repos) {
      if (needsGrants(entry.repo)) undecided.push(entry);
      else result.set(entry.repo.id, resolvePermission(subject, entry.repo, entry.owner, NO_GRANTS));
    }
    if (undecided.length > 0) {
      const grants = await this.store.grantsOfMany(
        subject.userId!,
        undecided.map((entry) => entry.repo),
        memberOrgs,
      );
      for (const { repo, owner } of undecided) result.set(repo.id, resolvePermission(subject, repo, owner, grants.get(repo.id) ?? NO_GRANTS));
    }
    return result;
  }
}
