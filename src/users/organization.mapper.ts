import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import type { OrganizationWire } from './organization.wire';
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
