import * as fs from 'node:fs';
import * as path from 'node:path';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { faultPoint } from '../common/fault-points';
import { QuotaExceededError } from '../common/errors';
import { WebhookConfig } from '../config/slices';
import { Clock } from '../common/time';
import { Leases } from '../database/leases';
import { LifecycleEvents } from '../events/lifecycle-events';
import { BranchMove, RefChange, RepositoryEvents } from '../events/repository-events';
import { GitPushCommits } from '../git/git-push-commits';
import { GitChanges } from '../git/git-changes';
import { BranchProtections } from '../access/branch-protection-policy';
import { MaintainerPushes } from '../access/maintainer-pushes';
import { Transactions } from '../database/transactions';
import { GitRepositories } from '../git/git-repositories';
import { CommitGraphs } from '../git/commit-graphs';
import { GitTreeBudget } from '../git/git-tree-budget';
import { isZeroId, PushAllowance, PushContext, PushRefused, RefUpdate } from '../git/push-hooks';
import { RepositoryPaths } from '../git/repository-paths';
import { UserAccounts } from '../users/user-accounts';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import type { RepositoryEntity } from './repository.entity';
import { RepositoryStore } from './repository.store';

const BRANCH_PREFIX = 'refs/heads/';

/** Rows a caller writes in the transaction that records its ref change (RepositoryPushes.recordRefChanges). */
export type RefChangeRecord = (tx: EntityManager, repo: RepositoryEntity) => Promise<void>;

/**
 * What a push means for a repository's record (docs/git-transports.md), the same for HTTP and SSH: the rules of
 * pre-receive (quota, the default branch, `refs/for/`) and the effects of post-receive (first branch, size,
 * update time), done before `git push` returns.
 */
@Injectable()
export class RepositoryPushes {
  private readonly logger = new Logger('RepositoryPushes');
  /** The quota reserved by each push in flight (gone with the push's context). */
  private readonly reservations = new WeakMap<PushContext, QuotaReservation>();
  /** Pushes whose owner had nothing left when they started (other writes in flight count). */
  private readonly refusedAtStart = new WeakSet<PushContext>();

  constructor(
    private readonly repositories: RepositoryStore,
    private readonly users: UserAccounts,
    private readonly git: GitRepositories,
    private readonly commitGraphs: CommitGraphs,
    private readonly paths: RepositoryPaths,
    private readonly transactions: Transactions,
    private readonly leases: Leases,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly events: RepositoryEvents,
    private readonly pushCommits: GitPushCommits,
    private readonly treeBudget: GitTreeBudget,
    private readonly webhookConfig: WebhookConfig,
    private readonly protections: BranchProtections,
    private readonly changes: GitChanges,
    private readonly bus: LifecycleEvents,
    private readonly maintainers: MaintainerPushes,
  ) {}

  /**
   * What the owner has left of `size:repos:all` is reserved for the push before its pack is read, and is the
   * largest pack receive-pack accepts; other pushes, uploads and migrations of the owner see it as used until
   * post-receive records the new size (in the same commit) or the push ends. An owner already over quota, or
   * whose writes nothing limits, gets no cap: pre-receive decides as before.
   */
  async allowance(push: PushContext): Promise<PushAllowance | null> {
    const repo = await this.repositories.findById(push.repositoryId);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    if (!repo || !owner) return null;
    let reservation: QuotaReservation;
    try {
      reservation = await this.quota.reserve(
        { id: owner.id, name: owner.name },
        'size:repos:all',
        repo.isPrivate ? 'reposPrivate' : 'reposPublic',
        'remaining',
      );
    } catch (error) {
      if (!(error instanceof QuotaExceededError)) throw error;
      // Over quota, counting what other writes have in flight: pre-receive refuses anything but deletions.
      this.refusedAtStart.add(push);
      return null;
    }
    if (reservation.amount === Infinity) return null;
    this.reservations.set(push, reservation);
    return { maxInputBytes: reservation.amount, release: () => reservation.release() };
  }

