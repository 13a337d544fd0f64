import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, MoreThan, Not } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { ReviewCommentEntity, ReviewEntity, ReviewType } from './review.entity';

/** The only door to the review and review_comment tables. */
@Injectable()
export class ReviewStore {
  constructor(private readonly dataSource: DataSource) {}

  private reviews(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(ReviewEntity);
  }

  private comments(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(ReviewCommentEntity);
  }

  /** The reviews and requests of a pull request, oldest first, paged. */
  async list(issueId: number, page: PageQuery): Promise<Page<ReviewEntity>> {
    const [items, total] = await this.reviews().findAndCount({
      where: { issueId },
      order: { createdUnix: 'ASC', id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  /** Every review and request of the pull requests' issues, oldest first. */
  ofIssues(issueIds: number[], tx?: EntityManager): Promise<ReviewEntity[]> {
    if (issueIds.length === 0) return Promise.resolve([]);
    return this.reviews(tx).find({ where: { issueId: In(issueIds) }, order: { id: 'ASC' } });
  }

  byId(id: number, tx?: EntityManager): Promise<ReviewEntity | null> {
    return this.reviews(tx).findOneBy({ id });
  }

  /** The caller's pending review of the pull request, if any. */
  pendingOf(issueId: number, reviewerId: number, tx?: EntityManager): Promise<ReviewEntity | null> {
    return this.reviews(tx).findOne({ where: { issueId, reviewerId, type: ReviewType.Pending, reviewerTeamId: 0 }, order: { id: 'ASC' } });
  }

  /** The latest approval, rejection or request of a user on the pull request. */
  latestOf(issueId: number, reviewerId: number, tx?: EntityManager): Promise<ReviewEntity | null> {
    return this.reviews(tx).findOne({
      where: { issueId, reviewerId, reviewerTeamId: 0, type: In([ReviewType.Approve, ReviewType.Reject, ReviewType.Request]) },
      order: { id: 'DESC' },
    });
  }

  /** The latest request of a team on the pull request. */
  teamRequestOf(issueId: number, teamId: number, tx?: EntityManager): Promise<ReviewEntity | null> {
    return this.reviews(tx).findOne({ where: { issueId, reviewerTeamId: teamId }, order: { id: 'DESC' } });
  }

  insert(tx: EntityManager, review: Omit<ReviewEntity, 'id'>): Promise<ReviewEntity> {
    return this.reviews(tx).save(this.reviews(tx).create(review));
  }

  async update(tx: EntityManager, id: number, changes: Partial<ReviewEntity>): Promise<void> {
    await this.reviews(tx).update({ id }, changes);
  }

  /** A given review replaces the user's open request; an approval or rejection dismisses their earlier ones. */
  async supersede(tx: EntityManager, issueId: number, reviewerId: number, type: ReviewType): Promise<void> {
    if (type !== ReviewType.Pending) await this.reviews(tx).delete({ issueId, reviewerId, reviewerTeamId: 0, type: ReviewType.Request });
    if (type === ReviewType.Approve || type === ReviewType.Reject) {
      await this.reviews(tx).update({ issueId, reviewerId, reviewerTeamId: 0, type: In([ReviewType.Approve, ReviewType.Reject]) }, { dismissed: true });
    }
  }

  /** Only the user's newest review counts as official: the earlier ones lose it. */
  async clearOfficial(tx: EntityManager, issueId: number, reviewerId: number): Promise<void> {
    await this.reviews(tx).update({ issueId, reviewerId, reviewerTeamId: 0 }, { official: false });
  }

  async clearTeamOfficial(tx: EntityManager, issueId: number, teamId: number): Promise<void> {
    await this.reviews(tx).update({ issueId, reviewerTeamId: teamId }, { official: false });
  }

  /** Team requests of the pull request (a member's approval or rejection answers them). */
  teamRequests(issueId: number, tx?: EntityManager): Promise<ReviewEntity[]> {
    return this.reviews(tx).find({ where: { issueId, reviewerTeamId: MoreThan(0), type: ReviewType.Request } });
  }

  /** The head moved and changed the diff: every review is stale but those made on the new head. */
  async markStale(tx: EntityManager, issueId: number, newHead: string): Promise<void> {
    await this.reviews(tx).update({ issueId, commitId: Not(newHead) }, { stale: true });
    await this.reviews(tx).update({ issueId, commitId: newHead }, { stale: false });
  }

  /** Reviews made on the head the pull request now has are not stale. */
  async markFresh(tx: EntityManager, issueId: number, head: string): Promise<void> {
    await this.reviews(tx).update({ issueId, commitId: head }, { stale: false });
  }

  /** The undismissed approvals of a pull request. */
  approvals(issueId: number, tx?: EntityManager): Promise<ReviewEntity[]> {
    return this.reviews(tx).find({ where: { issueId, type: ReviewType.Approve, dismissed: false } });
  }

  /** The user's undismissed approvals and rejections of the pull request. */
  undismissedOf(tx: EntityManager, issueId: number, reviewerId: number): Promise<ReviewEntity[]> {
    return this.reviews(tx).find({ where: { issueId, reviewerId, dismissed: false, type: In([ReviewType.Approve, ReviewType.Reject]) } });
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.comments(tx).delete({ reviewId: id });
    await this.reviews(tx).delete({ id });
  }

  // Line comments.

  /** The line comments of reviews, oldest first. */
  commentsOf(reviewIds: number[], tx?: EntityManager): Promise<ReviewCommentEntity[]> {
    if (reviewIds.length === 0) return Promise.resolve([]);
    return this.comments(tx).find({ where: { reviewId: In(reviewIds) }, order: { id: 'ASC' } });
  }

  /** The line comments of a pull request not yet outdated. */
  currentCommentsOfIssue(issueId: number): Promise<ReviewCommentEntity[]> {
    return this.comments().find({ where: { issueId, invalidated: false }, order: { id: 'ASC' } });
  }

  async markOutdated(tx: EntityManager, ids: number[]): Promise<void> {
    if (ids.length > 0) await this.comments(tx).update({ id: In(ids) }, { invalidated: true });
  }

  commentById(id: number, tx?: EntityManager): Promise<ReviewCommentEntity | null> {
    return this.comments(tx).findOneBy({ id });
  }

  /** The first comment of the review on that line, whose commit and patch a reply shares. */
  firstOnLine(reviewId: number, path: string, line: number, tx?: EntityManager): Promise<ReviewCommentEntity | null> {
    return this.comments(tx).findOne({ where: { reviewId, path, line }, order: { id: 'ASC' } });
  }

  insertComment(tx: EntityManager, comment: Omit<ReviewCommentEntity, 'id'>): Promise<ReviewCommentEntity> {
    return this.comments(tx).save(this.comments(tx).create(comment));
  }

  async deleteComment(tx: EntityManager, id: number): Promise<void> {
    await this.comments(tx).delete({ id });
  }

  /** How many line comments each review has. */
  async commentCounts(reviewIds: number[]): Promise<Map<number, number>> {
    const counts = new Map<number, number>();
    if (reviewIds.length === 0) return counts;
    const rows: { reviewId: number | string; n: number | string }[] = await this.comments()
      .createQueryBuilder('comment')
      .select('comment.reviewId', 'reviewId')
      .addSelect('COUNT(*)', 'n')
      .where({ reviewId: In(reviewIds) })
      .groupBy('comment.reviewId')
      .getRawMany();
    for (const row of rows) counts.set(Number(row.reviewId), Number(row.n));
    return counts;
  }

  // Cleanup.

  async deleteOfIssue(tx: EntityManager, issueId: number): Promise<void> {
    await this.comments(tx).delete({ issueId });
    await this.reviews(tx).delete({ issueId });
  }

  async deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.comments(tx).delete({ repoId });
    await this.reviews(tx).delete({ repoId });
  }

  /** A deleted user's pending reviews and the requests addressed to them; reviews they gave stay (as a ghost's). */
  async deleteOpenOfUser(tx: EntityManager, userId: number): Promise<void> {
    const open = await this.reviews(tx).find({
      where: { reviewerId: userId, reviewerTeamId: 0, type: In([ReviewType.Pending, ReviewType.Request]) },
      select: { id: true },
    });
    if (open.length === 0) return;
    const ids = open.map((review) => review.id);
    await this.comments(tx).delete({ reviewId: In(ids) });
    await this.reviews(tx).delete({ id: In(ids) });
  }

  /** Requests addressed to a deleted team. */
  async deleteOfTeam(tx: EntityManager, teamId: number): Promise<void> {
    await this.reviews(tx).delete({ reviewerTeamId: teamId });
  }
}
