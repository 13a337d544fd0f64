import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { assertMayChangeReaction } from '../access/repository-rules';
import { ForbiddenError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { SiteUrls } from '../common/site-urls';
import { Clock, formatTime } from '../common/time';
import { Transactions } from '../database/transactions';
import { GHOST_USER_ID, systemUser } from '../users/system-users';
import { UserAccounts } from '../users/user-accounts';
import { toUserWire } from '../users/user.mapper';
import { CommentStore } from './comment.store';
import type { IssueEntity } from './issue.entity';
import { IssueStore } from './issue.store';
import { IssuesService } from './issues.service';
import type { ReactionEntity } from './reaction.entity';
import type { EditReactionOption } from './reaction.options';
import { ReactionStore } from './reaction.store';
import type { ReactionWire } from './reaction.wire';

/** The reactions Forgejo allows by default (its `[ui] REACTIONS`); any other is a 403. */
export const ALLOWED_REACTIONS: readonly string[] = ['+1', '-1', 'laugh', 'hooray', 'confused', 'heart', 'rocket', 'eyes'];

/** What a POST answered: the reaction, and whether it was new (201) or already given (200). */
export interface ReactionResult {
  reaction: ReactionWire;
  created: boolean;
}

/**
 * Reactions to issues and to their comments: read by readers of the issues; given and taken back by any
 * signed-in reader, except on a locked issue, where only writers may (403), as Forgejo.
 */
@Injectable()
export class ReactionsService {
  constructor(
    private readonly reactions: ReactionStore,
    private readonly issueService: IssuesService,
    private readonly issues: IssueStore,
    private readonly comments: CommentStore,
    private readonly users: UserAccounts,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
  ) {}

  async listOfIssue(target: RepositoryTarget, rawIndex: string, page: PageQuery): Promise<Page<ReactionWire>> {
    this.issueService.assertTracker(target);
    const issue = await this.issueService.find(target, rawIndex);
    const found = await this.reactions.list(issue.id, 0, page);
    return { items: await this.wires(target, found.items), total: found.total };
  }

  async listOfComment(target: RepositoryTarget, rawId: string): Promise<ReactionWire[]> {
    this.issueService.assertTracker(target);
    const { issue, commentId } = await this.comment(target, rawId);
    return this.wires(target, (await this.reactions.list(issue.id, commentId, null)).items);
  }

  /** POST: the reaction, new or already given. */
  async add(target: RepositoryTarget, place: { index: string } | { commentId: string }, option: EditReactionOption): Promise<ReactionResult> {
    const { issue, commentId, content } = await this.prepare(target, place, option);
    if (!ALLOWED_REACTIONS.includes(content)) throw new ForbiddenError(`'${content}' is not an allowed reaction`);
    const userId = target.viewer.user!.id;
    const now = this.clock.nowUnix();
    const created = await this.transactions.run((tx) => this.reactions.add(tx, { type: content, issueId: issue.id, commentId, userId, createdUnix: now }));
    const row = await this.reactions.find(issue.id, commentId, userId, content);
    if (!row) throw new NotFoundError();
    const [reaction] = await this.wires(target, [row]);
    return { reaction, created };
  }

  /** DELETE: 200 whether or not the reaction was given, as Forgejo. */
  async remove(target: RepositoryTarget, place: { index: string } | { commentId: string }, option: EditReactionOption): Promise<void> {
    const { issue, commentId, content } = await this.prepare(target, place, option);
    await this.transactions.run((tx) => this.reactions.remove(tx, issue.id, commentId, target.viewer.user!.id, content));
  }

  private async prepare(target: RepositoryTarget, place: { index: string } | { commentId: string }, option: EditReactionOption) {
    // The route admitted signed-in readers of the tracker; the item's own rule follows its lookup.
    const { issue, commentId } =
      'index' in place ? { issue: await this.issueService.find(target, place.index), commentId: 0 } : await this.comment(target, place.commentId);
    await assertMayChangeReaction(target, issue);
    return { issue, commentId, content: option.content ?? '' };
  }

  /** A comment of this repository with its issue (404 otherwise). */
  private async comment(target: RepositoryTarget, rawId: string): Promise<{ issue: IssueEntity; commentId: number }> {
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0;
    const comment = id > 0 ? await this.comments.findById(id) : null;
    if (!comment || comment.repoId !== target.repo.id) throw new NotFoundError();
    const issue = await this.issues.findById(comment.issueId);
    if (!issue || issue.repoId !== target.repo.id) throw new NotFoundError();
    return { issue, commentId: comment.id };
  }

  private async wires(target: RepositoryTarget, rows: ReactionEntity[]): Promise<ReactionWire[]> {
    const users = new Map((await this.users.byIds([...new Set(rows.map((row) => row.userId))].filter((id) => id > 0))).map((user) => [user.id, user]));
    return rows.map((row) => ({
      user: toUserWire(users.get(row.userId) ?? systemUser(row.userId) ?? systemUser(GHOST_USER_ID)!, target.viewer, this.siteUrls, { seesRepository: true }),
      content: row.type,
      created_at: formatTime(row.createdUnix),
    }));
  }
}
