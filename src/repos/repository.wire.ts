import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { UserWire } from '../users/user.wire';

@ApiSchema({ name: 'Permission' })
export class PermissionWire {
  @ApiProperty() admin: boolean;
  @ApiProperty() push: boolean;
  @ApiProperty() pull: boolean;
}

/** A pending transfer; Anvil has no transfers, so `repo_transfer` is always null. */
@ApiSchema({ name: 'RepoTransfer' })
export class RepoTransferWire {
  @ApiProperty({ type: Object }) doer: unknown;
  @ApiProperty({ type: Object }) recipient: unknown;
  @ApiProperty({ type: [Object] }) teams: unknown[];
}

/** The built-in issue tracker's settings. */
@ApiSchema({ name: 'InternalTracker' })
export class InternalTrackerWire {
  @ApiProperty({ description: 'Enable time tracking (Built-in issue tracker)' }) enable_time_tracker: boolean;
  @ApiProperty({ description: 'Let only contributors track time (Built-in issue tracker)' }) allow_only_contributors_to_track_time: boolean;
  @ApiProperty({ description: 'Enable dependencies for issues and pull requests (Built-in issue tracker)' }) enable_issue_dependencies: boolean;
}

/** An external issue tracker used instead of the built-in one. */
@ApiSchema({ name: 'ExternalTracker' })
export class ExternalTrackerWire {
  @ApiProperty({ description: 'URL of external issue tracker.' }) external_tracker_url: string;
  @ApiProperty({
    description: 'External Issue Tracker URL Format. Use the placeholders {user}, {repo} and {index} for the username, repository name and issue index.',
  })
  external_tracker_format: string;
  @ApiProperty({ description: 'External Issue Tracker Number Format, either `numeric`, `alphanumeric`, or `regexp`' }) external_tracker_style: string;
  @ApiProperty({ description: 'External Issue Tracker issue regular expression' }) external_tracker_regexp_pattern: string;
}

/** An external wiki (Anvil has none, so it is never sent). */
@ApiSchema({ name: 'ExternalWiki' })
export class ExternalWikiWire {
  @ApiProperty({ description: 'URL of external wiki.' }) external_wiki_url: string;
}

/**
 * The `Repository` JSON, fields in Forgejo's order. Fields of features Anvil does not have say
 * so: no wiki, projects or actions (`has_*` false), no transfers; the pull request settings are all false while
 * the pull requests unit is off, as Forgejo sends them. `internal_tracker` is sent while the built-in tracker is on, `external_tracker` while an external one
 * is set, and `external_wiki` never: Forgejo leaves each out while its unit is off.
 */
