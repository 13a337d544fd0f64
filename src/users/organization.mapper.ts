import { accessModeName } from '../access/access-mode';
import { teamGrant } from '../access/access.store';
import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import { OWNER_ACCESS_MODE, TeamEntity } from './organization.entities';
import type { OrganizationWire } from './organization.wire';
import type { TeamWire } from './team.wire';
import { UserEntity, VISIBILITY_NAMES } from './user.entity';
import type { Site } from '../common/site-urls';
import { avatarUrl } from './user.mapper';

/** Pure: the `Organization` JSON of `org` as `viewer` may see it (anonymous callers get no e-mail). */
export function toOrganizationWire(org: UserEntity, viewer: AuthContext, site: Site): OrganizationWire {
  return {
    id: org.id,
    name: org.name,
    full_name: org.fullName,
    email: viewer.isSignedIn ? org.email : '',
    avatar_url: avatarUrl(site),
    description: org.description,
    website: org.website,
    location: org.location,
    visibility: VISIBILITY_NAMES[org.visibility] ?? 'public',
    repo_admin_change_team_access: org.repoAdminChangeTeamAccess,
    created: formatTime(org.createdUnix),
    username: org.name,
  };
}

/** Pure: the `Team` JSON; admin and owner teams have every unit at their mode, others the units they name. */
export function toTeamWire(team: TeamEntity): TeamWire {
  const permission = accessModeName(team.authorize);
  const unitsMap: Record<string, string> = {};
  if (team.authorize >= OWNER_ACCESS_MODE) {
    // The Owners team's JSON keeps the shape the seed contract gives it: the code unit at `owner`.
    unitsMap['repo.code'] = permission;
  } else {
    for (const [unit, mode] of Object.entries(teamGrant(team.authorize, team.units).units)) if (mode > 0) unitsMap[unit] = accessModeName(mode);
  }
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization: null,
    includes_all_repositories: team.includesAllRepositories,
    permission,
    units: Object.keys(unitsMap),
    units_map: unitsMap,
    can_create_org_repo: team.canCreateOrgRepo,
  };
}
