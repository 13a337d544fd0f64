import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, NotFoundError } from '../common/errors';
import { AccessMode } from './access-mode';
import { AccessStore, OrganizationStanding } from './access.store';

export const MUST_BE_MEMBER = 'Must be an organization member';
export const MUST_BE_OWNER = 'Must be an organization owner';
export const MUST_BE_TEAM_MEMBER = 'Must be a team member';

const NO_STANDING: OrganizationStanding = { isMember: false, teams: [] };

/** An owner is a member of a team with the owner mode (the Owners team). */
export function ownsOrganization(standing: OrganizationStanding): boolean {
  return standing.teams.some((team) => team.mode >= AccessMode.Owner);
}

/** Owners, and members of a team that may create repositories, create repositories in the organisation. */
export function createsRepositories(standing: OrganizationStanding): boolean {
  return standing.teams.some((team) => team.canCreateOrgRepo || team.mode >= AccessMode.Owner);
}

/**
 * Whether the creator of a new repository of the organisation administers it through their teams already (an
 * admin or owner team that includes every repository); if not, they are made its admin collaborator.
 */
export function administersNewRepositories(standing: OrganizationStanding): boolean {
  return standing.teams.some((team) => team.includesAllRepositories && team.mode >= AccessMode.Admin);
}

/**
 * The caller's mode on the organisation's packages: the highest mode of their teams, raised below write by
 * any team's `repo.packages` unit. Members with no such team, and non-members, read what they may see.
 */
export function packageMode(standing: OrganizationStanding): AccessMode {
  let mode = standing.teams.reduce((best, team) => Math.max(best, team.mode), AccessMode.None) as AccessMode;
  if (mode < AccessMode.Write) for (const team of standing.teams) mode = Math.max(mode, team.units['repo.packages'] ?? AccessMode.None);
  return mode;
}

/** What the caller may do with one team of an organisation. */
export interface TeamStanding {
  /** Organisation owner or site admin: edits, deletes and fills the team. */
  manages: boolean;
  /** Member of the team's organisation (or site admin): sees its members. */
  orgMember: boolean;
}

/**
 * The organisation half of the access policy: who belongs to an organisation, who owns it, who may see and
 * manage its teams (owners and site admins manage; members see), who creates its repositories and publishes
 * its packages. Every organisation and team route asks here.
 */
@Injectable()
export class OrganizationPolicy {
  constructor(private readonly store: AccessStore) {}

  standing(viewer: AuthContext, orgId: number): Promise<OrganizationStanding> {
    return viewer.user ? this.store.organizationStanding(viewer.user.id, orgId) : Promise.resolve(NO_STANDING);
  }

  async isMember(viewer: AuthContext, orgId: number): Promise<boolean> {
    return viewer.isAdmin || (await this.standing(viewer, orgId)).isMember;
  }

  async isOwner(viewer: AuthContext, orgId: number): Promise<boolean> {
    return viewer.isAdmin || ownsOrganization(await this.standing(viewer, orgId));
  }

  /** Sign-in (401), then membership (403) unless a site admin. */
  async assertMember(viewer: AuthContext, orgId: number): Promise<void> {
    requireSignedIn(viewer);
    if (!(await this.isMember(viewer, orgId))) throw new ForbiddenError(MUST_BE_MEMBER);
  }

  /** Sign-in (401), then ownership (403) unless a site admin: who manages the organisation and its teams. */
  async assertOwner(viewer: AuthContext, orgId: number): Promise<void> {
    requireSignedIn(viewer);
    if (!(await this.isOwner(viewer, orgId))) throw new ForbiddenError(MUST_BE_OWNER);
  }

  /**
   * Creating a team: sign-in (401), then membership (403 `Must be an organization member`), then ownership
   * (403 `Must be an organization owner`), site admins passing both; one read of the caller's standing.
   */
  async assertManagesTeams(viewer: AuthContext, orgId: number): Promise<void> {
    requireSignedIn(viewer);
    if (viewer.isAdmin) return;
    const standing = await this.standing(viewer, orgId);
    if (!standing.isMember) throw new ForbiddenError(MUST_BE_MEMBER);
    if (!ownsOrganization(standing)) throw new ForbiddenError(MUST_BE_OWNER);
  }

  /**
   * The first step of a /teams/{id} route after the lookup: sign-in (401); site admins, owners and the
   * team's members pass; other members of the organisation get 403, everyone else 404 (the team does not
   * exist for them).
   */
  async openTeam(viewer: AuthContext, team: { id: number; orgId: number }): Promise<TeamStanding> {
    requireSignedIn(viewer);
    if (viewer.isAdmin) return { manages: true, orgMember: true };
    const standing = await this.standing(viewer, team.orgId);
    const manages = ownsOrganization(standing);
    if (!manages && !standing.teams.some((mine) => mine.id === team.id)) {
      if (standing.isMember) throw new ForbiddenError(MUST_BE_TEAM_MEMBER);
      throw new NotFoundError();
    }
    return { manages, orgMember: standing.isMember };
  }

  /** Changing a team (its fields, members, existence) is for owners and site admins; others get 404. */
  assertManages(standing: TeamStanding): void {
    if (!standing.manages) throw new NotFoundError();
  }

  async createsRepositories(viewer: AuthContext, orgId: number): Promise<boolean> {
    return viewer.isAdmin || createsRepositories(await this.standing(viewer, orgId));
  }

  /** Whether a new repository needs its creator added as admin collaborator (see administersNewRepositories). */
  async creatorNeedsCollaboration(viewer: AuthContext, orgId: number): Promise<boolean> {
    if (viewer.isAdmin) return false;
    return !administersNewRepositories(await this.standing(viewer, orgId));
  }

  /** Publishing a package of the organisation: site admins, and members whose teams give write (see packageMode). */
  async mayWritePackages(viewer: AuthContext, orgId: number): Promise<boolean> {
    if (!viewer.user) return false;
    return viewer.isAdmin || packageMode(await this.standing(viewer, orgId)) >= AccessMode.Write;
  }
}
