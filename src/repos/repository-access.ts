import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import type { ViewerStanding } from '../access/access.store';
import { RepositoryPolicy } from '../access/repository-policy';
import type { PermissionWire } from '../access/repository-permission';
import { UserEntity, Visibility } from '../users/user.entity';
import type { RepositoryEntity } from './repository.entity';

/** What lists need of a caller, read once per list request: who they are and their standing (access.store.ts). */
export interface ViewerAccess {
  viewer: AuthContext;
  standing: ViewerStanding | null;
}

/**
 * Which repositories a viewer may list, as the stores turn it into SQL: the list form of the access policy
 * (the access policy gives "has access" exactly for these rows). Everything (site admin),
 * public repositories of public owners (anonymous, public-only tokens), or for a signed-in caller: every
 * repository of themselves and of organisations where a team of theirs includes all repositories, public ones
 * of organisations they belong to and (unrestricted) of every owner they see, and those a collaboration or a
 * team links them to.
 */
export type VisibilityScope =
  | { kind: 'everything' }
  | { kind: 'public' }
  | { kind: 'signed-in'; uid: number; ownIds: number[]; memberOrgIds: number[]; seesOtherOwners: boolean; viaGrants: boolean };

/** The list form of the access policy, for the repository lists. */
@Injectable()
export class RepositoryAccess {
  constructor(private readonly policy: RepositoryPolicy) {}

  async of(viewer: AuthContext): Promise<ViewerAccess> {
    return { viewer, standing: viewer.user && !viewer.isAdmin ? await this.policy.standing(viewer) : null };
  }

  /** The `permissions` object of each repository of a page (at most one read of the caller's grants). */
  async permissions(access: ViewerAccess, repos: { repo: RepositoryEntity; owner: UserEntity }[]): Promise<Map<number, PermissionWire>> {
    const permissions = await this.policy.permissions(access.viewer, access.standing, repos);
    return new Map([...permissions].map(([id, permission]) => [id, permission.toWire()]));
  }
}

export function visibilityScope(access: ViewerAccess): VisibilityScope {
  const viewer = access.viewer;
  if (viewer.publicOnly) return { kind: 'public' };
  if (viewer.isAdmin) return { kind: 'everything' };
  if (!viewer.user || !access.standing) return { kind: 'public' };
  const restricted = viewer.user.isRestricted;
  return {
    kind: 'signed-in',
    uid: viewer.user.id,
    ownIds: [viewer.user.id, ...access.standing.allRepositoryOrgIds],
    memberOrgIds: restricted ? [] : access.standing.memberOrgIds,
    seesOtherOwners: !restricted,
    viaGrants: access.standing.hasRepositoryGrants,
  };
}

/**
 * Which of one owner's repositories a scope lets the viewer see, decided from the owner alone: the same
 * answer as the scope's SQL (repository.store.ts `applyScope`) restricted to that owner, so that a list of one
 * owner's repositories needs no join with the owners. 'scoped' when grants of single repositories may add
 * some: the list then applies the whole scope.
 */
export function ownerRepositoryFilter(scope: VisibilityScope, owner: { id: number; visibility: Visibility }): 'all' | 'public' | 'none' | 'scoped' {
  switch (scope.kind) {
    case 'everything':
      return 'all';
    case 'public':
      return owner.visibility === Visibility.Public ? 'public' : 'none';
    case 'signed-in':
      if (scope.ownIds.includes(owner.id)) return 'all';
      if (scope.viaGrants) return 'scoped';
      if (scope.memberOrgIds.includes(owner.id)) return 'public';
      return scope.seesOtherOwners && (owner.visibility === Visibility.Public || owner.visibility === Visibility.Limited) ? 'public' : 'none';
  }
}
