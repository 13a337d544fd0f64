import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { assertAcceptsWrites } from '../access/access-policy';
import { BranchProtections } from '../access/branch-protection-policy';
import { assertValidReviewRequest, assertValidTeamReviewRequest } from '../access/pull-rules';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { ForbiddenError, NotFoundError } from '../common/errors';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import type { IssueEntity } from '../issues/issue.entity';
import { IssueTimeline } from '../issues/issue-timeline';
import type { PullRow } from '../pulls/pull-request.store';
import { PullsService } from '../pulls/pulls.service';
import { TeamDirectory } from '../teams/team-directory';
import type { TeamEntity } from '../users/organization.entities';
import { UserAccounts } from '../users/user-accounts';
import { UserEntity, UserType } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import { ReviewEntity, ReviewType } from './review.entity';
import type { PullReviewRequestOptions } from './review.options';
import { ReviewStore } from './review.store';
import type { PullReviewWire } from './review.wire';
import type { UserWire } from '../users/user.wire';
import { ReviewsService } from './reviews.service';

/**
 * Requests for reviews of a pull request (POST and DELETE …/requested_reviewers): a request is a review of type
 * `request` of the user asked, official when their approval would be, answered by their next review; or, on an
 * organisation's repository, of a team of the organisation (`reviewer_team_id`), answered by a member's approval
 * or rejection. Forgejo's IsValidReviewRequest and IsValidTeamReviewRequest decide who may ask whom
 * (access/pull-rules.ts).
 */
@Injectable()
export class ReviewRequestsService {
  constructor(
    private readonly reviews: ReviewsService,
    private readonly store: ReviewStore,
    private readonly pulls: PullsService,
    private readonly timeline: IssueTimeline,
    private readonly protections: BranchProtections,
    private readonly policy: RepositoryPolicy,
    private readonly users: UserAccounts,
    private readonly teams: TeamDirectory,
    private readonly transactions: Transactions,
    private readonly events: RepositoryEvents,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
  ) {}

  /** POST …/requested_reviewers: 201 with the requests made (a user already asked is not asked again). */
  async request(target: RepositoryTarget, rawIndex: string, option: PullReviewRequestOptions): Promise<PullReviewWire[]> {
    const made = await this.changeRequests(target, rawIndex, option, true);
    const place = await this.reviews.place(target, rawIndex);
    return this.reviews.wires(target, place, made);
  }

  /** GET /repos/{o}/{r}/reviewers: everyone who may be asked to review, active individual accounts only, by name. */
  async reviewers(target: RepositoryTarget): Promise<UserWire[]> {
    const ids = await this.policy.requestableReviewerIds(target.repo, target.owner);
    const users = (await this.users.byIds(ids)).filter((user) => user.isActive && user.type === UserType.Individual);
    users.sort((a, b) => (a.lowerName < b.lowerName ? -1 : a.lowerName > b.lowerName ? 1 : 0));
    return users.map((user) => toUserWire(user, target.viewer, this.siteUrls, { seesRepository: true }));
  }

  /** DELETE …/requested_reviewers: 204. */
  async unrequest(target: RepositoryTarget, rawIndex: string, option: PullReviewRequestOptions): Promise<void> {
    await this.changeRequests(target, rawIndex, option, false);
  }

