import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { MergeReview } from '../access/branch-merge';
import { BranchProtections } from '../access/branch-protection-policy';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { SiteUrls } from '../common/site-urls';
import { ContentRepositories } from '../content/content-repository';
import { Transactions } from '../database/transactions';
import { GitCompare } from '../git/git-compare';
import { GitRefs } from '../git/git-refs';
import { IssueTimeline } from '../issues/issue-timeline';
import type { PullReviewHooks, PullReviewSummary } from '../pulls/pull-review-hooks';
import type { PullRow } from '../pulls/pull-request.store';
import { TeamDirectory } from '../teams/team-directory';
import { toTeamWire } from '../teams/team.mapper';
import type { TeamEntity } from '../users/organization.entities';
import { toOrganizationWire } from '../users/organization.mapper';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import { ReviewEntity, ReviewType } from './review.entity';
import { ReviewStore } from './review.store';

/** Forgejo's text when a push dismisses approvals under `dismiss_stale_approvals`. */
export const STALE_DISMISSAL_MESSAGE = 'New commits pushed, approval review dismissed automatically according to repository settings';

/**
 * What pull requests ask of reviews (PullReviewHooks, registered by the reviews module): the summary a pull
 * request's JSON shows, the reviews the merge rules count, what a head push does to reviews (stale, dismissed,
 * outdated line comments), and the reviews of a deleted pull request.
 */
@Injectable()
export class ReviewStates implements PullReviewHooks {
  constructor(
    private readonly store: ReviewStore,
    private readonly timeline: IssueTimeline,
    private readonly protections: BranchProtections,
    private readonly content: ContentRepositories,
    private readonly compare: GitCompare,
    private readonly refs: GitRefs,
    private readonly users: UserAccounts,
    private readonly teams: TeamDirectory,
    private readonly transactions: Transactions,
    private readonly siteUrls: SiteUrls,
  ) {}

  /** Per pull request issue: Forgejo's `requested_reviewers` and `review_comments`. */
  async summaries(issueIds: number[], tx?: EntityManager): Promise<Map<number, PullReviewSummary>> {
    const result = new Map<number, PullReviewSummary>();
    const reviews = await this.store.ofIssues(issueIds, tx);
    const latest = new Map<number, Map<number, ReviewEntity>>();
    const given = new Map<number, number>();
    const teamRequests = new Map<number, number[]>();
    for (const review of reviews) {
      if (review.type === ReviewType.Approve || review.type === ReviewType.Reject || review.type === ReviewType.Comment)
        given.set(review.issueId, (given.get(review.issueId) ?? 0) + 1);
      // The teams asked, in the order they were asked (a team has at most one open request).
      if (review.reviewerTeamId !== 0 && review.type === ReviewType.Request) {
        teamRequests.set(review.issueId, [...(teamRequests.get(review.issueId) ?? []), review.reviewerTeamId]);
        continue;
      }
      // Each user's latest undismissed approval, rejection or request, in the order they were last changed.
      if (review.reviewerTeamId !== 0 || review.dismissed) continue;
      if (review.type !== ReviewType.Approve && review.type !== ReviewType.Reject && review.type !== ReviewType.Request) continue;
      const ofIssue = latest.get(review.issueId) ?? new Map<number, ReviewEntity>();
      ofIssue.set(review.reviewerId, review);
      latest.set(review.issueId, ofIssue);
    }
    const teams = new Map((await this.teams.byIds([...teamRequests.values()].flat(), tx)).map((team) => [team.id, team]));
    const userIds = [...new Set([...latest.values()].flatMap((byUser) => [...byUser.keys()]))];
    const users = new Map((await this.users.byIds([...userIds, ...[...teams.values()].map((team) => team.orgId)], tx)).map((user) => [user.id, user]));
    const anonymous = AuthContext.anonymous();
    // Forgejo's requested_reviewers_teams names each team's organisation.
    const teamWire = (team: TeamEntity) => {
      const org = users.get(team.orgId);
      return toTeamWire(team, org ? toOrganizationWire(org, anonymous, this.siteUrls) : null);
    };
    for (const issueId of issueIds) {
      const chosen = [...(latest.get(issueId)?.values() ?? [])].sort((a, b) => a.updatedUnix - b.updatedUnix || a.id - b.id);
      const requested = chosen.map((review) => users.get(review.reviewerId)).filter((user): user is UserEntity => user !== undefined);
      const requestedTeams = (teamRequests.get(issueId) ?? []).map((id) => teams.get(id)).filter((team): team is TeamEntity => team !== undefined);
      result.set(issueId, {
        requestedReviewers: requested.length > 0 ? requested.map((user) => toUserWire(user, anonymous, this.siteUrls)) : null,
        requestedTeams: requestedTeams.length > 0 ? requestedTeams.map(teamWire) : null,
        reviewComments: given.get(issueId) ?? 0,
      });
    }
    return result;
  }

