import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { RepositoryTarget } from '../access/repository-policy';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { parseRfc3339 } from '../issues/issue-times';
import { MilestoneEntity, NO_DEADLINE } from './milestone.entity';
import type { CreateMilestoneOption, EditMilestoneOption } from './milestone.options';
import { MilestoneStore } from './milestone.store';

/** More milestones than this on one repository are refused (422): a cap on stored rows. */
export const MAX_MILESTONES = 1000;
/** Largest description kept, in UTF-8 bytes (the portable text column's size). */
const MAX_DESCRIPTION_BYTES = 65535;

export type MilestoneDeletionListener = (tx: EntityManager, milestone: MilestoneEntity) => Promise<void>;

/** What a milestone write route answers (403) to a caller who writes neither issues nor pull requests, as Forgejo. */
export const MILESTONE_WRITE_REFUSED = 'user should have a permission to write to a repo';

/**
 * Milestones of a repository: read by whoever reads the repository; created, edited and deleted by writers of
 * its issues or pull requests (an archived repository's stay writable, as Forgejo). A milestone is named by
 * id or, failing that, by its exact title. Deleting one takes it off its issues in the same transaction.
 */
@Injectable()
export class MilestonesService {
  private readonly deletionListeners: MilestoneDeletionListener[] = [];

  constructor(
    private readonly milestones: MilestoneStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** The issue tracker takes a deleted milestone off its issues, in the deleting transaction. */
  onMilestoneDeleted(listener: MilestoneDeletionListener): void {
    this.deletionListeners.push(listener);
  }

  /** `state` open or closed narrows the list; anything else (all, or none) lists both, as Forgejo. */
  list(target: RepositoryTarget, state: string, name: string, page: PageQuery): Promise<Page<MilestoneEntity>> {
    const isClosed = state === 'closed' ? true : state === 'open' ? false : undefined;
    return this.milestones.list(target.repo.id, { isClosed, name: name.trim() || undefined }, page);
  }

  get(target: RepositoryTarget, idOrName: string): Promise<MilestoneEntity> {
    return this.find(target, idOrName);
  }

  async create(target: RepositoryTarget, option: CreateMilestoneOption): Promise<MilestoneEntity> {
    const description = option.description ?? '';
    assertDescription(description);
    const deadline = option.due_on ? dueOn(option.due_on) : NO_DEADLINE;
    const now = this.clock.nowUnix();
    const closed = option.state === 'closed';
    return this.transactions.run(async (tx) => {
      if ((await this.milestones.count(target.repo.id, tx)) >= MAX_MILESTONES) throw new InvalidInputError(`at most ${MAX_MILESTONES} milestones`);
      return this.milestones.insert(tx, {
        repoId: target.repo.id,
        name: (option.title ?? '').trim(),
        content: description,
        isClosed: closed,
        numIssues: 0,
        numClosedIssues: 0,
        deadlineUnix: deadline,
        createdUnix: now,
        updatedUnix: now,
        closedUnix: closed ? now : 0,
      });
    });
  }

  /** Absent fields stay; an empty title keeps the old one; a due date can be moved but not removed (as Forgejo). */
  async edit(target: RepositoryTarget, idOrName: string, option: EditMilestoneOption): Promise<MilestoneEntity> {
    const milestone = await this.find(target, idOrName);
    const changes: Partial<MilestoneEntity> = { updatedUnix: this.clock.nowUnix() };
    if (option.title) changes.name = option.title.trim();
    if (option.description !== undefined && option.description !== null) {
      assertDescription(option.description);
      changes.content = option.description;
    }
    if (option.due_on) changes.deadlineUnix = dueOn(option.due_on);
    if (option.state !== undefined && option.state !== null) {
      const closed = option.state === 'closed';
      changes.isClosed = closed;
      if (closed && !milestone.isClosed) changes.closedUnix = changes.updatedUnix;
    }
    return this.transactions.run(async (tx) => {
      const current = await this.milestones.findById(target.repo.id, milestone.id, tx);
      if (!current) throw new NotFoundError();
      await this.milestones.update(tx, current.id, changes);
      return { ...current, ...changes };
    });
  }

  async delete(target: RepositoryTarget, idOrName: string): Promise<void> {
    const milestone = await this.find(target, idOrName);
    await this.transactions.run(async (tx) => {
      if (!(await this.milestones.delete(tx, target.repo.id, milestone.id))) throw new NotFoundError();
      for (const listener of this.deletionListeners) await listener(tx, milestone);
    });
  }

  /** A repository is going: its milestones go in the same transaction. */
  deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    return this.milestones.deleteAllOfRepository(tx, repoId);
  }

  /** By id first, then by exact title (404 when neither names one of the repository's). */
  private async find(target: RepositoryTarget, idOrName: string): Promise<MilestoneEntity> {
    const id = /^\d{1,15}$/.test(idOrName) ? Number(idOrName) : 0;
    const milestone = (id > 0 ? await this.milestones.findById(target.repo.id, id) : null) ?? (await this.milestones.findByName(target.repo.id, idOrName));
    if (!milestone) throw new NotFoundError();
    return milestone;
  }
}

function assertDescription(description: string): void {
  if (Buffer.byteLength(description) > MAX_DESCRIPTION_BYTES) throw new InvalidInputError(`description is too long: at most ${MAX_DESCRIPTION_BYTES} bytes`);
}

/** A due date as given (milestones keep the time, unlike issues), in seconds; 422 when it is no RFC 3339 time. */
function dueOn(value: string): number {
  const seconds = parseRfc3339(value);
  if (seconds === undefined || seconds <= 0) throw new InvalidInputError('[Deadline]: must be a date-time');
  return Math.min(seconds, NO_DEADLINE);
}
