import { Injectable } from '@nestjs/common';
import { RepositoryArchivedError } from '../common/errors';
import type { AuthContext } from '../auth/auth-context';
import { OrganizationStore } from '../users/organization.store';
import { UserEntity, Visibility } from '../users/user.entity';
import type { RepositoryEntity } from './repository.entity';

/**
 * What decides which repositories a caller sees (behaviour 1.10), gathered once per request: who they are,
 * and the organisations they own or belong to.
 */
export interface ViewerAccess {
  userId: number | null;
  /** Site admin powers; false for public-only tokens. */
  isAdmin: boolean;
  restricted: boolean;
  publicOnly: boolean;
  /** Organisations where the caller is in the Owners team: they see and administer all their repositories. */
  ownedOrgIds: ReadonlySet<number>;
  /** Organisations the caller belongs to: they see their public repositories even when the org is private. */
  memberOrgIds: ReadonlySet<number>;
}

export interface RepositoryPermission {
  admin: boolean;
  push: boolean;
  pull: boolean;
}

/**
 * Which repositories a viewer may list, as the stores turn it into SQL: everything (site admin), public
 * repositories of public owners (anonymous), or the signed-in rule of `isReadable`.
 */
export type VisibilityScope =
  | { kind: 'everything' }
  | { kind: 'public' }
  | { kind: 'signed-in'; ownIds: number[]; memberOrgIds: number[]; seesOtherOwners: boolean };

@Injectable()
export class RepositoryAccess {
  constructor(private readonly organizations: OrganizationStore) {}

  async of(viewer: AuthContext): Promise<ViewerAccess> {
    const user = viewer.user;
    if (!user) {
      return { userId: null, isAdmin: false, restricted: false, publicOnly: false, ownedOrgIds: new Set(), memberOrgIds: new Set() };
    }
    const { owned, member } = await this.organizations.orgIdsOf(user.id);
    return {
      userId: user.id,
      isAdmin: viewer.isAdmin,
      restricted: user.isRestricted,
      publicOnly: viewer.publicOnly,
      ownedOrgIds: new Set(owned),
      memberOrgIds: new Set(member),
    };
  }
}

/** Owner, owner of the owning organisation, or site admin. */
export function administers(access: ViewerAccess, repo: RepositoryEntity): boolean {
  return access.isAdmin || access.userId === repo.ownerId || access.ownedOrgIds.has(repo.ownerId);
}

/**
 * Read access with the caller's own rights (a public-only token is refused later, with 403, by the caller):
 * private repositories only for administrators of the repository; public ones for whoever sees the owner —
 * but a restricted user sees only repositories of organisations they belong to.
 */
export function isReadable(access: ViewerAccess, repo: RepositoryEntity, owner: UserEntity): boolean {
  if (administers(access, repo)) return true;
  if (repo.isPrivate) return false;
  if (access.memberOrgIds.has(repo.ownerId)) return true;
  if (access.userId === null) return owner.visibility === Visibility.Public;
  if (access.restricted) return false;
  return owner.visibility !== Visibility.Private;
}

/**
 * True when `isReadable` is true whatever the caller's organisations: a public repository whose owner every
 * caller of this kind sees (anonymous: a public owner; unrestricted signed-in: any owner but a private one).
 * False means "ask isReadable", not "unreadable".
 */
export function readableByVisibilityAlone(viewer: AuthContext, repo: RepositoryEntity, owner: UserEntity): boolean {
  if (repo.isPrivate) return false;
  if (!viewer.user) return owner.visibility === Visibility.Public;
  return !viewer.user.isRestricted && owner.visibility !== Visibility.Private;
}

/** Behaviour 1.10: administrators get everything, any other viewer who can see the repository pulls. */
export function permissionOf(access: ViewerAccess, repo: RepositoryEntity): RepositoryPermission {
  const admin = administers(access, repo);
  return { admin, push: admin, pull: true };
}

/** The list form of `isReadable`; a public-only token narrows it to public repositories of public owners. */
export function visibilityScope(access: ViewerAccess): VisibilityScope {
  if (access.publicOnly) return { kind: 'public' };
  if (access.isAdmin) return { kind: 'everything' };
  if (access.userId === null) return { kind: 'public' };
  return {
    kind: 'signed-in',
    ownIds: [access.userId, ...access.ownedOrgIds],
    memberOrgIds: [...access.memberOrgIds],
    seesOtherOwners: !access.restricted,
  };
}

/**
 * Which of one owner's repositories a scope lets the viewer see, decided from the owner alone: the same
 * answer as the scope's SQL (repository.store.ts `applyScope`) restricted to that owner, so that a list of one
 * owner's repositories needs no join with the owners.
 */
export function ownerRepositoryFilter(scope: VisibilityScope, owner: { id: number; visibility: Visibility }): 'all' | 'public' | 'none' {
  switch (scope.kind) {
    case 'everything':
      return 'all';
    case 'public':
      return owner.visibility === Visibility.Public ? 'public' : 'none';
    case 'signed-in':
      if (scope.ownIds.includes(owner.id)) return 'all';
      if (scope.memberOrgIds.includes(owner.id)) return 'public';
      return scope.seesOtherOwners && (owner.visibility === Visibility.Public || owner.visibility === Visibility.Limited) ? 'public' : 'none';
  }
}

/**
 * An archived repository is read-only at every door (REST writes, git push over HTTP and SSH, mirror sync),
 * whoever asks; each door checks this after its permission check. The REST answer is 423, as Forgejo's.
 */
export function assertNotArchived(repo: RepositoryEntity, owner: { name: string }): void {
  if (repo.isArchived) throw new RepositoryArchivedError(`${owner.name}/${repo.name}`);
}

/** What git over HTTP answers (403) to a push into an archived repository, in Forgejo's words. */
export const ARCHIVED_PUSH_HTTP = 'This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.';

/** What the SSH server answers to a push into an archived repository, in Forgejo's words. */
export function archivedPushSsh(ownerName: string, repoName: string): string {
  return `Repo: ${ownerName}/${repoName} is archived.`;
}