  /**
   * The routes admitted signed-in readers; as Forgejo, the body (422), the pull request (404), each user (404) and
   * their request's validity (422), then each team (404) and its request's validity (422) come first. An archived
   * repository refuses the change only then (423).
   */
  private async changeRequests(target: RepositoryTarget, rawIndex: string, option: PullReviewRequestOptions, add: boolean): Promise<ReviewEntity[]> {
    const place = await this.reviews.place(target, rawIndex);
    const reviewers: UserEntity[] = [];
    for (const name of option.reviewers ?? []) {
      const reviewer = name.includes('@') ? await this.userByEmail(name) : await this.users.byName(name);
      if (!reviewer) throw new NotFoundError(`User '${name}' not exist`);
      const latest = await this.store.latestOf(place.row.issue.id, reviewer.id);
      await assertValidReviewRequest(
        target,
        place.row.issue,
        {
          user: reviewer,
          permission: () => this.policy.permission(new AuthContext(reviewer, 'password', null), target.repo, target.owner),
          latest: latest ? { requested: latest.type === ReviewType.Request, reviewerId: latest.reviewerId } : null,
        },
        add,
      );
      reviewers.push(reviewer);
    }
    // Forgejo reads `team_reviewers` only for an organisation's repository; elsewhere they are ignored, as there.
    const teams: TeamEntity[] = [];
    for (const name of target.owner.isOrganization ? (option.team_reviewers ?? []) : []) {
      const team = await this.teams.byName(target.owner.id, name);
      if (!team) throw new NotFoundError(`Team '${name}' not exist`);
      await assertValidTeamReviewRequest(target, place.row.issue, { reachesRepository: () => this.teams.reaches(team, target.repo) }, add);
      teams.push(team);
    }
    // Every request is checked before any is changed (Forgejo changes the users' before it looks the teams up).
    assertAcceptsWrites(target.repo, target.owner);
    const made: ReviewEntity[] = [];
    for (const reviewer of reviewers) {
      const review = await this.transactions.run(async (tx) => {
        const latest = await this.store.latestOf(place.row.issue.id, reviewer.id, tx);
        if (add) {
          if (latest?.type === ReviewType.Request) return null;
          if (latest && (place.row.issue.isClosed || place.row.pull.hasMerged)) throw new ForbiddenError('cannot request a re-review on a closed or merged PR');
          const official = await this.protections.isOfficialReviewer(target.repo, target.owner, reviewer, place.row.pull.baseBranch);
          if (official) await this.store.clearOfficial(tx, place.row.issue.id, reviewer.id);
          const inserted = await this.store.insert(tx, this.requestRow(target, place.row, { reviewerId: reviewer.id, reviewerTeamId: 0 }, official));
          await this.timeline.reviewRequested(tx, place.row.issue, target.viewer.user!.id, reviewer.id, inserted.id, false);
          await this.recordRequest(tx, target, place.row.issue, reviewer, 'review_requested');
          return inserted;
        }
        if (!latest || latest.type !== ReviewType.Request) return null;
        await this.store.delete(tx, latest.id);
        if (await this.protections.isOfficialReviewer(target.repo, target.owner, reviewer, place.row.pull.baseBranch))
          await this.reviews.restoreOfficial(tx, place.row.issue.id, reviewer.id);
        await this.timeline.reviewRequested(tx, place.row.issue, target.viewer.user!.id, reviewer.id, 0, true);
        await this.recordRequest(tx, target, place.row.issue, reviewer, 'review_request_removed');
        return null;
      });
      if (review) made.push(review);
    }
    for (const team of teams) {
      const review = await this.transactions.run((tx) =>
        add ? this.requestTeam(tx, target, place.row, team) : this.unrequestTeam(tx, target, place.row, team),
      );
      if (review) made.push(review);
    }
    this.events.committed();
    return made;
  }

  /** The `review` row of a request of a user or (reviewerTeamId) of a team, made now. */
  private requestRow(target: RepositoryTarget, row: PullRow, who: { reviewerId: number; reviewerTeamId: number }, official: boolean): Omit<ReviewEntity, 'id'> {
    const now = this.clock.nowUnix();
    return {
      type: ReviewType.Request,
      ...who,
      issueId: row.issue.id,
      repoId: target.repo.id,
      content: '',
      official,
      commitId: '',
      stale: false,
      dismissed: false,
      createdUnix: now,
      updatedUnix: now,
    };
  }

  /**
   * Asks a team for a review, unless it was asked already: official when the team's approval would count (the
   * base branch's rule), with its timeline entry, and a `review_requested` event for each of its members but the
   * pull request's poster (Forgejo notifies the members one by one, naming each as the reviewer asked).
   */
  private async requestTeam(tx: EntityManager, target: RepositoryTarget, row: PullRow, team: TeamEntity): Promise<ReviewEntity | null> {
    if (await this.store.teamRequestOf(row.issue.id, team.id, tx)) return null;
    const official = await this.protections.isOfficialReviewerTeam(target.repo.id, row.pull.baseBranch, team);
    const inserted = await this.store.insert(tx, this.requestRow(target, row, { reviewerId: 0, reviewerTeamId: team.id }, official));
    await this.timeline.teamReviewRequested(tx, row.issue, target.viewer.user!.id, team.id, inserted.id, false);
    const memberIds = (await this.teams.memberIds(team.id, tx)).filter((id) => id !== row.issue.posterId);
    for (const member of await this.users.byIds(memberIds, tx)) await this.recordRequest(tx, target, row.issue, member, 'review_requested');
    return inserted;
  }

  /** Withdraws a team's open request, with its timeline entry; Forgejo sends no event for it. */
  private async unrequestTeam(tx: EntityManager, target: RepositoryTarget, row: PullRow, team: TeamEntity): Promise<null> {
    const request = await this.store.teamRequestOf(row.issue.id, team.id, tx);
    if (!request || request.type !== ReviewType.Request) return null;
    await this.store.delete(tx, request.id);
    await this.timeline.teamReviewRequested(tx, row.issue, target.viewer.user!.id, team.id, 0, true);
    return null;
  }

  private async recordRequest(
    tx: EntityManager,
    target: RepositoryTarget,
    issue: IssueEntity,
    reviewer: UserEntity,
    action: 'review_requested' | 'review_request_removed',
  ): Promise<void> {
    await this.pulls.recordEvent(tx, target, issue, {
      action,
      hookEvent: 'pull_request_review_request',
      requestedReviewer: toUserWire(reviewer, AuthContext.anonymous(), this.siteUrls),
    });
  }

  private async userByEmail(email: string): Promise<UserEntity | null> {
    const id = await this.users.emailOwnerId(email);
    return id === null ? null : this.users.byId(id);
  }
}
