import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import { TeamEntity } from './organization.entities';
import type { OrganizationWire } from './organization.wire';
import type { TeamWire } from './team.wire';
import { UserEntity, VISIBILITY_NAMES } from './user.entity';
import { avatarUrl, SiteUrls } from './user.mapper';

/** Pure: the `Organization` JSON of `org` as `viewer` may see it (anonymous callers get no e-mail). */
export function toOrganizationWire(org: UserEntity, viewer: AuthContext, site: SiteUrls): OrganizationWire {
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

/** Forgejo's access modes, by the number stored in `team.authorize`. */
const ACCESS_MODES: Record<number, string> = { 0: 'none', 1: 'read', 2: 'write', 3: 'admin', 4: 'owner' };

/** Pure: the `Team` JSON. Anvil's only team, Owners, covers the one unit Anvil has (behaviour 2.3). */
export function toTeamWire(team: TeamEntity): TeamWire {
  const permission = ACCESS_MODES[team.authorize] ?? 'none';
  return {
    id: team.id,
    name: team.name,
    description: team.description,
    organization: null,
    includes_all_repositories: team.includesAllRepositories,
    permission,
    units: ['repo.code'],
    units_map: { 'repo.code': permission },
    can_create_org_repo: team.canCreateOrgRepo,
  };
}
