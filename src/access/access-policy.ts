import { RepositoryArchivedError } from '../common/errors';
import { Visibility } from '../users/user.entity';
import { AccessMode, REPOSITORY_UNITS, UnitModes } from './access-mode';
import { RepositoryPermission } from './repository-permission';

/**
 * The one definition of "what may this caller do to this repository, in which unit". Pure functions of the
 * caller, the repository, its owner and the caller's grants on it (memberships, teams, collaboration), which the
 * access store reads in one statement. Every door (REST routes through the repository assignment, git over HTTP,
 * the SSH server, the `permissions` object, list visibility) asks here and nowhere else.
 */

/** The caller as the policy sees them. */
export interface AccessSubject {
  userId: number | null;
  /** Site admin powers (false with a public-only token). */
  isAdmin: boolean;
  restricted: boolean;
}

export interface PolicyRepository {
  id: number;
  ownerId: number;
  isPrivate: boolean;
}

export interface PolicyOwner {
  id: number;
  isOrganization: boolean;
  visibility: Visibility;
}

/** A team of the caller that reaches the repository (includes all repositories, or linked to it). */
export interface TeamGrant {
  /** The team's `authorize`: admin and owner teams get the whole repository. */
  mode: AccessMode;
  /** The team's mode per unit (shared between requests: access.store.ts keeps them parsed). */
  units: Readonly<UnitModes>;
}

/** What the caller has on one repository besides who they are. */
export interface AccessGrants {
  /** Member of the owning organisation (through any team). */
  orgMember: boolean;
  teams: TeamGrant[];
  /** The caller's collaboration mode, or null. */
  collaboration: AccessMode | null;
}

export const NO_GRANTS: AccessGrants = { orgMember: false, teams: [], collaboration: null };

/**
 * Repository states that refuse every write whoever asks, after the caller's permission was checked: an
 * archived repository is read-only at every door (REST writes with 423 as Forgejo, git pushes over HTTP and
 * SSH with Forgejo's words, mirror sync); the administrator's settings stay, so that it can be unarchived.
 * A new such state belongs here, and every door then refuses it alike.
 */
export function assertAcceptsWrites(repo: { name: string; isArchived: boolean }, owner: { name: string }): void {
  if (repo.isArchived) throw new RepositoryArchivedError(`${owner.name}/${repo.name}`);
}

/** What git over HTTP answers (403) to a push into an archived repository, in Forgejo's words. */
export const ARCHIVED_PUSH_HTTP = 'This repo is archived. You can view files and clone it, but cannot push or open issues/pull-requests.';

/** What the SSH server answers to a push into an archived repository, in Forgejo's words. */
export function archivedPushSsh(ownerName: string, repoName: string): string {
  return `Repo: ${ownerName}/${repoName} is archived.`;
}

/** Whether the caller sees the owner at all, before grants: a collaborator sees the repository regardless. */
function seesOwner(subject: AccessSubject, owner: PolicyOwner, grants: AccessGrants): boolean {
  if (subject.userId === owner.id || subject.isAdmin) return true;
  switch (owner.visibility) {
    case Visibility.Public:
      return subject.userId !== null && subject.restricted ? grants.orgMember || !owner.isOrganization : true;
    case Visibility.Limited:
      return subject.userId !== null && (!subject.restricted || grants.orgMember);
    default:
      return grants.orgMember;
  }
}

/**
 * The rule, as Forgejo's: anonymous callers read public repositories of public owners; the owner and site
 * admins own everything; otherwise a collaboration gives its mode on every unit, teams of the owning
 * organisation give theirs (an admin or owner team makes them an owner; others per unit, the highest of the
 * caller's teams), and a public repository is readable by every unrestricted caller who sees its owner, on
 * every unit no team of theirs names. Restricted users reach only what teams and collaborations give.
 */
export function resolvePermission(subject: AccessSubject, repo: PolicyRepository, owner: PolicyOwner, grants: AccessGrants): RepositoryPermission {
  if (subject.userId === null) {
    const readable = !repo.isPrivate && owner.visibility === Visibility.Public;
    return readable ? RepositoryPermission.uniform(AccessMode.Read) : RepositoryPermission.NONE;
  }
  if (subject.isAdmin || subject.userId === repo.ownerId) return RepositoryPermission.uniform(AccessMode.Owner);
  const collaborator = grants.collaboration !== null;
  if (!seesOwner(subject, owner, grants) && !collaborator) return RepositoryPermission.NONE;
  const publicDefault = !repo.isPrivate && !subject.restricted;
  let mode = publicDefault ? AccessMode.Read : AccessMode.None;
  if (grants.collaboration !== null) mode = Math.max(mode, grants.collaboration);
  for (const team of grants.teams) mode = Math.max(mode, Math.min(team.mode, AccessMode.Write));
  // Any admin or owner team of the caller makes them an owner of the repository, as Forgejo does.
  if (grants.teams.some((team) => team.mode >= AccessMode.Admin)) return RepositoryPermission.uniform(AccessMode.Owner);
  // Without teams every unit has `mode`: the collaboration's (with the public default), or the public default.
  if (!owner.isOrganization || grants.teams.length === 0) return RepositoryPermission.uniform(mode);
  // Per unit, the highest of the caller's teams naming it, and never less than the collaboration (on every unit)
  // or, without one, the public default (read, on a public repository).
  const floor = collaborator ? mode : publicDefault ? AccessMode.Read : AccessMode.None;
  const units = REPOSITORY_UNITS.map((unit) => {
    let unitMode = floor;
    for (const team of grants.teams) unitMode = Math.max(unitMode, team.units[unit] ?? AccessMode.None);
    return unitMode as AccessMode;
  });
  return RepositoryPermission.perUnit(mode, units);
}

/**
 * A deploy key is no user: it reaches only the repositories it was added to, each with its own mode (read for
 * a read-only key, else write) on every unit, never more than write; on every other repository, public ones
 * included, it has nothing. `mode` is the key's mode on this repository, or null when it was not added here.
 */
export function resolveDeployKeyPermission(mode: AccessMode | null): RepositoryPermission {
  if (mode === null || mode < AccessMode.Read) return RepositoryPermission.NONE;
  return RepositoryPermission.uniform(Math.min(mode, AccessMode.Write) as AccessMode);
}

/**
 * True when the repository is readable on every unit by this caller whatever their grants: a public repository
 * whose owner every caller of this kind sees. The hot path (reads of public repositories) then needs no read of
 * the caller's grants; false means "ask resolvePermission", not "unreadable".
 */
export function readableWithoutGrants(subject: AccessSubject, repo: PolicyRepository, owner: PolicyOwner): boolean {
  if (repo.isPrivate) return false;
  if (subject.userId === null) return owner.visibility === Visibility.Public;
  if (subject.isAdmin || subject.userId === repo.ownerId) return true;
  return !subject.restricted && owner.visibility !== Visibility.Private;
}
