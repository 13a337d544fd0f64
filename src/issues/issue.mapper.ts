import type { AuthContext } from '../auth/auth-context';
import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { LabelWire } from '../labels/label.wire';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import { systemUser, GHOST_USER_ID } from '../users/system-users';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import type { UserWire } from '../users/user.wire';
import type { IssueEntity } from './issue.entity';
import type { IssueWire, PullRequestMetaWire } from './issue.wire';
import type { MilestoneWire } from '../milestones/milestone.wire';

/** What an issue's JSON needs besides its row, read once per page. */
export interface IssueContext {
  repo: RepositoryEntity;
  owner: UserEntity;
  /** Users by id (posters and assignees); a missing one is shown as Ghost. */
  users: Map<number, UserEntity>;
  labels: LabelWire[];
  assigneeIds: number[];
  /** A pull request's part; null for an issue. */
  pull?: PullRequestMetaWire | null;
  milestone: MilestoneWire | null;
}

function userOrGhost(users: Map<number, UserEntity>, id: number): UserEntity {
  return users.get(id) ?? systemUser(id) ?? systemUser(GHOST_USER_ID)!;
}

/**
 * Pure: the `Issue` JSON for `viewer`. The poster is shown as the viewer may see them; assignees as to anyone
 * (Forgejo renders them without a viewer); `assignees` is null, not [], when nobody is assigned.
 */
export function toIssueWire(issue: IssueEntity, context: IssueContext, viewer: AuthContext, site: Site): IssueWire {
  const api = repositoryUrls(context.owner, context.repo, site);
  const assignees: UserWire[] = context.assigneeIds.map((id) => toUserWire(userOrGhost(context.users, id), ANONYMOUS_VIEW, site));
  return {
    id: issue.id,
    url: `${api.api}/issues/${issue.repoIndex}`,
    html_url: `${api.html}/${issue.isPull ? 'pulls' : 'issues'}/${issue.repoIndex}`,
    number: issue.repoIndex,
    user: toUserWire(userOrGhost(context.users, issue.posterId), viewer, site, { seesRepository: true }),
    original_author: '',
    original_author_id: 0,
    title: issue.title,
    body: issue.body,
    ref: issue.ref,
    assets: [],
    labels: context.labels,
    milestone: context.milestone,
    assignee: assignees[0] ?? null,
    assignees: assignees.length > 0 ? assignees : null,
    state: issue.isClosed ? 'closed' : 'open',
    is_locked: issue.isLocked,
    comments: issue.numComments,
    created_at: formatTime(issue.createdUnix),
    updated_at: formatTime(issue.updatedUnix),
    closed_at: issue.closedUnix ? formatTime(issue.closedUnix) : null,
    due_date: issue.deadlineUnix ? formatTime(issue.deadlineUnix) : null,
    pull_request: context.pull ?? null,
    repository: { id: context.repo.id, name: context.repo.name, owner: context.owner.name, full_name: `${context.owner.name}/${context.repo.name}` },
    pin_order: issue.pinOrder,
  };
}

export const ANONYMOUS_VIEW: AuthContext = { isSignedIn: false, isSelfOrAdmin: () => false, is: () => false } as unknown as AuthContext;
