import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import type { CommentWire, TimelineCommentWire } from './comment.wire';
import type { CommentEntity, IssueEntity } from './issue.entity';
import { ANONYMOUS_VIEW } from './issue.mapper';

/** Pure: the `Comment` JSON; the poster is shown as to anyone (Forgejo renders comment authors without a viewer). */
export function toCommentWire(comment: CommentEntity, issue: IssueEntity, repo: RepositoryEntity, owner: UserEntity, poster: UserEntity, site: Site): CommentWire {
  const page = `${repositoryUrls(owner, repo, site).html}/${issue.isPull ? 'pulls' : 'issues'}/${issue.repoIndex}`;
  return {
    id: comment.id,
    html_url: `${page}#issuecomment-${comment.id}`,
    pull_request_url: issue.isPull ? page : '',
    issue_url: issue.isPull ? '' : page,
    user: toUserWire(poster, ANONYMOUS_VIEW, site),
    original_author: '',
    original_author_id: 0,
    body: comment.body,
    assets: [],
    created_at: formatTime(comment.createdUnix),
    updated_at: formatTime(comment.updatedUnix),
  };
}

/** Forgejo's names of comment types, by number: a timeline entry's `type`. */
const COMMENT_TYPE_NAMES = [
  'comment', 'reopen', 'close', 'issue_ref', 'commit_ref', 'comment_ref', 'pull_ref', 'label', 'milestone', 'assignees', 'change_title',
  'delete_branch', 'start_tracking', 'stop_tracking', 'add_time_manual', 'cancel_tracking', 'added_deadline', 'modified_deadline',
  'removed_deadline', 'add_dependency', 'remove_dependency', 'code', 'review', 'lock', 'unlock', 'change_target_branch', 'delete_time_manual',
  'review_request', 'merge_pull', 'pull_push', 'project', 'project_board', 'dismiss_review', 'change_issue_ref', 'pull_scheduled_merge',
  'pull_cancel_scheduled_merge', 'pin', 'unpin',
];

/** Pure: the `TimelineComment` JSON of any entry; the fields of kinds Anvil does not record stay empty. */
export function toTimelineCommentWire(comment: CommentEntity, issue: IssueEntity, repo: RepositoryEntity, owner: UserEntity, poster: UserEntity, site: Site): TimelineCommentWire {
  const plain = toCommentWire(comment, issue, repo, owner, poster, site);
  return {
    id: comment.id,
    type: COMMENT_TYPE_NAMES[comment.type] ?? 'comment',
    html_url: plain.html_url,
    pull_request_url: plain.pull_request_url,
    issue_url: plain.issue_url,
    user: plain.user,
    body: comment.body,
    created_at: plain.created_at,
    updated_at: plain.updated_at,
    old_project_id: 0,
    project_id: 0,
    old_milestone: null,
    milestone: null,
    tracked_time: null,
    old_title: '',
    new_title: '',
    old_ref: '',
    new_ref: '',
    ref_issue: null,
    ref_comment: null,
    ref_action: 'none',
    ref_commit_sha: comment.commitSha,
    review_id: 0,
    label: null,
    assignee: null,
    assignee_team: null,
    removed_assignee: false,
    resolve_doer: null,
    dependent_issue: null,
  };
}