  /** The reviews the merge rules count (branch-merge.ts): given ones and open requests. */
  async mergeReviews(issueId: number): Promise<MergeReview[]> {
    const kinds: Partial<Record<ReviewType, MergeReview['type']>> = {
      [ReviewType.Approve]: 'approve',
      [ReviewType.Reject]: 'reject',
      [ReviewType.Request]: 'request',
      [ReviewType.Comment]: 'comment',
    };
    return (await this.store.ofIssues([issueId]))
      .filter((review) => kinds[review.type] !== undefined)
      .map((review) => ({ type: kinds[review.type]!, official: review.official, dismissed: review.dismissed, stale: review.stale }));
  }

  /**
   * The head moved: when the diff changed, every earlier review is stale and, under a rule dismissing stale
   * approvals, the approvals are dismissed; reviews made on the new head are not stale.
   */
  async headMoved(target: RepositoryTarget, row: PullRow, oldHead: string, newHead: string): Promise<void> {
    const dir = this.content.open(target).dir;
    const changed = await this.content.withGit(async () => {
      const base = await this.refs.resolveCommit(dir, `refs/heads/${row.pull.baseBranch}`);
      const mergeBase = base ? await this.compare.mergeBase(dir, base, newHead) : null;
      if (!mergeBase || !oldHead) return true;
      return this.compare.contentChanged(dir, newHead, oldHead, mergeBase);
    });
    const dismiss = changed && (await this.protections.dismissesStaleApprovals(target.repo.id, row.pull.baseBranch));
    const outdated = await this.outdatedComments(dir, row.issue.id, newHead);
    await this.transactions.run(async (tx) => {
      await this.store.markOutdated(tx, outdated);
      if (changed) await this.store.markStale(tx, row.issue.id, newHead);
      else await this.store.markFresh(tx, row.issue.id, newHead);
      if (!dismiss) return;
      for (const approval of await this.store.approvals(row.issue.id, tx)) {
        await this.store.update(tx, approval.id, { dismissed: true });
        await this.timeline.reviewDismissed(tx, row.issue, target.viewer.user?.id ?? 0, approval.id, STALE_DISMISSAL_MESSAGE);
      }
    });
  }

  /**
   * Line comments the new head outdates, as Forgejo finds them: the line is gone, or git blames it on another
   * commit than the one the comment was made on. Outdated comments leave the review's comment list.
   */
  private async outdatedComments(dir: string, issueId: number, newHead: string): Promise<number[]> {
    const comments = await this.store.currentCommentsOfIssue(issueId);
    if (comments.length === 0) return [];
    return this.content.withGit(async () => {
      const outdated: number[] = [];
      for (const comment of comments) {
        const line = Math.abs(comment.line);
        // A comment on no line (or no path) sits on nothing a push can move.
        if (line === 0 || comment.path === '') continue;
        const blamed = await this.compare.blameLine(dir, newHead, comment.path, line);
        if (blamed === null || (comment.commitSha !== '' && blamed !== comment.commitSha)) outdated.push(comment.id);
      }
      return outdated;
    });
  }

  deleted(tx: EntityManager, issueId: number): Promise<void> {
    return this.store.deleteOfIssue(tx, issueId);
  }
}
