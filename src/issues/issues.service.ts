import { hasIssueTracker } from '../access/repository-route-rule';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { AuthContext } from '../auth/auth-context';
import { ConflictError, InvalidInputError, NotFoundError, PreconditionFailedError } from '../common/errors';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import { AuditService } from '../audit/audit.service';
import type { RepositoryTarget } from '../access/repository-policy';
import { assertMayEditIssue, assertMaySetDeadline, maySetIssueMetadata } from '../access/repository-rules';
import { LabelLookup } from '../labels/label-lookup';
import { MilestoneLookup } from '../milestones/milestone-lookup';
import type { MilestoneEntity } from '../milestones/milestone.entity';
import { toMilestoneWire } from '../milestones/milestone.mapper';
import type { LabelEntity } from '../labels/label.entity';
import { toLabelWire } from '../labels/label.mapper';
import type { LabelWire } from '../labels/label.wire';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { IssueEntity } from './issue.entity';
import { replacingLabels, usableOn } from './issue-labels';
import { IssueTimeline } from './issue-timeline';
import { toIssueWire } from './issue.mapper';
import { IssueStore } from './issue.store';
import { endOfDay } from './issue-times';
import type { IssueDeadlineWire, IssueWire, PullRequestMetaWire } from './issue.wire';
import { indexEntries } from './issue-words';
import { assertBodySize, cutToBytes, MAX_NAMES, MAX_TITLE_BYTES } from './issue-limits';
import { IssueParticipants } from './issue-participants';
import type { CreateIssueOption, EditIssueOption } from './issue.options';
import { formatTime } from '../common/time';

// One cohesive thing, kept whole though long: the life of an issue shared with pull requests (open, change,
// delete, their timeline, counters and events) and its JSON, which the pulls module asks through this one service.

/** The raw query of an issue list, as the route received it. */
export type IssueQuery = Record<string, unknown>;

/** An issue change, as events report it. */
export interface IssueChange {
  action:
    | 'opened'
    | 'edited'
    | 'closed'
    | 'reopened'
    | 'deleted'
    | 'assigned'
    | 'unassigned'
    | 'label_updated'
    | 'label_cleared'
    | 'milestoned'
    | 'demilestoned'
    | 'synchronized';
  changes?: { title?: { from: string }; body?: { from: string } };
}

/** The repository counters of issues, or of pull requests. */
function counters(isPull: boolean): { all: 'numIssues' | 'numPulls'; closed: 'numClosedIssues' | 'numClosedPulls' } {
  return isPull ? { all: 'numPulls', closed: 'numClosedPulls' } : { all: 'numIssues', closed: 'numClosedIssues' };
}

/**
 * What the pull requests module adds to issues that are pull requests (it registers itself, as it builds on
 * this module): the `pull_request` part of their JSON, and their events, which are `pull_request` events.
 */
export interface PullRequestHooks {
  meta(issues: IssueEntity[], tx?: EntityManager): Promise<Map<number, PullRequestMetaWire>>;
  record(tx: EntityManager, target: RepositoryTarget, issue: IssueEntity, change: IssueChange): Promise<void>;
  /** The issue of a pull request is being deleted, in the deleting transaction. */
  deleted(tx: EntityManager, issue: IssueEntity): Promise<void>;
}

/** Work a pull request adds to the transaction that opens or edits its issue. */
export interface IssueWriteExtra {
  /** Runs inside the transaction, after the issue row is written. */
  within?(tx: EntityManager, issue: IssueEntity): Promise<void>;
  /** The unit whose writers may set writer-only fields (`repo.pulls` for pull requests). */
  unit?: 'repo.issues' | 'repo.pulls';
}

/**
 * The issues of repositories: create, read, edit, close and reopen, delete, due dates (lists and the search
 * are IssueListsService's). Readers of the issues unit read and open issues; the poster or a writer edits;
 * writers alone set labels, milestone, assignees and due date (silently dropped for others, as Forgejo);
 * repository admins delete. `open_issues_count` moves in the transaction that opens, closes or deletes.
 */
