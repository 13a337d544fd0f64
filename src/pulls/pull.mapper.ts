import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { IssueEntity } from '../issues/issue.entity';
import type { IssueWire, PullRequestMetaWire } from '../issues/issue.wire';
import type { RepositoryWire } from '../repos/repository.wire';
import type { UserWire } from '../users/user.wire';
import type { ChangedPath } from '../git/git-compare';
import { PullRequestEntity, PullStatus } from './pull-request.entity';
import type { PullReviewSummary } from './pull-review-hooks';
import type { ChangedFileWire, PullRequestWire } from './pull.wire';

/** Titles that mark a pull request as a work in progress (`draft`), compared without regard to case. */
export const WORK_IN_PROGRESS_PREFIXES = ['WIP:', '[WIP]'];

export function isWorkInProgress(title: string): boolean {
  const upper = title.toUpperCase();
  return WORK_IN_PROGRESS_PREFIXES.some((prefix) => upper.startsWith(prefix.toUpperCase()));
}

/** Tested, without conflicts or a failed test, and not a work in progress. */
export function isMergeable(pull: PullRequestEntity, title: string): boolean {
  return pull.status !== PullStatus.Checking && pull.status !== PullStatus.Conflict && pull.status !== PullStatus.Error && !isWorkInProgress(title);
}

/** The pages of a pull request, from its issue's `html_url`. */
export function pullUrls(issue: Pick<IssueWire, 'html_url'>): { html: string; diff: string; patch: string } {
  return { html: issue.html_url, diff: `${issue.html_url}.diff`, patch: `${issue.html_url}.patch` };
}

/** Pure: the `pull_request` part of a pull request's issue JSON. */
export function toPullRequestMetaWire(pull: PullRequestEntity, issue: IssueEntity, htmlBase: string): PullRequestMetaWire {
  return {
    merged: pull.hasMerged,
    merged_at: pull.hasMerged && pull.mergedUnix ? formatTime(pull.mergedUnix) : null,
    draft: isWorkInProgress(issue.title),
    html_url: `${htmlBase}/pulls/${issue.repoIndex}`,
  };
}

/** What a pull request's JSON needs besides its row and its issue's JSON, read once per page. */
export interface PullContext {
  baseRepo: RepositoryWire;
  headRepo: RepositoryWire | null;
  /** What the base branch holds now; '' when it is gone. */
  baseSha: string;
  /** What the head branch holds now; null when it is gone (`refs/pull/{n}/head` is shown instead). */
  headSha: string | null;
  mergedBy: UserWire | null;
  /** Requested reviewers and the count of given reviews; none without the reviews module. */
  reviews?: PullReviewSummary;
}

/**
 * Pure: Forgejo's `PullRequest` JSON from the issue's JSON (already shaped for the viewer) and the pull
 * request's row. `url` is the page, as Forgejo sends it.
 */
export function toPullRequestWire(pull: PullRequestEntity, issue: IssueWire, context: PullContext): PullRequestWire {
  const urls = pullUrls(issue);
  const headGone = context.headSha === null;
  return {
    id: pull.id,
    url: urls.html,
    number: issue.number,
    user: issue.user,
    title: issue.title,
    body: issue.body,
    labels: issue.labels,
    milestone: issue.milestone,
    assignee: issue.assignee,
    assignees: issue.assignees,
    requested_reviewers: context.reviews?.requestedReviewers ?? null,
    requested_reviewers_teams: context.reviews?.requestedTeams ?? null,
    state: issue.state,
    draft: isWorkInProgress(issue.title),
    is_locked: issue.is_locked,
    comments: issue.comments,
    review_comments: context.reviews?.reviewComments ?? 0,
    additions: pull.additions,
    deletions: pull.deletions,
    changed_files: pull.changedFiles,
    html_url: urls.html,
    diff_url: urls.diff,
    patch_url: urls.patch,
    mergeable: isMergeable(pull, issue.title),
    merged: pull.hasMerged,
    merged_at: pull.hasMerged && pull.mergedUnix ? formatTime(pull.mergedUnix) : null,
    merge_commit_sha: pull.hasMerged ? pull.mergedCommitId : null,
    merged_by: pull.hasMerged ? context.mergedBy : null,
    allow_maintainer_edit: pull.allowMaintainerEdit,
    base: { label: pull.baseBranch, ref: pull.baseBranch, sha: context.baseSha, repo_id: pull.baseRepoId, repo: context.baseRepo },
    head: {
      label: pull.headBranch,
      ref: headGone ? `refs/pull/${issue.number}/head` : pull.headBranch,
      sha: headGone ? pull.headCommitId : context.headSha!,
      repo_id: context.headRepo ? pull.headRepoId : -1,
      repo: context.headRepo,
    },
    merge_base: pull.mergeBase,
    due_date: issue.due_date,
    created_at: issue.created_at,
    updated_at: issue.updated_at,
    closed_at: issue.closed_at,
    pin_order: issue.pin_order,
  };
}

const STATUS_NAMES: Record<string, string> = { A: 'added', D: 'deleted', M: 'changed', T: 'changed', R: 'renamed', C: 'copied' };

/** Pure: Forgejo's `ChangedFile` for one path changed at `headSha`. */
export function toChangedFileWire(change: ChangedPath, html: string, api: string, headSha: string): ChangedFileWire {
  const path = change.path.split('/').map(encodeURIComponent).join('/');
  return {
    filename: change.path,
    ...(change.previousPath !== undefined ? { previous_filename: change.previousPath } : {}),
    status: STATUS_NAMES[change.status] ?? 'changed',
    additions: change.additions,
    deletions: change.deletions,
    changes: change.additions + change.deletions,
    html_url: `${html}/src/commit/${headSha}/${path}`,
    contents_url: `${api}/contents/${path}?ref=${headSha}`,
    raw_url: `${html}/raw/commit/${headSha}/${path}`,
  };
}
