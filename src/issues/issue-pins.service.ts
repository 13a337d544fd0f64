import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { BadRequestError, NotFoundError } from '../common/errors';
import { IssueConfig } from '../config/slices';
import { Transactions } from '../database/transactions';
import { IssueStore } from './issue.store';
import type { IssueWire, NewIssuePinsAllowedWire } from './issue.wire';
import { IssuesService } from './issues.service';
import { IssueTimeline } from './issue-timeline';

/**
 * Pinned issues: repository admins pin, unpin and move them (403 otherwise); pins are numbered 1…n per
 * repository, issues and pull requests apart, and stay dense as they come and go, as Forgejo keeps them. A pin
 * and an unpin are timeline entries (`pin`, `unpin`); a move is not.
 */
@Injectable()
export class IssuePinsService {
  constructor(
    private readonly issueService: IssuesService,
    private readonly issues: IssueStore,
    private readonly transactions: Transactions,
    private readonly timeline: IssueTimeline,
    private readonly config: IssueConfig,
  ) {}

  async pinned(target: RepositoryTarget): Promise<IssueWire[]> {
    this.issueService.assertTracker(target);
    const pinned = await this.issues.pinned(target.repo.id, false);
    return this.issueService.wires(pinned, target.viewer, new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]));
  }

  /** Whether one more issue, and one more pull request, may be pinned (fewer than ISSUE_MAX_PINNED now). */
  async newPinAllowed(target: RepositoryTarget): Promise<NewIssuePinsAllowedWire> {
    const [issues, pulls] = [await this.issues.pinnedCount(target.repo.id, false), await this.issues.pinnedCount(target.repo.id, true)];
    return { issues: issues < this.config.maxPinnedIssues, pull_requests: pulls < this.config.maxPinnedIssues };
  }

  /** Pinning a pinned issue changes nothing; one beyond ISSUE_MAX_PINNED is 400, as Forgejo. */
  async pin(target: RepositoryTarget, rawIndex: string): Promise<void> {
    const issue = await this.issueService.find(target, rawIndex);
    await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current) throw new NotFoundError();
      if (current.pinOrder > 0) return;
      const max = await this.issues.maxPinOrder(tx, current.repoId, current.isPull);
      if (max >= this.config.maxPinnedIssues) throw new BadRequestError('the max number of pinned issues has been readched');
      await this.issues.update(tx, current.id, { pinOrder: max + 1 });
      await this.timeline.pinChanged(tx, current, target.viewer.user!.id, true);
    });
  }

  async unpin(target: RepositoryTarget, rawIndex: string): Promise<void> {
    const issue = await this.issueService.find(target, rawIndex);
    await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current || current.pinOrder === 0) return;
      await this.issues.update(tx, current.id, { pinOrder: 0 });
      await this.issues.shiftPins(tx, current.repoId, current.isPull, current.pinOrder + 1, -1);
      await this.timeline.pinChanged(tx, current, target.viewer.user!.id, false);
    });
  }

  /** PATCH …/pin/{position}: to that place (1 first; beyond the last, last); an unpinned issue stays as it is. */
  async move(target: RepositoryTarget, rawIndex: string, rawPosition: string): Promise<void> {
    const issue = await this.issueService.find(target, rawIndex);
    const position = /^-?\d{1,9}$/.test(rawPosition) ? Number(rawPosition) : NaN;
    await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current || current.pinOrder === 0) return;
      if (!(position >= 1)) throw new BadRequestError("The Position can't be lower than 1");
      await this.issues.update(tx, current.id, { pinOrder: 0 });
      await this.issues.shiftPins(tx, current.repoId, current.isPull, current.pinOrder + 1, -1);
      const last = await this.issues.maxPinOrder(tx, current.repoId, current.isPull);
      const place = Math.min(position, last + 1);
      await this.issues.shiftPins(tx, current.repoId, current.isPull, place, 1);
      await this.issues.update(tx, current.id, { pinOrder: place });
    });
  }
}
