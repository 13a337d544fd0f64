import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { BranchProtections } from '../access/branch-protection-policy';
import { assertMayDeleteReview, assertMayDeleteReviewComment } from '../access/pull-rules';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { ContentRepositories } from '../content/content-repository';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import { GitCompare } from '../git/git-compare';
import { GitRefs } from '../git/git-refs';
import { IssueTimeline } from '../issues/issue-timeline';
import { pullHeadRef } from '../pulls/pull-checks';
import { PullMergeService } from '../pulls/pull-merge.service';
import type { PullRow } from '../pulls/pull-request.store';
import { PullsService } from '../pulls/pulls.service';
import { repositoryUrls } from '../repos/repository.mapper';
import { TeamDirectory } from '../teams/team-directory';
import { toTeamWire } from '../teams/team.mapper';
import { GHOST_USER_ID, systemUser } from '../users/system-users';
import { UserAccounts } from '../users/user-accounts';
import { toUserWire } from '../users/user.mapper';
import { cutDiffAroundLine } from './diff-hunk';
import { ReviewCommentEntity, ReviewEntity, ReviewType } from './review.entity';
import { reviewTypeOf, toPullReviewCommentWire, toPullReviewWire } from './review.mapper';
import type { CreatePullReviewCommentOptions, CreatePullReviewOptions, DismissPullReviewOptions, SubmitPullReviewOptions } from './review.options';
import { ReviewStore } from './review.store';
import type { PullReviewCommentWire, PullReviewWire } from './review.wire';

// One cohesive thing, kept whole though long: giving and reading reviews under Forgejo's rules (what a review's
// type does to the reviewer's earlier reviews and requests, when it is official or stale), read in one order.
// Requests for reviews (review-requests.service.ts) and what pull requests ask of reviews (review-states.ts)
// live beside it.

/** The webhook event type of a given review, by its type. */
const REVIEW_HOOK_EVENTS: Partial<Record<ReviewType, string>> = {
  [ReviewType.Approve]: 'pull_request_review_approved',
  [ReviewType.Reject]: 'pull_request_review_rejected',
  [ReviewType.Comment]: 'pull_request_review_comment',
};

/** A line comment of a new review, as checked. */
interface LineComment {
  path: string;
  body: string;
  /** Positive on the new side, negative on the old. */
  line: number;
}

/** A pull request and what its reviews are judged against. */
export interface ReviewPlace {
  row: PullRow;
  pullHtml: string;
}

/** What the dismissal routes answer (403) to a caller who is not the repository's admin, in Forgejo's words. */
export const REVIEW_DISMISSAL_REFUSED = 'Must be repo admin';

/**
 * Reviews of pull requests (docs/pull-requests.md, "Reviews"): readers of the pull request review it; a writer's
 * (or, under a rule with an approvals whitelist, a listed user's) approval or rejection is official; a new
 * approval or rejection dismisses the reviewer's earlier ones and answers their open request. A push that changes
 * the diff makes earlier reviews stale, and the merge rules count them (ReviewStates).
 */
@Injectable()
export class ReviewsService {
  constructor(
    private readonly store: ReviewStore,
    private readonly pulls: PullsService,
    private readonly timeline: IssueTimeline,
    private readonly merges: PullMergeService,
    private readonly protections: BranchProtections,
    private readonly content: ContentRepositories,
    private readonly compare: GitCompare,
    private readonly refs: GitRefs,
    private readonly users: UserAccounts,
    private readonly teams: TeamDirectory,
    private readonly transactions: Transactions,
    private readonly events: RepositoryEvents,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
  ) {}

  // Reading.

  /** GET …/reviews: oldest first, paged; another's pending review is left out (the total counts it, as Forgejo). */
  async list(target: RepositoryTarget, rawIndex: string, page: PageQuery): Promise<Page<PullReviewWire>> {
    const place = await this.place(target, rawIndex);
    const found = await this.store.list(place.row.issue.id, page);
    const visible = found.items.filter((review) => this.mayRead(target.viewer, review));
    return { items: await this.wires(target, place, visible), total: found.total };
  }

