import { BeforeApplicationShutdown, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { GitCompare } from '../git/git-compare';
import { runInBackground } from '../git/git-client';
import { GitProcesses } from '../git/git-processes';
import { GitRefs } from '../git/git-refs';
import { PushHooks } from '../git/push-hooks';
import { RepositoryPaths } from '../git/repository-paths';
import { RepositoryDirectory } from '../repos/repository-directory';
import { UserAccounts } from '../users/user-accounts';
import { PullHeads } from './pull-heads';
import { PullRequestEntity, PullStatus } from './pull-request.entity';
import { PullRequestStore } from './pull-request.store';

/** How long an instance holds a test it took; a crashed instance's tests are taken again after it. */
const CLAIM_SECONDS = 120;
/** Pull requests read per round of the drain. */
const BATCH = 20;
/** How often the drain looks for tests nobody woke it for (a lapsed claim of a stopped instance). */
const SWEEP_MS = 60_000;
/** Tests a push asked for start this long after the last receive-pack of the instance has exited (wakeAfterPush). */
const AFTER_PUSH_MS = 100;
/** The longest a drain waits for pushes to end: a stream of overlapping pushes does not hold it back for ever. */
const AFTER_PUSH_MAX_MS = 2_000;
/** How long a merge waits for a test another drain holds (`settle`), and how often it looks. */
const SETTLE_MS = 10_000;
const SETTLE_LOOK_MS = 50;

export { pullHeadRef } from './pull-heads';

/**
 * Mergeability tests: a pull request whose status is `checking` is taken by one instance (claimed in the
 * database), tested with `merge-tree --write-tree` against its base without a work tree, and its result stored
 * only if no newer test was asked for meanwhile (then it stays `checking` and is taken again). Pushes only ask
 * (PullRequestStore.requestCheck) and wake the drain; they never wait for a test.
 */
@Injectable()
export class PullChecks implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger('PullChecks');
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private sweep: NodeJS.Timeout | null = null;
  private afterPush: NodeJS.Timeout | null = null;

  constructor(
    private readonly store: PullRequestStore,
    private readonly compare: GitCompare,
    private readonly refs: GitRefs,
    private readonly heads: PullHeads,
    private readonly processes: GitProcesses,
    private readonly paths: RepositoryPaths,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly pushHooks: PushHooks,
  ) {}

  onModuleInit(): void {
    // Tests asked for before a restart, and those a stopped instance held once their claim lapses.
    setImmediate(() => this.wake());
    this.sweep = setInterval(() => this.wake(), SWEEP_MS);
    this.sweep.unref();
  }

  /** Stops taking tests and waits for the one under way, before the database closes. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.sweep) clearInterval(this.sweep);
    if (this.afterPush) clearTimeout(this.afterPush);
    await this.idle();
  }

  /**
   * Starts the drain AFTER_PUSH_MS after the pushes running here have ended (their receive-pack exited, so the
   * push that asked for tests has been answered), or AFTER_PUSH_MAX_MS after the ask whatever runs. Begun a fixed
   * 100 ms after the ask, the tests' gits competed with the end of the push for the processor: a push to a base
   * with 200 open pull requests took 1.08 times one with none; held back until it ended, 0.97.
   */
  wakeAfterPush(): void {
    if (this.afterPush || this.stopped) return;
    this.afterPush = this.wakeIn(AFTER_PUSH_MAX_MS);
    this.pushHooks.afterPushes(this.pushesEnded);
  }

  /** One function for every ask, so that the hooks keep it once however many asks wait for the same pushes. */
  private readonly pushesEnded = (): void => {
    if (!this.afterPush) return;
    clearTimeout(this.afterPush);
    this.afterPush = this.wakeIn(AFTER_PUSH_MS);
  };

  private wakeIn(delayMs: number): NodeJS.Timeout {
    return setTimeout(() => {
      this.afterPush = null;
      this.wake();
    }, delayMs).unref();
  }

  /** Starts the drain, or has the running one look again when it ends its round. */
  wake(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    // Not the pusher's work: its git neither counts against that client nor stops with it, and yields to requests.
    this.running = runInBackground(() => this.drain())
      .catch((error: unknown) => this.logger.warn(`mergeability tests stopped: ${(error as Error).message}`))
      .finally(() => {
        this.running = null;
        if (this.again && !this.stopped) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Waits until the drain running now (if any) is done: for shutdown and tests. */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private async drain(): Promise<void> {
    for (;;) {
      this.again = false;
      const waiting = await this.store.waitingForCheck(this.clock.nowUnix(), BATCH);
      let tested = 0;
      for (const id of waiting) {
        if (this.stopped) return;
        if (await this.test(id)) tested += 1;
      }
      if (waiting.length < BATCH && !this.again) return;
      if (tested === 0 && !this.again) return;
    }
  }

  /** Takes and tests one pull request; false when another instance holds it or it needs none. */
  async test(id: number): Promise<boolean> {
    const now = this.clock.nowUnix();
    if (!(await this.transactions.runBookkeeping((tx) => this.store.claimCheck(tx, id, now, now + CLAIM_SECONDS)))) return false;
    const pull = await this.store.byId(id);
    if (!pull) return false;
    let result: Partial<PullRequestEntity>;
    try {
      result = await this.measure(pull);
    } catch (error) {
      this.logger.warn(`mergeability test of pull request ${id} failed: ${(error as Error).message}`);
      result = { status: PullStatus.Error };
    }
    // Bookkeeping: a result lost with the machine leaves the test asked for (that request was durable), and it
    // runs again after the restart; a durable commit per test would hold the event loop for a disk flush each.
    return this.transactions.runBookkeeping((tx) => this.store.storeCheck(tx, id, pull.checkVersion, result));
  }

  /**
   * Tests the pull request now when it waits for a test, or waits (up to SETTLE_MS) for the one a drain of this
   * or another instance holds to be stored: a merge asked for while a test runs is answered on its result, not
   * with "Please try again later".
   */
  async settle(id: number): Promise<void> {
    const deadline = Date.now() + SETTLE_MS;
    for (;;) {
      if (await this.test(id)) return;
      const pull = await this.store.byId(id);
      if (!pull || pull.status !== PullStatus.Checking || Date.now() >= deadline || this.stopped) return;
      await new Promise((resolve) => setTimeout(resolve, SETTLE_LOOK_MS));
    }
  }

  /** What git says about the pull request now; keeps `refs/pull/{n}/head` on the head branch. */
  private async measure(pull: PullRequestEntity): Promise<Partial<PullRequestEntity>> {
    const repo = await this.repositories.byId(pull.baseRepoId);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    if (!repo || !owner) return { status: PullStatus.Error };
    const dir = this.paths.repository(owner.name, repo.name);
    return this.processes.withSlot(async () => {
      // The head branch's tip, published to `refs/pull/{n}/head` (from a fork, through the pool) when it moved.
      const head = (await this.heads.tip({ repo, owner, dir }, pull)) ?? pull.headCommitId;
      const base = await this.refs.resolveCommit(dir, `refs/heads/${pull.baseBranch}`);
      if (!base || !head) return { status: PullStatus.Error, headCommitId: head ?? '' };
      const mergeBase = await this.compare.mergeBase(dir, base, head);
      const facts: Partial<PullRequestEntity> = { headCommitId: head, baseCommitId: base, mergeBase: mergeBase ?? '', conflictedFiles: '[]' };
      if (!mergeBase) return { ...facts, status: PullStatus.Error };
      const totals = await this.compare.totals(dir, mergeBase, head);
      facts.additions = totals.additions;
      facts.deletions = totals.deletions;
      facts.changedFiles = totals.files;
      facts.commitsAhead = await this.compare.countBetween(dir, base, head);
      facts.commitsBehind = await this.compare.countBetween(dir, head, base);
      // The head is already in the base: nothing to merge.
      if (mergeBase === head) return { ...facts, status: PullStatus.Ancestor };
      const merge = await this.compare.testMerge(dir, base, head);
      if (merge.conflicts.length > 0) return { ...facts, status: PullStatus.Conflict, conflictedFiles: JSON.stringify(merge.conflicts) };
      const baseTree = (await this.compare.treeOf(dir, base)) ?? '';
      return { ...facts, status: merge.tree === baseTree ? PullStatus.Empty : PullStatus.Mergeable };
    });
  }
}