  /** Refuses the whole push on the first failing rule, in the order of docs/git-transports.md, "Pushes". */
  async preReceive(push: PushContext, updates: RefUpdate[], objects: Record<string, string> = {}): Promise<void> {
    faultPoint('push.received');
    const repo = await this.repository(push);
    if (push.asMaintainer) await this.assertMaintainerRefs(push, repo, updates);
    // Deletions-only pushes always pass; otherwise the owner must be allowed `size:repos:all` (which a push
    // holding a reservation was, when it was made).
    const writes = updates.some((update) => !isZeroId(update.newId));
    if (writes && this.refusedAtStart.has(push)) throw new PushRefused('Quota exceeded');
    if (
      !this.reservations.has(push) &&
      !(await this.quota.canAcceptPush(
        repo.ownerId,
        updates.map((update) => update.newId),
      ))
    ) {
      throw new PushRefused('Quota exceeded');
    }
    const defaultRef = `${BRANCH_PREFIX}${repo.defaultBranch}`;
    if (updates.some((update) => update.ref === defaultRef && isZeroId(update.newId))) {
      throw new PushRefused(`branch ${repo.defaultBranch} is the default branch and cannot be deleted`);
    }
    if (updates.some((update) => update.ref.startsWith('refs/for/'))) {
      throw new PushRefused('refs/for/ (AGit pull requests) is not supported');
    }
    // The server alone writes the heads of pull requests.
    if (updates.some((update) => update.ref.startsWith('refs/pull/'))) {
      throw new PushRefused('refs/pull/ is reserved for pull requests and cannot be pushed');
    }
    await this.assertBranchProtection(push, repo, updates, objects);
    await this.assertTreesWithinBudget(repo, updates, objects);
  }

  /**
   * A push let in as a maintainer's of a pull request's head branch (the pusher does not write the code): each
   * ref, judged now by the access policy's rule, must be such a branch, moved (not created or deleted); the first
   * that is not refuses the whole push, before any other rule.
   */
  private async assertMaintainerRefs(push: PushContext, repo: RepositoryEntity, updates: RefUpdate[]): Promise<void> {
    const [pusher, owner] = await Promise.all([this.users.byId(push.pusherId), this.users.byId(repo.ownerId)]);
    if (!pusher || !owner) throw new PushRefused('Cannot find repository');
    const refusal = await this.maintainers.refusal(pusher, { repo, owner }, updates);
    if (refusal !== null) throw new PushRefused(refusal);
  }

  /**
   * Each branch the push moves, as the access policy judges it (its rules read once, in one query); the first
   * refusal declines the whole push. Tags and other refs are free. Git is asked only what a governing rule needs:
   * `rev-list --max-count=1 <old> ^<new>` for a force push, `diff-tree -r --name-only` for file patterns.
   */
  private async assertBranchProtection(push: PushContext, repo: RepositoryEntity, updates: RefUpdate[], objects: Record<string, string>): Promise<void> {
    const branches = updates.filter((update) => update.ref.startsWith(BRANCH_PREFIX));
    if (branches.length === 0) return;
    const rules = await this.protections.rulesOf(repo.id);
    if (rules.length === 0) return;
    const owner = await this.users.byId(repo.ownerId);
    if (!owner) throw new PushRefused('Cannot find repository');
    const dir = this.paths.repository(owner.name, repo.name);
    const env = quarantineEnvironment(dir, objects);
    const pusher = push.deployKey
      ? this.protections.deployKeyPusher
      : this.protections.pusherById(push.pusherId, repo, async () => ({ user: await this.users.byId(push.pusherId), owner }));
    for (const update of branches) {
      const branch = update.ref.slice(BRANCH_PREFIX.length);
      const facts = this.changes.reading(dir, update.oldId, update.newId, env);
      const refusal = await this.protections.judge(repo.id, { door: 'git', branch, pusher, facts, pullRequestMerge: push.pullRequestId !== undefined }, rules);
      if (refusal !== null) throw new PushRefused(refusal);
    }
  }

