import type { EntityManager } from 'typeorm';
import type { MergeReview } from '../access/branch-merge';
import type { RepositoryTarget } from '../access/repository-policy';
import type { UserWire } from '../users/user.wire';
import type { PullRow } from './pull-request.store';

/** What a pull request's JSON says of its reviews. */
export interface PullReviewSummary {
  /** Forgejo's `requested_reviewers`: each user's latest undismissed approval, rejection or open request. */
  requestedReviewers: UserWire[] | null;
  requestedTeams: unknown[] | null;
  /** Forgejo's `review_comments`: the reviews given (not pending, not requests). */
  reviewComments: number;
}

/**
 * What pull requests ask of reviews, registered by the reviews module (which depends on this one): the summary
 * the JSON shows, the reviews the merge rules count, what a head push does to reviews, and cleanup.
 */
export interface PullReviewHooks {
  summaries(issueIds: number[], tx?: EntityManager): Promise<Map<number, PullReviewSummary>>;
  mergeReviews(issueId: number): Promise<MergeReview[]>;
  /** The head branch moved from `oldHead` to `newHead` (after the move was recorded). */
  headMoved(target: RepositoryTarget, row: PullRow, oldHead: string, newHead: string): Promise<void>;
  /** In the transaction deleting the pull request's issue. */
  deleted(tx: EntityManager, issueId: number): Promise<void>;
}