  async get(target: RepositoryTarget, rawIndex: string, rawId: string): Promise<PullReviewWire> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    return (await this.wires(target, place, [review]))[0];
  }

  /** GET …/reviews/{id}/comments: the review's line comments, oldest first. */
  async comments(target: RepositoryTarget, rawIndex: string, rawId: string): Promise<PullReviewCommentWire[]> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    const comments = (await this.store.commentsOf([review.id])).filter((comment) => !comment.invalidated);
    return this.commentWires(target, place, review, comments);
  }

  async comment(target: RepositoryTarget, rawIndex: string, rawId: string, rawCommentId: string): Promise<PullReviewCommentWire> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    const comment = await this.commentOf(review, rawCommentId);
    return (await this.commentWires(target, place, review, [comment]))[0];
  }

  // Giving reviews.

  /**
   * POST …/reviews, whose route admitted signed-in readers on a repository that takes writes: the line comments go
   * into the caller's pending review, which is then given with `event`.
   */
  async create(target: RepositoryTarget, rawIndex: string, option: CreatePullReviewOptions): Promise<PullReviewWire> {
    const place = await this.place(target, rawIndex);
    const comments = lineComments(option.comments);
    const type = this.typeFor(target, place.row, option.event ?? '', option.body ?? '', comments.length > 0);
    const head = await this.headOf(target, place.row);
    const commitId = option.commit_id || head;
    const review = await this.submit(target, place, type, option.body ?? '', commitId, head, comments);
    await this.retryScheduledMerge(target, review);
    return (await this.wires(target, place, [review]))[0];
  }

  /**
   * POST …/reviews/{id}, whose route admitted signed-in readers on a repository that takes writes: gives a pending
   * review with `event` (422 unless it is pending and the event is not).
   */
  async submitPending(target: RepositoryTarget, rawIndex: string, rawId: string, option: SubmitPullReviewOptions): Promise<PullReviewWire> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    if (review.type !== ReviewType.Pending) throw new InvalidInputError('only a pending review can be submitted');
    // Another's pending review (a site administrator sees it) is not the caller's to give.
    if (review.reviewerId !== target.viewer.user!.id) throw new NotFoundError();
    const hasComments = (await this.store.commentsOf([review.id])).length > 0;
    const type = this.typeFor(target, place.row, option.event ?? '', option.body ?? '', hasComments);
    if (type === ReviewType.Pending) throw new InvalidInputError('review stay pending');
    const head = await this.headOf(target, place.row);
    const given = await this.submit(target, place, type, option.body ?? '', head, head, []);
    await this.retryScheduledMerge(target, given);
    return (await this.wires(target, place, [given]))[0];
  }

  /** POST …/reviews/{id}/comments, whose route admitted signed-in readers on a repository that takes writes: one more line comment. */
  async addComment(target: RepositoryTarget, rawIndex: string, rawId: string, option: CreatePullReviewCommentOptions): Promise<PullReviewCommentWire> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    const [line] = lineComments([option]);
    const head = await this.headOf(target, place.row);
    const now = this.clock.nowUnix();
    const facts = await this.lineFacts(target, place.row, review, line, review.commitId || head, head);
    const comment = await this.transactions.run((tx) =>
      this.store.insertComment(tx, {
        reviewId: review.id,
        issueId: review.issueId,
        repoId: target.repo.id,
        posterId: target.viewer.user!.id,
        path: line.path,
        line: line.line,
        body: line.body,
        ...facts,
        resolverId: 0,
        invalidated: false,
        createdUnix: now,
        updatedUnix: now,
      }),
    );
    return (await this.commentWires(target, place, review, [comment]))[0];
  }

  /** DELETE …/reviews/{id}/comments/{comment}: after the lookups (404), its poster or a writer of pull requests (403). */
  async deleteComment(target: RepositoryTarget, rawIndex: string, rawId: string, rawCommentId: string): Promise<void> {
    const { review } = await this.single(target, rawIndex, rawId);
    const comment = await this.commentOf(review, rawCommentId);
    await assertMayDeleteReviewComment(target, comment);
    await this.transactions.run((tx) => this.store.deleteComment(tx, comment.id));
  }

  /** DELETE …/reviews/{id}: after the lookup (404), the reviewer or a site administrator (403); requests are not deleted here. */
  async delete(target: RepositoryTarget, rawIndex: string, rawId: string): Promise<void> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    assertMayDeleteReview(target, review);
    if (review.type === ReviewType.Request) throw new InvalidInputError('review request can not be deleted using this method');
    await this.transactions.run(async (tx) => {
      await this.store.delete(tx, review.id);
      await this.timeline.reviewDeleted(tx, place.row.issue, review.id);
      if (review.official) await this.restoreOfficial(tx, place.row.issue.id, review.reviewerId);
    });
  }

  /**
   * POST …/dismissals and …/undismissals, whose routes admit repository administrators (REVIEW_DISMISSAL_REFUSED):
   * approvals and rejections of open pull requests.
   */
  async dismiss(target: RepositoryTarget, rawIndex: string, rawId: string, dismissed: boolean, option: DismissPullReviewOptions): Promise<PullReviewWire> {
    const { place, review } = await this.single(target, rawIndex, rawId);
    if (review.type !== ReviewType.Approve && review.type !== ReviewType.Reject) {
      throw new ForbiddenError("not need to dismiss this review because it's type is not Approve or change request");
    }
    if (place.row.issue.isClosed || place.row.pull.hasMerged) throw new ForbiddenError("can't dismiss a review associated to a closed or merged PR");
    await this.transactions.run(async (tx) => {
      await this.store.update(tx, review.id, { dismissed, updatedUnix: this.clock.nowUnix() });
      if (dismissed) await this.timeline.reviewDismissed(tx, place.row.issue, target.viewer.user!.id, review.id, option.message ?? '');
      if (dismissed && option.priors) {
        for (const prior of await this.store.undismissedOf(tx, review.issueId, review.reviewerId)) await this.store.update(tx, prior.id, { dismissed: true });
      }
    });
    const stored = (await this.store.byId(review.id)) ?? review;
    await this.retryScheduledMerge(target, stored, true);
    return (await this.wires(target, place, [stored]))[0];
  }

  deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    return this.store.deleteOfRepository(tx, repoId);
  }

  deleteOpenOfUser(tx: EntityManager, userId: number): Promise<void> {
    return this.store.deleteOpenOfUser(tx, userId);
  }

  /** The requests addressed to a deleted team. */
  deleteRequestsOfTeam(tx: EntityManager, teamId: number): Promise<void> {
    return this.store.deleteOfTeam(tx, teamId);
  }

  // The rules.

  /** Forgejo's preparePullReviewType: the review type of `event`, or 422 with its texts. */
  private typeFor(target: RepositoryTarget, row: PullRow, event: string, body: string, hasComments: boolean): ReviewType {
    const type = reviewTypeOf(event);
    const isPoster = row.issue.posterId === target.viewer.user?.id;
    const hasBody = body.trim() !== '';
    if (type === ReviewType.Approve && isPoster) throw new InvalidInputError('approve your own pull is not allowed');
    if (type === ReviewType.Reject && isPoster) throw new InvalidInputError('reject your own pull is not allowed');
    if (type === ReviewType.Comment && !hasBody && !hasComments) throw new InvalidInputError(`review event ${event} requires a body or a comment`);
    if ((type === ReviewType.Reject || type === ReviewType.Pending) && !hasBody) throw new InvalidInputError(`review event ${event} requires a body`);
    return type;
  }

  /**
   * Gives (or keeps pending) the caller's review: the pending one with the new line comments, or a new one; an
   * approval or rejection is official by the access policy, stale when made on a head whose diff has changed since.
   */
  private async submit(
    target: RepositoryTarget,
    place: ReviewPlace,
    type: ReviewType,
    body: string,
    commitId: string,
    head: string,
    comments: LineComment[],
  ): Promise<ReviewEntity> {
    const doer = target.viewer.user!;
    const issueId = place.row.issue.id;
    const decisive = type === ReviewType.Approve || type === ReviewType.Reject;
    let stale = false;
    if (decisive && commitId !== head) {
      const dir = this.content.open(target).dir;
      stale = await this.content.withGit(async () => {
        const reviewed = await this.refs.resolveCommit(dir, commitId);
        const base = await this.refs.resolveCommit(dir, `refs/heads/${place.row.pull.baseBranch}`);
        const mergeBase = reviewed && base ? await this.compare.mergeBase(dir, base, head) : null;
        return mergeBase ? this.compare.contentChanged(dir, head, reviewed!, mergeBase) : true;
      });
    }
    const official = decisive ? await this.protections.isOfficialReviewer(target.repo, target.owner, doer, place.row.pull.baseBranch) : false;
    const pending = await this.store.pendingOf(issueId, doer.id);
    const lineFacts: { commitSha: string; patch: string }[] = [];
    for (const comment of comments) lineFacts.push(await this.lineFacts(target, place.row, pending, comment, pending?.commitId || commitId, head));
    const now = this.clock.nowUnix();
    const review = await this.transactions.run(async (tx) => {
      if (decisive) await this.store.clearOfficial(tx, issueId, doer.id);
      await this.store.supersede(tx, issueId, doer.id, type);
      // A member's approval or rejection answers the requests of their teams (an organisation's repository only).
      if (decisive && target.owner.isOrganization) {
        for (const request of await this.store.teamRequests(issueId, tx)) {
          if (await this.teams.isMember(request.reviewerTeamId, doer.id, tx)) await this.store.delete(tx, request.id);
        }
      }
      let current = await this.store.pendingOf(issueId, doer.id, tx);
      if (current) {
        await this.store.update(tx, current.id, { type, content: body, official, commitId, stale, updatedUnix: now });
        current = { ...current, type, content: body, official, commitId, stale, updatedUnix: now };
      } else {
        current = await this.store.insert(tx, {
          type,
          reviewerId: doer.id,
          reviewerTeamId: 0,
          issueId,
          repoId: target.repo.id,
          content: body,
          official,
          commitId,
          stale,
          dismissed: false,
          createdUnix: now,
          updatedUnix: now,
        });
      }
      for (const [n, comment] of comments.entries()) {
        await this.store.insertComment(tx, {
          reviewId: current.id,
          issueId,
          repoId: target.repo.id,
          posterId: doer.id,
          path: comment.path,
          line: comment.line,
          body: comment.body,
          ...lineFacts[n],
          resolverId: 0,
          invalidated: false,
          createdUnix: now,
          updatedUnix: now,
        });
      }
      if (type !== ReviewType.Pending) await this.timeline.reviewed(tx, place.row.issue, doer.id, current.id, body);
      const hookEvent = REVIEW_HOOK_EVENTS[type];
      if (hookEvent) {
        await this.pulls.recordEvent(tx, target, place.row.issue, {
          action: 'reviewed',
          hookEvent,
          requestedReviewer: toUserWire(doer, AuthContext.anonymous(), this.siteUrls),
          review: { type: hookEvent, content: body },
        });
      }
      return current;
    });
    this.events.committed();
    return review;
  }

  /**
   * Where a line comment sits: the commit that last changed the line (git blame at the reviewed head, else the
   * head), and the diff around it from the merge base to the head. A reply on a line of the same review shares
   * the first comment's.
   */
  private async lineFacts(
    target: RepositoryTarget,
    row: PullRow,
    review: ReviewEntity | null,
    comment: LineComment,
    reviewed: string,
    head: string,
  ): Promise<{ commitSha: string; patch: string }> {
    if (review) {
      const first = await this.store.firstOnLine(review.id, comment.path, comment.line);
      if (first) return { commitSha: first.commitSha, patch: first.patch };
    }
    const dir = this.content.open(target).dir;
    return this.content.withGit(async () => {
      // Only a full commit id is handed to git as a revision (the reviewed commit may be whatever the caller sent).
      const at = /^[0-9a-f]{40}([0-9a-f]{24})?$/.test(reviewed) ? reviewed : head;
      const blamed = comment.line > 0 ? await this.compare.blameLine(dir, at, comment.path, comment.line) : null;
      const base = row.pull.mergeBase || row.pull.baseCommitId;
      // A path git cannot take as a pathspec (empty, say) has no diff to cut.
      const diff = base && comment.path !== '' ? await this.compare.fileDiff(dir, base, head, comment.path).catch(() => '') : '';
      return { commitSha: blamed ?? head, patch: cutDiffAroundLine(diff, Math.abs(comment.line), comment.line < 0) };
    });
  }

  /**
   * An approval (or a dismissal) may be what a merge scheduled for when the checks pass was waiting for: the
   * scheduled merges of that head are tried again now, as Forgejo's; one still refused stays scheduled.
   */
  private async retryScheduledMerge(target: RepositoryTarget, review: ReviewEntity, dismissal = false): Promise<void> {
    if (!dismissal && review.type !== ReviewType.Approve) return;
    if (!review.commitId) return;
    await this.merges.onStatus(target.repo.id, review.commitId).catch(() => undefined);
  }

  /** A reviewer's latest approval, rejection or request is official again once a later official one goes. */
  async restoreOfficial(tx: EntityManager, issueId: number, reviewerId: number): Promise<void> {
    const latest = await this.store.latestOf(issueId, reviewerId, tx);
    if (latest) await this.store.update(tx, latest.id, { official: true });
  }

  // Lookups.

  /** The pull request of the route (whose door answered 404 unless the caller reads pull requests and code). */
  async place(target: RepositoryTarget, rawIndex: string): Promise<ReviewPlace> {
    const row = await this.pulls.find(target, rawIndex);
    const pullHtml = `${repositoryUrls(target.owner, target.repo, this.siteUrls).html}/pulls/${row.issue.repoIndex}`;
    return { row, pullHtml };
  }

  /** Forgejo's prepareSingleReview: the review of this pull request; another's pending one is 404 but to admins. */
  private async single(target: RepositoryTarget, rawIndex: string, rawId: string): Promise<{ place: ReviewPlace; review: ReviewEntity }> {
    const place = await this.place(target, rawIndex);
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0;
    const review = id > 0 ? await this.store.byId(id) : null;
    if (!review || review.issueId !== place.row.issue.id || !this.mayRead(target.viewer, review)) throw new NotFoundError();
    return { place, review };
  }

  private async commentOf(review: ReviewEntity, rawCommentId: string): Promise<ReviewCommentEntity> {
    const id = /^\d{1,15}$/.test(rawCommentId) ? Number(rawCommentId) : 0;
    const comment = id > 0 ? await this.store.commentById(id) : null;
    if (!comment || comment.reviewId !== review.id) throw new NotFoundError();
    return comment;
  }

  private mayRead(viewer: AuthContext, review: ReviewEntity): boolean {
    return review.type !== ReviewType.Pending || viewer.isAdmin || viewer.is(review.reviewerId);
  }

  /** The head the pull request has now (`refs/pull/{n}/head`), else its stored head. */
  private async headOf(target: RepositoryTarget, row: PullRow): Promise<string> {
    const dir = this.content.open(target).dir;
    const found = await this.content.withGit(() => this.refs.resolveCommit(dir, pullHeadRef(row.issue.repoIndex)));
    return found ?? row.pull.headCommitId;
  }

  /** The JSON of reviews of one pull request, for the target's viewer. */
  async wires(target: RepositoryTarget, place: ReviewPlace, reviews: ReviewEntity[]): Promise<PullReviewWire[]> {
    const users = new Map((await this.users.byIds([...new Set(reviews.map((review) => review.reviewerId))])).map((user) => [user.id, user]));
    // A request of a team shows the team (without its organisation, as Forgejo's PullReview) and no user.
    const teams = new Map((await this.teams.byIds(reviews.map((review) => review.reviewerTeamId))).map((team) => [team.id, team]));
    const counts = await this.store.commentCounts(reviews.map((review) => review.id));
    const entries = await this.timeline.reviewEntryIds(reviews.map((review) => review.id));
    return reviews.map((review) =>
      toPullReviewWire(
        review,
        {
          reviewer: review.reviewerTeamId !== 0 ? null : (users.get(review.reviewerId) ?? systemUser(GHOST_USER_ID)!),
          team: review.reviewerTeamId !== 0 && teams.has(review.reviewerTeamId) ? toTeamWire(teams.get(review.reviewerTeamId)!) : null,
          commentsCount: counts.get(review.id) ?? 0,
          pullHtml: place.pullHtml,
          entryId: entries.get(review.id) ?? 0,
        },
        target.viewer,
        this.siteUrls,
      ),
    );
  }

  private async commentWires(
    target: RepositoryTarget,
    place: ReviewPlace,
    review: ReviewEntity,
    comments: ReviewCommentEntity[],
  ): Promise<PullReviewCommentWire[]> {
    const ids = [...new Set(comments.flatMap((comment) => [comment.posterId, comment.resolverId]).filter((id) => id > 0))];
    const users = new Map((await this.users.byIds(ids)).map((user) => [user.id, user]));
    const ghost = systemUser(GHOST_USER_ID)!;
    return comments.map((comment) =>
      toPullReviewCommentWire(
        comment,
        review,
        { poster: users.get(comment.posterId) ?? ghost, resolver: comment.resolverId > 0 ? (users.get(comment.resolverId) ?? null) : null },
        place.pullHtml,
        target.viewer,
        this.siteUrls,
      ),
    );
  }
}

/** The line comments of a request body, checked: a path, and a line on one side (old wins, as Forgejo). */
function lineComments(raw: unknown): LineComment[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) throw new InvalidInputError('[Comments]: must be an array');
  return raw.map((item: unknown) => {
    if (typeof item !== 'object' || item === null) throw new InvalidInputError('[Comments]: must be an array of objects');
    const comment = item as Record<string, unknown>;
    const text = (name: string) => {
      const value = comment[name];
      if (value === undefined || value === null) return '';
      if (typeof value !== 'string') throw new InvalidInputError(`[${name}]: must be a string`);
      return value;
    };
    const number = (name: string) => {
      const value = comment[name];
      if (value === undefined || value === null) return 0;
      if (typeof value !== 'number' || !Number.isInteger(value) || Math.abs(value) > 2 ** 31 - 1) throw new InvalidInputError(`[${name}]: must be an integer`);
      return value;
    };
    if (text('path').length > 1024) throw new InvalidInputError('[Path]: MaxSize');
    if (text('path').includes('\0')) throw new InvalidInputError('[Path]: no NUL');
    const oldLine = number('old_position');
    const newLine = number('new_position');
    return { path: text('path'), body: text('body'), line: oldLine > 0 ? -oldLine : newLine };
  });
}