  /**
   * Last, as the costliest rule: every commit the push brings (and every pushed tag or tree) must have a tree
   * that expands to at most GIT_MAX_TREE_ENTRIES paths. A few kilobytes of objects can name billions of paths,
   * which every later archive, listing or diff of them would have to walk.
   */
  private async assertTreesWithinBudget(repo: RepositoryEntity, updates: RefUpdate[], objects: Record<string, string>): Promise<void> {
    const newIds = updates.map((update) => update.newId).filter((id) => !isZeroId(id));
    if (newIds.length === 0) return;
    const owner = await this.users.byId(repo.ownerId);
    if (!owner) throw new PushRefused('Cannot find repository');
    const dir = this.paths.repository(owner.name, repo.name);
    const env = quarantineEnvironment(dir, objects);
    const over = await this.treeBudget.firstOverPushed(dir, newIds, this.treeBudget.limit, env, updates);
    if (over !== null) {
      throw new PushRefused(`tree ${over} has more than ${this.treeBudget.limit} files and directories: refusing the push (tree too large)`);
    }
  }

  /**
   * An empty repository that received a branch gets its default branch (current default, else `main`, else
   * `master`, else the first created) and HEAD; every accepted push recomputes the size and sets the update time.
   */
  async postReceive(push: PushContext, updates: RefUpdate[]): Promise<void> {
    await this.repository(push);
    await this.recordRefChanges(push.repositoryId, updates, push.pusherId, this.reservations.get(push));
  }

  /**
   * The effects of post-receive, for every ref change made on the server as well (content API writes, branch
   * and tag creation, deletions, merges): `updates` are the refs that moved, `senderId` who moved them. The
   * events of the change are recorded in the transaction that records it, so a push that was answered is never
   * lost; `alongWith` writes the caller's own rows in that same transaction (a merged pull request).
   */
  async recordRefChanges(
    repositoryId: number,
    updates: RefUpdate[],
    senderId: number,
    reservation?: QuotaReservation,
    alongWith?: RefChangeRecord,
  ): Promise<void> {
    const moves: BranchMove[] = updates
      .filter((update) => update.ref.startsWith(BRANCH_PREFIX) && !isZeroId(update.newId))
      .map((update) => ({ ref: update.ref, before: update.oldId, after: update.newId }));
    const created = moves.map((move) => move.ref.slice(BRANCH_PREFIX.length));
    // One at a time per repository, on every instance: the size is measured and stored under the lease, so the
    // last one stored is the last one measured, after every push that finished before it (concurrent pushes
    // no longer store a size taken before another's objects arrived).
    const recorded = await this.leases.run(`repository-refs:${repositoryId}`, async () => {
      const repo = await this.repositories.findById(repositoryId);
      if (!repo) return false;
      const owner = await this.users.byId(repo.ownerId);
      if (!owner) return false;
      const dir = this.paths.repository(owner.name, repo.name);
      const changes: Partial<RepositoryEntity> = {};
      if (repo.isEmpty) {
        const branch = firstBranch(repo.defaultBranch, created);
        if (branch !== undefined) {
          if (branch !== repo.defaultBranch) changes.defaultBranch = branch;
          await this.git.setHead(dir, branch);
          changes.isEmpty = false;
        }
      }
      // The commits of the push are listed for its events while the size is measured: a push to a repository
      // with hooks then waits for the longer of the two, not for both. The commit graph follows in the background,
      // once the change is recorded: written alongside, it competed with the measurement for the processor.
      const listing = updates.length > 0 && (await this.events.listensTo(repo)) ? this.refChanges(dir, updates) : Promise.resolve([]);
      listing.catch(() => undefined);
      // Numbered before the walk: should the lease lapse (a stalled instance), a measurement begun earlier
      // that commits later does not replace this one. Bookkeeping: the number need not wait for the disk (an
      // fsync of the push's path); the durable commit that stores the size below syncs it first, and a number
      // lost with the machine was stored by nothing.
      const ticket = await this.transactions.runBookkeeping((tx) => this.repositories.beginSizeMeasurement(tx, repo.id));
      const gitSize = await this.git.size(dir);
      changes.updatedUnix = this.clock.nowUnix();
      const refChanges = await listing;
      try {
        return await this.writeRefChanges(
          repo,
          changes,
          senderId,
          refChanges,
          reservation,
          ticket === undefined ? undefined : { bytes: gitSize, ticket },
          alongWith,
          moves,
        );
      } finally {
        this.commitGraphs.refreshSoon(dir);
      }
    });
    if (recorded) this.events.committed();
    if (moves.length > 0) this.events.pushCommitted();
    // The `refs.changed` subscribers hear of every recorded ref change (pushes and the server's own writes), after
    // it committed and before the push is answered; they must be quick and leave slow work to the background.
    // A failure is logged, never the push's.
    await this.bus.settle('refs.changed', { repositoryId, updates, senderId }, (error) => this.logger.warn(`after a ref change: ${(error as Error).message}`));
  }

