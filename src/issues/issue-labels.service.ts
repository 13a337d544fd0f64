import { Injectable } from '@nestjs/common';
import type { RepositoryTarget } from '../access/repository-policy';
import { assertMayChangeIssueLabels } from '../access/repository-rules';
import { BadRequestError, InvalidInputError, NotFoundError } from '../common/errors';
import type { EntityManager } from 'typeorm';
import { Clock } from '../common/time';
import { RepositoryEvents } from '../events/repository-events';
import { Transactions } from '../database/transactions';
import { LabelLookup } from '../labels/label-lookup';
import type { LabelEntity } from '../labels/label.entity';
import type { LabelWire } from '../labels/label.wire';
import type { IssueEntity } from './issue.entity';
import { IssueStore } from './issue.store';
import { addingLabels, replacingLabels, usableOn } from './issue-labels';
import { IssueTimeline } from './issue-timeline';
import type { IssueLabelsOption } from './issue-labels.options';
import { IssuesService } from './issues.service';

/** An issue's labels in the order Forgejo reads them (by name), which is the order a clear takes them off in. */
function byName(labels: LabelEntity[]): LabelEntity[] {
  return [...labels].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
}

/** Labels in one request beyond this are refused (422). */
const MAX_LABELS_PER_REQUEST = 50;

/**
 * The labels of one issue: read by readers; added, replaced, removed and cleared by writers of the issues unit
 * (their routes admit signed-in readers of the tracker; the writer's rule, 403, follows the issue's lookup; an
 * archived repository's labels stay writable, as Forgejo). Labels are named by id or by
 * name (the repository's own); labels of other repositories are left out; an exclusive label takes off the
 * others of its scope.
 */
@Injectable()
export class IssueLabelsService {
  constructor(
    private readonly issueService: IssuesService,
    private readonly issues: IssueStore,
    private readonly labels: LabelLookup,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly events: RepositoryEvents,
    private readonly timeline: IssueTimeline,
  ) {}

  async list(target: RepositoryTarget, rawIndex: string): Promise<LabelWire[]> {
    this.issueService.assertTracker(target);
    return this.current(target, await this.issueService.find(target, rawIndex));
  }

  /**
   * POST (add) or PUT (replace): the issue's labels afterwards. As Forgejo, the issue (404) and the labels
   * named (400, 422) come before the writer's rule (403).
   */
  async change(target: RepositoryTarget, rawIndex: string, option: IssueLabelsOption, replace: boolean): Promise<LabelWire[]> {
    const issue = await this.issueService.find(target, rawIndex);
    const named = await this.named(target, option.labels ?? []);
    await assertMayChangeIssueLabels(target);
    await this.transactions.run(async (tx) => {
      const existing = byName(await this.labels.byIds((await this.issues.labelIdsOf([issue.id], tx)).get(issue.id) ?? [], tx));
      const result = replace ? replacingLabels(existing, named) : addingLabels(existing, named);
      await this.issues.setLabels(
        tx,
        issue.id,
        result.labels.map((label) => label.id),
      );
      await this.timeline.labelsChanged(tx, issue, target.viewer.user!.id, result.steps);
      await this.touchAndReport(tx, target, issue, 'label_updated');
    });
    this.events.committed();
    return this.current(target, issue);
  }

  /** DELETE …/labels/{id}: a label that does not exist is 422; one not on the issue is no error. */
  async remove(target: RepositoryTarget, rawIndex: string, rawId: string): Promise<void> {
    const issue = await this.issueService.find(target, rawIndex);
    await assertMayChangeIssueLabels(target);
    const id = /^\d{1,15}$/.test(rawId) ? Number(rawId) : 0;
    const [label] = id > 0 ? await this.labels.byIds([id]) : [];
    if (!label) throw new InvalidInputError(`label does not exist [label_id: ${id}]`);
    await this.transactions.run(async (tx) => {
      const ids = (await this.issues.labelIdsOf([issue.id], tx)).get(issue.id) ?? [];
      if (!ids.includes(label.id)) return;
      await this.issues.setLabels(
        tx,
        issue.id,
        ids.filter((other) => other !== label.id),
      );
      await this.timeline.labelsChanged(tx, issue, target.viewer.user!.id, [{ label, added: false }]);
      await this.touchAndReport(tx, target, issue, 'label_updated');
    });
    this.events.committed();
  }

  async clear(target: RepositoryTarget, rawIndex: string): Promise<void> {
    const issue = await this.issueService.find(target, rawIndex);
    await assertMayChangeIssueLabels(target);
    await this.transactions.run(async (tx) => {
      const existing = byName(await this.labels.byIds((await this.issues.labelIdsOf([issue.id], tx)).get(issue.id) ?? [], tx));
      await this.issues.setLabels(tx, issue.id, []);
      await this.timeline.labelsChanged(
        tx,
        issue,
        target.viewer.user!.id,
        existing.map((label) => ({ label, added: false })),
      );
      await this.touchAndReport(tx, target, issue, 'label_cleared');
    });
    this.events.committed();
  }

  /** The issue's update time moves, and hooks hear of the change (`label_updated`, or `label_cleared`), as Forgejo. */
  private async touchAndReport(tx: EntityManager, target: RepositoryTarget, issue: IssueEntity, action: 'label_updated' | 'label_cleared'): Promise<void> {
    await this.issues.update(tx, issue.id, { updatedUnix: this.clock.nowUnix() });
    const current = await this.issues.findById(issue.id, tx);
    if (current) await this.issueService.record(tx, target, current, { action });
  }

  /** Ids or names (never both: 400, as Forgejo), resolved to labels usable on this repository's issues. */
  private async named(target: RepositoryTarget, raw: unknown[]): Promise<LabelEntity[]> {
    if (raw.length > MAX_LABELS_PER_REQUEST) throw new InvalidInputError(`at most ${MAX_LABELS_PER_REQUEST} labels`);
    const ids = raw.filter((item): item is number => typeof item === 'number').map((item) => Math.trunc(item));
    const names = raw.filter((item): item is string => typeof item === 'string');
    if (ids.length > 0 && names.length > 0) throw new BadRequestError('labels should be an array of strings or integers');
    const found = names.length > 0 ? await this.labels.byNames(target.repo.id, 0, names) : await this.labels.byIds([...new Set(ids)]);
    const order = names.length > 0 ? names.map((name) => found.find((label) => label.name === name)) : ids.map((id) => found.find((label) => label.id === id));
    return order.filter((label): label is LabelEntity => !!label && usableOn(label, target.repo.id, target.owner.id));
  }

  private async current(target: RepositoryTarget, issue: IssueEntity): Promise<LabelWire[]> {
    const ids = (await this.issues.labelIdsOf([issue.id])).get(issue.id) ?? [];
    if (!(await this.issues.findById(issue.id))) throw new NotFoundError();
    return (await this.labels.byIds(ids)).map((label) => this.issueService.labelWire(label, target.repo, target.owner));
  }
}
