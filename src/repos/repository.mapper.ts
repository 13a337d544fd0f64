import type { AuthContext } from '../auth/auth-context';
import { sshCloneUrl } from '../common/ssh-endpoint';
import { formatTime } from '../common/time';
import { toUserWire, type SiteUrls } from '../users/user.mapper';
import { UserEntity, Visibility } from '../users/user.entity';
import type { UserWire } from '../users/user.wire';
import type { PermissionWire } from '../access/repository-permission';
import type { RepositoryEntity } from './repository.entity';
import type { RepositoryWire, WatchInfoWire } from './repository.wire';

/** The URLs of a repository, all built from ROOT_URL (behaviour 2.4). */
export function repositoryUrls(owner: UserEntity, repo: RepositoryEntity, site: SiteUrls) {
  const path = `${owner.name}/${repo.name}`;
  return {
    html: `${site.rootUrl}${path}`,
    api: `${site.rootUrl}api/v1/repos/${path}`,
    ssh: sshCloneUrl(site.ssh, path),
    clone: `${site.rootUrl}${path}.git`,
  };
}

/**
 * Pure: the `Repository` JSON of `repo` for `viewer`. Only repositories the viewer can see are rendered, so
 * for the owner's e-mail "can see the repository" holds for every signed-in viewer — and anonymous callers
 * always get the placeholder (behaviour 1.11).
 * `ownerWire`: the owner's JSON from `toRepositoryOwnerWire` when a list has built it once for all of that
 * owner's repositories.
 */
export function toRepositoryWire(
  repo: RepositoryEntity,
  owner: UserEntity,
  viewer: AuthContext,
  permission: PermissionWire,
  site: SiteUrls,
  ownerWire: UserWire = toRepositoryOwnerWire(owner, viewer, site),
): RepositoryWire {
  const urls = repositoryUrls(owner, repo, site);
  return {
    id: repo.id,
    owner: ownerWire,
    name: repo.name,
    full_name: `${owner.name}/${repo.name}`,
    description: repo.description,
    empty: repo.isEmpty,
    private: repo.isPrivate,
    fork: false,
    template: repo.isTemplate,
    parent: null,
    mirror: repo.isMirror,
    size: Math.floor(repo.gitSize / 1024),
    html_url: urls.html,
    url: urls.api,
    ssh_url: urls.ssh,
    clone_url: urls.clone,
    original_url: repo.originalUrl,
    website: repo.website,
    stars_count: repo.numStars,
    forks_count: 0,
    watchers_count: repo.numWatches,
    open_issues_count: 0,
    default_branch: repo.defaultBranch,
    archived: false,
    created_at: formatTime(repo.createdUnix),
    updated_at: formatTime(repo.updatedUnix),
    permissions: { admin: permission.admin, push: permission.push, pull: permission.pull },
    internal: !repo.isPrivate && owner.visibility === Visibility.Private,
    mirror_interval: repo.isMirror ? repo.mirrorInterval : '',
    mirror_updated: formatTime(repo.isMirror ? repo.mirrorUpdatedUnix : 0),
    object_format_name: repo.objectFormatName,
    topics: [],
  };
}

/** `Repository.owner`: the same for every repository of one owner, for one viewer. */
export function toRepositoryOwnerWire(owner: UserEntity, viewer: AuthContext, site: SiteUrls): UserWire {
  return toUserWire(owner, viewer, site, { seesRepository: viewer.isSignedIn });
}

/** Forgejo sends the repository's creation time as `created_at` of a watch (behaviour 2.8). */
export function toWatchInfoWire(repo: RepositoryEntity, owner: UserEntity, site: SiteUrls): WatchInfoWire {
  const urls = repositoryUrls(owner, repo, site);
  return {
    subscribed: true,
    ignored: false,
    reason: null,
    created_at: formatTime(repo.createdUnix),
    url: `${urls.api}/subscription`,
    repository_url: urls.api,
  };
}
