import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import type { LabelWire } from '../labels/label.wire';
import type { MilestoneWire } from '../milestones/milestone.wire';
import type { TeamWire } from '../teams/team.wire';
import { GHOST_USER_ID, systemUser } from '../users/system-users';
import type { CommentWire, TimelineCommentWire } from './comment.wire';
import { commentTypeName } from './comment-types';
import type { IssueWire } from './issue.wire';
import type { CommentEntity, IssueEntity } from './issue.entity';
import { ANONYMOUS_VIEW } from './issue.mapper';

/** Pure: the `Comment` JSON; the poster is shown as to anyone (Forgejo renders comment authors without a viewer). */
export function toCommentWire(
  comment: CommentEntity,
  issue: IssueEntity,
  repo: RepositoryEntity,
  owner: UserEntity,
  poster: UserEntity,
  site: Site,
): CommentWire {
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

/** What timeline entries name, read once for a page of them; an entry whose thing is gone (or unseen) shows null. */
export interface TimelineReferences {
  labels: Map<number, LabelWire>;
  milestones: Map<number, MilestoneWire>;
  /** Assignees, by id (a deleted account shows as Ghost). */
  users: Map<number, UserEntity>;
  /** Dependent issues the viewer may read. */
  issues: Map<number, IssueWire>;
  /** Teams asked for reviews, by id (a deleted team shows as null, as in Forgejo). */
  teams: Map<number, TeamWire>;
}

/** Pure: the `TimelineComment` JSON of any entry; the fields an entry's kind does not use stay empty. */
export function toTimelineCommentWire(
  comment: CommentEntity,
  issue: IssueEntity,
  repo: RepositoryEntity,
  owner: UserEntity,
  poster: UserEntity,
  site: Site,
  refs: TimelineReferences,
): TimelineCommentWire {
  const plain = toCommentWire(comment, issue, repo, owner, poster, site);
  const assignee = comment.assigneeId !== 0 ? (refs.users.get(comment.assigneeId) ?? systemUser(GHOST_USER_ID)!) : null;
  return {
    id: comment.id,
    type: commentTypeName(comment.type),
    html_url: plain.html_url,
    pull_request_url: plain.pull_request_url,
    issue_url: plain.issue_url,
    user: plain.user,
    body: comment.body,
    created_at: plain.created_at,
    updated_at: plain.updated_at,
    old_project_id: 0,
    project_id: 0,
    old_milestone: refs.milestones.get(comment.oldMilestoneId) ?? null,
    milestone: refs.milestones.get(comment.milestoneId) ?? null,
    tracked_time: null,
    old_title: comment.oldTitle,
    new_title: comment.newTitle,
    old_ref: comment.oldRef,
    new_ref: comment.newRef,
    ref_issue: null,
    ref_comment: null,
    ref_action: 'none',
    ref_commit_sha: comment.commitSha,
    review_id: comment.reviewId ?? 0,
    label: refs.labels.get(comment.labelId) ?? null,
    assignee: assignee ? toUserWire(assignee, ANONYMOUS_VIEW, site) : null,
    assignee_team: comment.assigneeTeamId > 0 ? (refs.teams.get(comment.assigneeTeamId) ?? null) : null,
    removed_assignee: comment.removedAssignee,
    resolve_doer: null,
    dependent_issue: refs.issues.get(comment.dependentIssueId) ?? null,
  };
}