@Injectable()
export class IssuesService {
  constructor(
    private readonly issues: IssueStore,
    private readonly timeline: IssueTimeline,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
    private readonly users: UserAccounts,
    private readonly labels: LabelLookup,
    private readonly milestones: MilestoneLookup,
    private readonly repositories: RepositoryDirectory,
    private readonly events: RepositoryEvents,
    private readonly audit: AuditService,
    private readonly participants: IssueParticipants,
  ) {}

  private pulls: PullRequestHooks | null = null;

  /** The pull requests module registers what it adds to issues that are pull requests. */
  usePullRequests(hooks: PullRequestHooks): void {
    this.pulls = hooks;
  }

  /** The built-in tracker must be on (an external tracker or none: every issue route is 404, as Forgejo). */
  assertTracker(target: RepositoryTarget): void {
    if (!hasIssueTracker(target.repo)) throw new NotFoundError();
  }

  async get(target: RepositoryTarget, rawIndex: string): Promise<IssueWire> {
    this.assertTracker(target);
    return this.one(target, await this.find(target, rawIndex));
  }

  /** POST …/issues: the route admitted signed-in readers of a tracker on a repository that takes writes. */
  async create(target: RepositoryTarget, option: CreateIssueOption): Promise<IssueWire> {
    const issue = await this.open(target, option, false);
    return this.one(target, issue);
  }

  /**
   * Opens an issue, or the issue of a pull request (`isPull`, whose row `extra.within` adds in the same
   * transaction): the number, the word index, labels, assignees, counters and the `opened` event together.
   * The caller has checked sign-in and the repository's state.
   */
  async open(target: RepositoryTarget, option: CreateIssueOption, isPull: boolean, extra: IssueWriteExtra = {}): Promise<IssueEntity> {
    const title = cutToBytes(option.title.trim(), MAX_TITLE_BYTES);
    if (title === '') throw new InvalidInputError('[Title]: Required');
    const body = option.body ?? '';
    assertBodySize(body);
    const writer = await maySetIssueMetadata(target, extra.unit ?? 'repo.issues');
    let deadline = 0;
    let labels: LabelEntity[] = [];
    let assigneeIds: number[] = [];
    let milestone: MilestoneEntity | null = null;
    if (writer) {
      if (option.due_date) deadline = this.dueDate(option.due_date);
      // A milestone that is not the repository's is dropped silently, as Forgejo.
      if (option.milestone) milestone = await this.milestones.inRepository(target.repo.id, option.milestone);
      assigneeIds = await this.participants.assignable(target, [...(option.assignee ? [option.assignee] : []), ...(option.assignees ?? [])]);
      labels = await this.usableLabels(target, option.labels ?? []);
    }
    const mentioned = await this.participants.mentionable(target, body);
    const repoId = target.repo.id;
    if (!(await this.issues.hasCounter(repoId))) await this.transactions.run((tx) => this.issues.ensureCounter(tx, repoId));
    const now = this.clock.nowUnix();
    const issue = await this.transactions.run(async (tx) => {
      const repoIndex = await this.issues.nextIndex(tx, repoId);
      if (repoIndex === undefined) throw new ConflictError('the repository is being deleted');
      const row = await this.issues.insert(tx, {
        repoId,
        repoIndex,
        posterId: target.viewer.user!.id,
        title,
        body,
        ref: option.ref ?? '',
        milestoneId: milestone?.id ?? 0,
        isPull,
        isClosed: option.closed === true,
        isLocked: false,
        numComments: 0,
        pinOrder: 0,
        deadlineUnix: deadline,
        createdUnix: now,
        updatedUnix: now,
        closedUnix: option.closed === true ? now : 0,
      });
      await this.issues.replaceWords(tx, row, indexEntries(title, body));
      await this.issues.addMentions(tx, row, mentioned);
      const labelled = replacingLabels([], labels);
      await this.issues.setLabels(
        tx,
        row.id,
        labelled.labels.map((label) => label.id),
      );
      await this.issues.setAssignees(tx, row.id, assigneeIds);
      const counter = counters(isPull);
      if (!(await this.repositories.addToCounter(tx, repoId, counter.all, 1))) throw new NotFoundError();
      if (row.isClosed) await this.repositories.addToCounter(tx, repoId, counter.closed, 1);
      await extra.within?.(tx, row);
      await this.milestones.moveCounts(tx, row.milestoneId, 1, row.isClosed ? 1 : 0);
      // The timeline as Forgejo writes it for a new issue: milestone, labels by id, assignees, then the close.
      const doerId = target.viewer.user!.id;
      await this.timeline.milestoneChanged(tx, row, doerId, 0, row.milestoneId);
      await this.timeline.labelsChanged(tx, row, doerId, labelled.steps);
      await this.timeline.assigneesChanged(tx, row, doerId, [], assigneeIds);
      if (row.isClosed) await this.timeline.stateChanged(tx, row, doerId, true);
      await this.record(tx, target, row, { action: 'opened' });
      for (const _ of assigneeIds) await this.record(tx, target, row, { action: 'assigned' });
      if (row.isClosed) await this.record(tx, target, row, { action: 'closed' });
      return row;
    });
    this.events.committed();
    return issue;
  }

