import type { AuthContext } from '../auth/auth-context';
import { formatTime } from '../common/time';
import { UserEntity, VISIBILITY_NAMES } from './user.entity';
import type { UserWire } from './user.wire';
import type { Site } from '../common/site-urls';

export interface UserViewOptions {
  /**
   * Inside `Repository.owner`, "signed in" becomes "can see the repository" (docs/visibility.md): pass true when
   * the viewer can see the repository that carries this owner.
   */
  seesRepository?: boolean;
}

/** The placeholder address shown instead of a hidden one. */
export function noReplyEmail(user: UserEntity, site: Pick<Site, 'rootHost'>): string {
  return `${user.lowerName}@noreply.${site.rootHost}`;
}

/**
 * The real address only for a signed-in viewer (or one who sees the repository), and then only when the
 * user does not keep it private, or the viewer is that user or a site admin. The real address may be ""
 * (an organisation without a contact address): Forgejo then shows "" too, not the placeholder.
 */
export function visibleEmail(user: UserEntity, viewer: AuthContext, site: Site, options: UserViewOptions = {}): string {
  const audience = options.seesRepository ?? viewer.isSignedIn;
  const shown = audience && (!user.keepEmailPrivate || viewer.isSelfOrAdmin(user.id));
  return shown ? user.email : noReplyEmail(user, site);
}

export function avatarUrl(site: Site): string {
  return `${site.rootUrl}assets/img/avatar_default.png`;
}

/** Pure: the `User` JSON of `user` as `viewer` may see it. */
export function toUserWire(user: UserEntity, viewer: AuthContext, site: Site, options: UserViewOptions = {}): UserWire {
  const privileged = viewer.isSelfOrAdmin(user.id);
  return {
    id: user.id,
    login: user.name,
    full_name: user.fullName,
    email: visibleEmail(user, viewer, site, options),
    avatar_url: avatarUrl(site),
    html_url: `${site.rootUrl}${encodeURIComponent(user.name)}`,
    is_admin: privileged && user.isAdmin,
    created: formatTime(user.createdUnix),
    // Forgejo shows everyone the real flag; only is_admin, active and prohibit_login are private.
    restricted: user.isRestricted,
    active: privileged && user.isActive,
    prohibit_login: privileged && user.prohibitLogin,
    location: user.location,
    website: user.website,
    description: user.description,
    visibility: VISIBILITY_NAMES[user.visibility] ?? 'public',
    followers_count: user.numFollowers,
    following_count: user.numFollowing,
    starred_repos_count: user.numStars,
    username: user.name,
  };
}
