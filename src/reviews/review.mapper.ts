import type { AuthContext } from '../auth/auth-context';
import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import { ReviewCommentEntity, ReviewEntity, ReviewType } from './review.entity';
import type { PullReviewCommentWire, PullReviewWire, ReviewState } from './review.wire';

const STATES: Record<ReviewType, ReviewState> = {
  [ReviewType.Pending]: 'PENDING',
  [ReviewType.Approve]: 'APPROVED',
  [ReviewType.Comment]: 'COMMENT',
  [ReviewType.Reject]: 'REQUEST_CHANGES',
  [ReviewType.Request]: 'REQUEST_REVIEW',
};

/** The review type an `event` asks for; anything else leaves the review pending, as Forgejo. */
export function reviewTypeOf(event: string | undefined): ReviewType {
  switch (event) {
    case 'APPROVED':
      return ReviewType.Approve;
    case 'REQUEST_CHANGES':
      return ReviewType.Reject;
    case 'COMMENT':
      return ReviewType.Comment;
    default:
      return ReviewType.Pending;
  }
}

/** Forgejo's `diff_hunk`: the stored patch from its first hunk header on, without the file headers. */
export function diffHunkOf(patch: string): string {
  const parts = patch.split('\n@@');
  return parts.length === 2 ? `@@${parts[1]}` : '';
}

/** What a review's JSON needs besides its row. */
export interface ReviewContext {
  reviewer: UserEntity | null;
  /** The team a request is addressed to, as its JSON. */
  team: unknown;
  commentsCount: number;
  /** The pull request's page. */
  pullHtml: string;
  /** The review's timeline entry (given reviews have one), 0 when none. */
  entryId: number;
}

/** Pure: Forgejo's `PullReview` for `viewer`. */
export function toPullReviewWire(review: ReviewEntity, context: ReviewContext, viewer: AuthContext, site: Site): PullReviewWire {
  return {
    id: review.id,
    user: context.reviewer ? toUserWire(context.reviewer, viewer, site) : null,
    team: context.team ?? null,
    state: STATES[review.type] ?? '',
    body: review.content,
    commit_id: review.commitId,
    stale: review.stale,
    official: review.official,
    dismissed: review.dismissed,
    comments_count: context.commentsCount,
    submitted_at: formatTime(review.createdUnix),
    updated_at: formatTime(review.updatedUnix),
    // Shown on the page by its timeline entry; a pending review or a request has none yet.
    html_url: context.entryId > 0 ? `${context.pullHtml}#issuecomment-${context.entryId}` : '',
    pull_request_url: context.pullHtml,
  };
}

/** Pure: Forgejo's `PullReviewComment` for `viewer`. */
export function toPullReviewCommentWire(
  comment: ReviewCommentEntity,
  review: ReviewEntity,
  users: { poster: UserEntity; resolver: UserEntity | null },
  pullHtml: string,
  viewer: AuthContext,
  site: Site,
): PullReviewCommentWire {
  const line = Math.abs(comment.line);
  // A comment of a pending review is shown on the files page only.
  const anchor = review.type === ReviewType.Pending ? `/files#issuecomment-${comment.id}` : `#issuecomment-${comment.id}`;
  return {
    id: comment.id,
    body: comment.body,
    user: toUserWire(users.poster, viewer, site),
    resolver: users.resolver ? toUserWire(users.resolver, viewer, site) : null,
    pull_request_review_id: review.id,
    created_at: formatTime(comment.createdUnix),
    updated_at: formatTime(comment.updatedUnix),
    path: comment.path,
    commit_id: comment.commitSha,
    original_commit_id: '',
    diff_hunk: diffHunkOf(comment.patch),
    position: comment.line >= 0 ? line : 0,
    original_position: comment.line < 0 ? line : 0,
    html_url: `${pullHtml}${anchor}`,
    pull_request_url: pullHtml,
  };
}