  /**
   * PATCH: 201 with the issue, as Forgejo. The route admitted signed-in readers of the tracker; after the body
   * and the lookup (404), the poster or a writer (403); writer-only fields dropped for the poster.
   */
  async edit(target: RepositoryTarget, rawIndex: string, option: EditIssueOption): Promise<IssueWire> {
    const issue = await this.find(target, rawIndex);
    const { writer } = await assertMayEditIssue(target, issue);
    return this.one(target, await this.change(target, issue, option, writer));
  }

  /**
   * The changes of an edit, checked by the caller (sign-in, poster or writer): title, body, ref, due date,
   * assignees and state in one transaction with their timeline entries, counters and events; `extra.within`
   * adds a pull request's own changes to it.
   */
  async change(target: RepositoryTarget, issue: IssueEntity, option: EditIssueOption, writer: boolean, extra: IssueWriteExtra = {}): Promise<IssueEntity> {
    const changes: Partial<IssueEntity> = {};
    const events: IssueChange[] = [];
    if (option.title) {
      const title = cutToBytes(option.title.trim(), MAX_TITLE_BYTES);
      if (title !== '' && title !== issue.title) {
        changes.title = title;
        events.push({ action: 'edited', changes: { title: { from: issue.title } } });
      }
    }
    if (option.body !== undefined && option.body !== null && option.body !== issue.body) {
      assertBodySize(option.body);
      changes.body = option.body;
      events.push({ action: 'edited', changes: { body: { from: issue.body } } });
    }
    const mentioned = changes.body !== undefined ? await this.participants.mentionable(target, changes.body) : [];
    if (option.ref !== undefined && option.ref !== null) changes.ref = option.ref;
    if (writer && ((option.due_date !== undefined && option.due_date !== null) || (option.unset_due_date !== undefined && option.unset_due_date !== null))) {
      if (option.unset_due_date) changes.deadlineUnix = 0;
      else if (!option.due_date) throw new InvalidInputError('The due_date cannot be empty');
      else changes.deadlineUnix = this.dueDate(option.due_date);
    }
    let assigneeIds: number[] | undefined;
    if (writer && ((option.assignees !== undefined && option.assignees !== null) || (option.assignee !== undefined && option.assignee !== null))) {
      // An edit names `assignee` after `assignees`, as Forgejo.
      assigneeIds = await this.participants.assignable(target, [...(option.assignees ?? []), ...(option.assignee ? [option.assignee] : [])]);
    }
    let milestoneId: number | undefined;
    if (writer && option.milestone !== undefined && option.milestone !== null && option.milestone !== issue.milestoneId) {
      const milestone = option.milestone > 0 ? await this.milestones.inRepository(target.repo.id, option.milestone) : null;
      if (option.milestone > 0 && !milestone) throw new InvalidInputError(`milestone does not exist [id: ${option.milestone}]`);
      milestoneId = milestone?.id ?? 0;
    }
    let closing: boolean | undefined;
    if (option.state !== undefined && option.state !== null) {
      const closed = option.state === 'closed';
      if (closed !== issue.isClosed) closing = closed;
    }
    const now = this.clock.nowUnix();
    const doerId = target.viewer.user!.id;
    const updated = await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current) throw new NotFoundError();
      const write: Partial<IssueEntity> = { ...changes, updatedUnix: now };
      if (milestoneId !== undefined && milestoneId !== current.milestoneId) {
        // Read again in the transaction: a milestone deleted meanwhile is not put on the issue.
        if (milestoneId > 0 && !(await this.milestones.inRepository(current.repoId, milestoneId, tx)))
          throw new InvalidInputError(`milestone does not exist [id: ${milestoneId}]`);
        write.milestoneId = milestoneId;
      } else milestoneId = undefined;
      if (closing !== undefined && closing !== current.isClosed) {
        // An issue waits for what it depends on: closing it while a dependency is open is refused, as Forgejo.
        if (closing && target.repo.enableIssueDependencies && (await this.issues.openDependencyCount(current.id, tx)) > 0) {
          throw new PreconditionFailedError('cannot close this issue because it still has open dependencies');
        }
        write.isClosed = closing;
        write.closedUnix = closing ? now : 0;
        await this.repositories.addToCounter(tx, current.repoId, counters(current.isPull).closed, closing ? 1 : -1);
      } else closing = undefined;
      await this.issues.update(tx, current.id, write);
      const next = { ...current, ...write };
      // The milestones' counts follow the issue: off the old one as it was, onto the new one as it is now.
      if (next.milestoneId !== current.milestoneId || next.isClosed !== current.isClosed) {
        await this.milestones.moveCounts(tx, current.milestoneId, -1, current.isClosed ? -1 : 0);
        await this.milestones.moveCounts(tx, next.milestoneId, 1, next.isClosed ? 1 : 0);
      }
      const before = assigneeIds !== undefined ? ((await this.issues.assigneeIdsOf([current.id], tx)).get(current.id) ?? []) : [];
      // Assignees who stay keep their place; the new ones follow in the order given.
      const after = assigneeIds !== undefined ? [...before.filter((id) => assigneeIds!.includes(id)), ...assigneeIds.filter((id) => !before.includes(id))] : [];
      if (write.title !== undefined || write.body !== undefined) await this.issues.replaceWords(tx, next, indexEntries(next.title, next.body));
      await this.issues.addMentions(tx, next, mentioned);
      if (assigneeIds !== undefined) await this.issues.setAssignees(tx, current.id, after);
      // The timeline in Forgejo's order of an edit: title, ref, due date, assignees, milestone, (a pull
      // request's labels), state.
      await this.timeline.titleChanged(tx, next, doerId, current.title, next.title);
      await this.timeline.refChanged(tx, next, doerId, current.ref, next.ref);
      await this.timeline.deadlineChanged(tx, next, doerId, current.deadlineUnix, next.deadlineUnix);
      if (assigneeIds !== undefined) await this.timeline.assigneesChanged(tx, next, doerId, before, after);
      await this.timeline.milestoneChanged(tx, next, doerId, current.milestoneId, next.milestoneId);
      await extra.within?.(tx, next);
      if (closing !== undefined) await this.timeline.stateChanged(tx, next, doerId, closing);
      for (const event of events) await this.record(tx, target, next, event);
      // One event per user taken off, then per user put on, as Forgejo.
      if (assigneeIds !== undefined) {
        for (const id of before) if (!after.includes(id)) await this.record(tx, target, next, { action: 'unassigned' });
        for (const id of after) if (!before.includes(id)) await this.record(tx, target, next, { action: 'assigned' });
      }
      if (milestoneId !== undefined) await this.record(tx, target, next, { action: milestoneId > 0 ? 'milestoned' : 'demilestoned' });
      if (closing !== undefined) await this.record(tx, target, next, { action: closing ? 'closed' : 'reopened' });
      return next;
    });
    this.events.committed();
    return updated;
  }

  /** DELETE, whose route admits repository admins only (403): 404 for a number not in use. */
  async delete(target: RepositoryTarget, rawIndex: string): Promise<IssueEntity> {
    const issue = await this.find(target, rawIndex);
    await this.transactions.run(async (tx) => {
      // The row as it is now: a concurrent close or milestone change decides which counters move.
      const current = (await this.issues.findById(issue.id, tx)) ?? issue;
      // A pinned issue leaves its place: the pins after it move up, as Forgejo unpins before deleting.
      if (current.pinOrder > 0) await this.issues.shiftPins(tx, current.repoId, current.isPull, current.pinOrder + 1, -1);
      await this.record(tx, target, current, { action: 'deleted' });
      if (!(await this.issues.delete(tx, issue.id))) throw new NotFoundError();
      if (issue.isPull) await this.pulls?.deleted(tx, issue);
      await this.repositories.addToCounter(tx, issue.repoId, counters(issue.isPull).all, -1);
      if (current.isClosed) await this.repositories.addToCounter(tx, issue.repoId, counters(issue.isPull).closed, -1);
      await this.milestones.moveCounts(tx, current.milestoneId, -1, current.isClosed ? -1 : 0);
      await this.audit.record(tx, {
        action: 'issue.delete',
        target: { type: 'issue', id: issue.id, name: `${target.owner.name}/${target.repo.name}#${issue.repoIndex}` },
        detail: { title: issue.title },
      });
    });
    this.events.committed();
    return issue;
  }

  /**
   * POST …/deadline, whose route admitted signed-in readers of the tracker: after the body and the lookup
   * (404), writers only (403 `Not repo writer`); a null date removes it.
   */
  async setDeadline(target: RepositoryTarget, rawIndex: string, option: { due_date?: string | null }): Promise<IssueDeadlineWire> {
    const issue = await this.find(target, rawIndex);
    await assertMaySetDeadline(target, issue);
    const deadline = option.due_date ? this.dueDate(option.due_date) : 0;
    await this.transactions.run(async (tx) => {
      const current = await this.issues.findById(issue.id, tx);
      if (!current) throw new NotFoundError();
      if (current.deadlineUnix === deadline) return;
      await this.issues.update(tx, issue.id, { deadlineUnix: deadline, updatedUnix: this.clock.nowUnix() });
      await this.timeline.deadlineChanged(tx, current, target.viewer.user!.id, current.deadlineUnix, deadline);
    });
    return { due_date: deadline ? formatTime(deadline) : null };
  }

  /** The issue numbered `rawIndex` of the target (404 otherwise). */
  async find(target: RepositoryTarget, rawIndex: string, tx?: EntityManager): Promise<IssueEntity> {
    const index = /^\d{1,15}$/.test(rawIndex) ? Number(rawIndex) : 0;
    const issue = index > 0 ? await this.issues.findByIndex(target.repo.id, index, tx) : null;
    if (!issue) throw new NotFoundError();
    return issue;
  }

  async one(target: RepositoryTarget, issue: IssueEntity): Promise<IssueWire> {
    const [wire] = await this.wires([issue], target.viewer, new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]));
    return wire;
  }

  /** The JSON of a page of issues: posters, assignees and labels read once for the page. */
  async wires(
    page: IssueEntity[],
    viewer: AuthContext,
    repos: Map<number, { repo: RepositoryEntity; owner: UserEntity }>,
    tx?: EntityManager,
    options: { pullMeta?: boolean } = {},
  ): Promise<IssueWire[]> {
    if (page.length === 0) return [];
    const ids = page.map((issue) => issue.id);
    const labelIds = await this.issues.labelIdsOf(ids, tx);
    const assigneeIds = await this.issues.assigneeIdsOf(ids, tx);
    const allLabels = await this.labels.byIds([...new Set([...labelIds.values()].flat())], tx);
    const milestones = new Map(
      (
        await this.milestones.byIds(
          page.map((issue) => issue.milestoneId),
          tx,
        )
      ).map((milestone) => [milestone.id, milestone]),
    );
    const userIds = new Set<number>(page.map((issue) => issue.posterId));
    for (const list of assigneeIds.values()) for (const id of list) userIds.add(id);
    const users = new Map(
      (
        await this.users.byIds(
          [...userIds].filter((id) => id > 0),
          tx,
        )
      ).map((user) => [user.id, user]),
    );
    // The pull requests module builds its own JSON from these and needs no `pull_request` part.
    const pulls =
      options.pullMeta !== false && page.some((issue) => issue.isPull) && this.pulls
        ? await this.pulls.meta(
            page.filter((issue) => issue.isPull),
            tx,
          )
        : new Map<number, PullRequestMetaWire>();
    // Each label's JSON once per repository of the page (an organisation label's URL is the organisation's).
    const labelWires = new Map<string, LabelWire>();
    const labelOrder = new Map(allLabels.map((label, at) => [label.id, at]));
    return page.map((issue) => {
      const place = repos.get(issue.repoId)!;
      const labels = (labelIds.get(issue.id) ?? [])
        .filter((id) => labelOrder.has(id))
        .sort((a, b) => labelOrder.get(a)! - labelOrder.get(b)!)
        .map((id) => {
          const key = `${issue.repoId}:${id}`;
          let wire = labelWires.get(key);
          if (!wire) {
            wire = this.labelWire(allLabels[labelOrder.get(id)!], place.repo, place.owner);
            labelWires.set(key, wire);
          }
          return wire;
        });
      const milestone = milestones.get(issue.milestoneId);
      return toIssueWire(
        issue,
        {
          ...place,
          users,
          labels,
          assigneeIds: assigneeIds.get(issue.id) ?? [],
          pull: pulls.get(issue.id) ?? null,
          milestone: milestone ? toMilestoneWire(milestone) : null,
        },
        viewer,
        this.siteUrls,
      );
    });
  }

  /**
   * Replaces an issue's labels inside the caller's transaction (a later label of an exclusive scope wins), with
   * the timeline entries of the labels put on and taken off by `doerId`.
   */
  async replaceLabels(tx: EntityManager, issue: IssueEntity, labels: LabelEntity[], doerId: number): Promise<void> {
    const current = await this.labels.byIds((await this.issues.labelIdsOf([issue.id], tx)).get(issue.id) ?? [], tx);
    const replaced = replacingLabels(current, labels);
    await this.issues.setLabels(
      tx,
      issue.id,
      replaced.labels.map((label) => label.id),
    );
    await this.timeline.labelsChanged(tx, issue, doerId, replaced.steps);
  }

  labelWire(label: LabelEntity, repo: RepositoryEntity, owner: UserEntity): LabelWire {
    const url =
      label.orgId > 0
        ? `${this.siteUrls.apiBase}/orgs/${encodeURIComponent(owner.name)}/labels/${label.id}`
        : `${repositoryUrls(owner, repo, this.siteUrls).api}/labels/${label.id}`;
    return toLabelWire(label, url);
  }

  /** Labels by id that may go on the repository's issues; others are left out, as Forgejo. */
  async usableLabels(target: RepositoryTarget, ids: number[]): Promise<LabelEntity[]> {
    if (ids.length > MAX_NAMES) throw new InvalidInputError(`at most ${MAX_NAMES} labels`);
    const found = await this.labels.byIds([...new Set(ids)]);
    const byId = new Map(found.map((label) => [label.id, label]));
    return ids.map((id) => byId.get(id)).filter((label): label is LabelEntity => !!label && usableOn(label, target.repo.id, target.owner.id));
  }

  private dueDate(value: string): number {
    const seconds = endOfDay(value);
    if (seconds === undefined) throw new InvalidInputError('[Deadline]: must be a date-time');
    return seconds;
  }

  /**
   * Reports a change to the event door inside its transaction (the webhooks' outbox keeps it exactly when the
   * change commits); the issue is shown as to an anonymous viewer.
   */
  async record(tx: EntityManager, target: RepositoryTarget, issue: IssueEntity, change: IssueChange): Promise<void> {
    if (!(await this.events.listensTo(target.repo, tx))) return;
    if (issue.isPull && this.pulls) return this.pulls.record(tx, target, issue, change);
    const repos = new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]);
    const [wire] = await this.wires([issue], AuthContext.anonymous(), repos, tx);
    await this.events.record(tx, {
      kind: 'issue',
      action: change.action,
      repo: target.repo,
      senderId: target.viewer.user!.id,
      issue: wire,
      changes: change.changes,
    });
  }
}
