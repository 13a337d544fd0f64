import type { AuthContext } from '../auth/auth-context';
import { sshCloneUrl } from '../common/ssh-endpoint';
import { formatTime } from '../common/time';
import type { Site } from '../common/site-urls';
import { toUserWire } from '../users/user.mapper';
import { UserEntity, Visibility } from '../users/user.entity';
import type { UserWire } from '../users/user.wire';
import type { PermissionWire } from '../access/repository-permission';
import type { RepositoryEntity } from './repository.entity';
import type { RepositoryWire, WatchInfoWire } from './repository.wire';
import { splitTopics } from './topic-names';

/** The URLs of a repository, all built from ROOT_URL. */
export function repositoryUrls(owner: UserEntity, repo: RepositoryEntity, site: Site) {
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
 * always get the placeholder (docs/visibility.md).
 * `ownerWire`: the owner's JSON from `toRepositoryOwnerWire` when a list has built it once for all of that
 * owner's repositories. `parent`: the source's JSON (one level, its own `parent` null) when the viewer may see it.
 */
export function toRepositoryWire(
  repo: RepositoryEntity,
  owner: UserEntity,
  viewer: AuthContext,
  permission: PermissionWire,
  site: Site,
  ownerWire: UserWire = toRepositoryOwnerWire(owner, viewer, site),
  parent: RepositoryWire | null = null,
): RepositoryWire {
  const urls = repositoryUrls(owner, repo, site);
  const pulls = repo.hasPullRequests !== false;
  return {
    id: repo.id,
    owner: ownerWire,
    name: repo.name,
    full_name: `${owner.name}/${repo.name}`,
    description: repo.description,
    empty: repo.isEmpty,
    private: repo.isPrivate,
    fork: repo.isFork,
    template: repo.isTemplate,
    parent: repo.isFork ? parent : null,
    mirror: repo.isMirror,
    size: Math.floor((repo.gitSize + repo.lfsSize) / 1024),
    language: repo.primaryLanguage ?? '',
    languages_url: `${urls.api}/languages`,
    html_url: urls.html,
    url: urls.api,
    link: '',
    ssh_url: urls.ssh,
    clone_url: urls.clone,
    original_url: repo.originalUrl,
    website: repo.website,
    stars_count: repo.numStars,
    forks_count: repo.numForks,
    watchers_count: repo.numWatches,
    open_issues_count: Math.max(0, repo.numIssues - repo.numClosedIssues),
    open_pr_counter: Math.max(0, (repo.numPulls ?? 0) - (repo.numClosedPulls ?? 0)),
    default_branch: repo.defaultBranch,
    archived: repo.isArchived,
    created_at: formatTime(repo.createdUnix),
    updated_at: formatTime(repo.updatedUnix),
    // Forgejo renders an unset archive time as the Unix epoch (not Go's zero time, as for other times).
    archived_at: repo.archivedUnix ? formatTime(repo.archivedUnix) : '1970-01-01T00:00:00Z',
    permissions: { admin: permission.admin, push: permission.push, pull: permission.pull },
    has_issues: repo.hasIssues,
    ...trackerFields(repo),
    has_wiki: false,
    globally_editable_wiki: false,
    has_pull_requests: pulls,
    has_projects: false,
    has_releases: true,
    has_packages: true,
    has_actions: false,
    // Forgejo reports the pull request settings only while the unit is on (all false, and `merge`, otherwise).
    ignore_whitespace_conflicts: pulls && repo.ignoreWhitespaceConflicts,
    allow_merge_commits: pulls && repo.allowMergeCommits,
    allow_rebase: pulls && repo.allowRebase,
    allow_rebase_explicit: pulls && repo.allowRebaseExplicit,
    allow_squash_merge: pulls && repo.allowSquashMerge,
    allow_fast_forward_only_merge: pulls && repo.allowFastForwardOnlyMerge,
    allow_rebase_update: pulls && repo.allowRebaseUpdate,
    default_delete_branch_after_merge: pulls && repo.defaultDeleteBranchAfterMerge,
    default_merge_style: pulls ? repo.defaultMergeStyle || 'merge' : 'merge',
    default_allow_maintainer_edit: pulls && repo.defaultAllowMaintainerEdit,
    avatar_url: '',
    internal: !repo.isPrivate && owner.visibility === Visibility.Private,
    mirror_interval: repo.isMirror ? repo.mirrorInterval : '',
    object_format_name: repo.objectFormatName,
    mirror_updated: formatTime(repo.isMirror ? repo.mirrorUpdatedUnix : 0),
    repo_transfer: null,
    topics: splitTopics(repo.topics ?? ''),
    licenses: [],
  };
}

/** `internal_tracker` while the built-in tracker is on, `external_tracker` while an external one replaces it. */
function trackerFields(repo: RepositoryEntity): Pick<RepositoryWire, 'internal_tracker' | 'external_tracker'> {
  if (!repo.hasIssues) return {};
  if (repo.externalTrackerUrl) {
    return {
      external_tracker: {
        external_tracker_url: repo.externalTrackerUrl,
        external_tracker_format: repo.externalTrackerFormat,
        external_tracker_style: repo.externalTrackerStyle,
        external_tracker_regexp_pattern: repo.externalTrackerRegexp,
      },
    };
  }
  return {
    internal_tracker: {
      enable_time_tracker: repo.enableTimeTracker,
      allow_only_contributors_to_track_time: repo.allowOnlyContributorsToTrackTime,
      enable_issue_dependencies: repo.enableIssueDependencies,
    },
  };
}

/** `Repository.owner`: the same for every repository of one owner, for one viewer. */
export function toRepositoryOwnerWire(owner: UserEntity, viewer: AuthContext, site: Site): UserWire {
  return toUserWire(owner, viewer, site, { seesRepository: viewer.isSignedIn });
}

/** Forgejo sends the repository's creation time as `created_at` of a watch. */
export function toWatchInfoWire(repo: RepositoryEntity, owner: UserEntity, site: Site): WatchInfoWire {
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