@ApiSchema({ name: 'Repository' })
export class RepositoryWire {
  @ApiProperty({ format: 'int64' }) id: number;
  @ApiProperty({ type: UserWire }) owner: UserWire;
  @ApiProperty() name: string;
  @ApiProperty() full_name: string;
  @ApiProperty() description: string;
  @ApiProperty() empty: boolean;
  @ApiProperty() private: boolean;
  @ApiProperty({ description: 'a fork of a repository that still exists' }) fork: boolean;
  @ApiProperty() template: boolean;
  @ApiProperty({
    type: () => RepositoryWire,
    nullable: true,
    description: "a fork's source, one level deep (its own `parent` null); null when the viewer cannot see it",
  })
  parent: RepositoryWire | null;
  @ApiProperty() mirror: boolean;
  @ApiProperty({ format: 'int64', description: 'KiB' }) size: number;
  @ApiProperty({ description: 'the language with the most bytes at the default branch, once measured; "" before' }) language: string;
  @ApiProperty() languages_url: string;
  @ApiProperty() html_url: string;
  @ApiProperty() url: string;
  @ApiProperty({ description: 'always ""' }) link: string;
  @ApiProperty() ssh_url: string;
  @ApiProperty() clone_url: string;
  @ApiProperty() original_url: string;
  @ApiProperty() website: string;
  @ApiProperty({ format: 'int64' }) stars_count: number;
  @ApiProperty({ format: 'int64' }) forks_count: number;
  @ApiProperty({ format: 'int64' }) watchers_count: number;
  @ApiProperty({ format: 'int64' }) open_issues_count: number;
  @ApiProperty({ format: 'int64' }) open_pr_counter: number;
  @ApiProperty() default_branch: string;
  @ApiProperty() archived: boolean;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty({ format: 'date-time' }) updated_at: string;
  @ApiProperty({ format: 'date-time', description: 'when it was last archived; the Unix epoch when never' }) archived_at: string;
  @ApiProperty({ type: PermissionWire }) permissions: PermissionWire;
  @ApiProperty() has_issues: boolean;
  @ApiProperty({ type: InternalTrackerWire, required: false }) internal_tracker?: InternalTrackerWire;
  @ApiProperty({ type: ExternalTrackerWire, required: false }) external_tracker?: ExternalTrackerWire;
  @ApiProperty() has_wiki: boolean;
  @ApiProperty({ type: ExternalWikiWire, required: false }) external_wiki?: ExternalWikiWire;
  @ApiProperty() globally_editable_wiki: boolean;
  @ApiProperty() has_pull_requests: boolean;
  @ApiProperty() has_projects: boolean;
  @ApiProperty() has_releases: boolean;
  @ApiProperty() has_packages: boolean;
  @ApiProperty() has_actions: boolean;
  @ApiProperty() ignore_whitespace_conflicts: boolean;
  @ApiProperty() allow_merge_commits: boolean;
  @ApiProperty() allow_rebase: boolean;
  @ApiProperty() allow_rebase_explicit: boolean;
  @ApiProperty() allow_squash_merge: boolean;
  @ApiProperty() allow_fast_forward_only_merge: boolean;
  @ApiProperty() allow_rebase_update: boolean;
  @ApiProperty() default_delete_branch_after_merge: boolean;
  @ApiProperty({ enum: ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'] }) default_merge_style: string;
  @ApiProperty() default_allow_maintainer_edit: boolean;
  @ApiProperty({ description: '"": repositories have no avatar of their own' }) avatar_url: string;
  @ApiProperty({ description: 'a public repository of a private owner' }) internal: boolean;
  @ApiProperty({ example: '8h0m0s' }) mirror_interval: string;
  @ApiProperty({ enum: ['sha1', 'sha256'] }) object_format_name: string;
  @ApiProperty({ format: 'date-time' }) mirror_updated: string;
  @ApiProperty({ type: RepoTransferWire, nullable: true }) repo_transfer: null;
  @ApiProperty({ type: [String] }) topics: string[];
  @ApiProperty({ type: [String], description: 'always empty: Anvil does not detect licenses' }) licenses: string[];
}

/** `GET /repos/search` answer. */
@ApiSchema({ name: 'SearchResults' })
export class SearchResultsWire {
  @ApiProperty() ok: boolean;
  @ApiProperty({ type: [RepositoryWire] }) data: RepositoryWire[];
}

@ApiSchema({ name: 'SearchError' })
export class SearchErrorWire {
  @ApiProperty() ok: boolean;
  @ApiProperty() error: string;
}

/** The watch status of one repository. */
@ApiSchema({ name: 'WatchInfo' })
export class WatchInfoWire {
  @ApiProperty() subscribed: boolean;
  @ApiProperty() ignored: boolean;
  @ApiProperty({ nullable: true, type: Object }) reason: null;
  @ApiProperty({ format: 'date-time' }) created_at: string;
  @ApiProperty() url: string;
  @ApiProperty() repository_url: string;
}

/** Where a fork's branch stands to its source's branch of the same name. */
@ApiSchema({ name: 'SyncForkInfo' })
export class SyncForkInfoWire {
  @ApiProperty({ description: 'a sync would succeed: the fork is behind and can be fast-forwarded' }) allowed: boolean;
  @ApiProperty({ description: "the fork's commit; '' when the branch is missing" }) fork_commit: string;
  @ApiProperty({ description: "the source's commit; '' when there is none to sync from" }) base_commit: string;
  @ApiProperty({ format: 'int64', description: 'commits of the source the fork lacks' }) commits_behind: number;
}