  /**
   * One transaction for what moved a repository's refs, whoever moved them (a push, a write of the server, a
   * mirror sync): the row's `changes`, the push event of `refChanges` (none when empty), and the settling of the
   * quota the write reserved, which gives way in the same commit to the size recorded. True when an event was
   * recorded: the caller then tells the event door, once its own locks are released. `size` is a measurement
   * numbered before its walk (RepositoryStore.beginSizeMeasurement), stored unless a later one is already.
   * `alongWith` (whose rows and events count as recorded) runs last in the same transaction. `moves` are the
   * branches a person moved (none for a mirror's fetch), kept for the push's other readers.
   */
  async writeRefChanges(
    repo: RepositoryEntity,
    changes: Partial<RepositoryEntity>,
    senderId: number,
    refChanges: RefChange[],
    reservation?: QuotaReservation,
    size?: { bytes: number; ticket: number },
    alongWith?: RefChangeRecord,
    moves: BranchMove[] = [],
  ): Promise<boolean> {
    await this.transactions.run(async (tx) => {
      await this.repositories.update(tx, repo.id, changes);
      if (size) await this.repositories.storeMeasuredSize(tx, repo.id, size.bytes, size.ticket);
      const seen = size ? { ...repo, ...changes, gitSize: size.bytes } : { ...repo, ...changes };
      if (refChanges.length > 0) await this.events.record(tx, { kind: 'push', repo: seen, senderId, changes: refChanges });
      await this.events.recordPush(tx, seen, senderId, moves);
      await reservation?.settle(tx);
      await alongWith?.(tx, seen);
    });
    return refChanges.length > 0 || alongWith !== undefined;
  }

  /** The commits each branch update brought (none for deletions and tags), read before the transaction. */
  async refChanges(dir: string, updates: RefUpdate[]): Promise<RefChange[]> {
    const limit = this.webhookConfig.payloadCommitLimit;
    const result: RefChange[] = [];
    for (const update of updates) {
      const listed = update.ref.startsWith(BRANCH_PREFIX) && !isZeroId(update.newId);
      const { commits, total } = listed ? await this.pushCommits.read(dir, update.oldId, update.newId, limit) : { commits: [], total: 0 };
      result.push({ ref: update.ref, before: update.oldId, after: update.newId, commits, totalCommits: total });
    }
    return result;
  }

  private async repository(push: PushContext): Promise<RepositoryEntity> {
    const repo = await this.repositories.findById(push.repositoryId);
    // Deleted while the push ran.
    if (!repo) throw new PushRefused('Cannot find repository');
    return repo;
  }
}

/**
 * git's quarantine variables for `dir`, rebuilt from the forwarded ones: only a quarantine directory git made
 * inside this repository's objects (`tmp_objdir-incoming-*`) is used, with the repository's objects as its
 * alternate; anything else is ignored (git then sees the repository as it is).
 */
export function quarantineEnvironment(dir: string, objects: Record<string, string>): Record<string, string> {
  const quarantine = objects.GIT_QUARANTINE_PATH ?? objects.GIT_OBJECT_DIRECTORY;
  const name = quarantine ? path.basename(quarantine) : '';
  if (!/^tmp_objdir-incoming-[A-Za-z0-9_]+$/.test(name)) return {};
  const objectsDir = path.join(path.resolve(dir), 'objects');
  const inside = path.join(objectsDir, name);
  if (path.resolve(quarantine as string) !== inside || !fs.existsSync(inside)) return {};
  return { GIT_OBJECT_DIRECTORY: inside, GIT_ALTERNATE_OBJECT_DIRECTORIES: objectsDir, GIT_QUARANTINE_PATH: inside };
}

/**
 * Which branch becomes the default when a push fills an empty repository (or a mirror's first fetch): the current
 * default, `main`, `master`, then push order.
 */
export function firstBranch(currentDefault: string, created: string[]): string | undefined {
  for (const preferred of [currentDefault, 'main', 'master']) {
    if (created.includes(preferred)) return preferred;
  }
  return created[0];
}
