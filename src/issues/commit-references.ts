import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { commitReferenceRights } from '../access/repository-rules';
import { AuthContext } from '../auth/auth-context';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import type { BranchMove } from '../events/repository-events';
import { GitPushCommits } from '../git/git-push-commits';
import { isZeroId } from '../git/push-hooks';
import { RepositoryPaths } from '../git/repository-paths';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import { MilestoneLookup } from '../milestones/milestone-lookup';
import type { IssueEntity, IssuePushEntity } from './issue.entity';
import { IssuePushStore } from './issue-push.store';
import { findIssueReferences } from './issue-references';
import { IssueStore } from './issue.store';
import { IssueTimeline } from './issue-timeline';
import { IssuesService } from './issues.service';

const BRANCH_PREFIX = 'refs/heads/';
/** Commits read of a new branch (its newest), and at most of a branch update. */
const NEW_BRANCH_COMMITS = 10;
const MAX_COMMITS = 1000;
/** How long an instance holds a pushed branch while reading it, and waits before trying a failed one again. */
const CLAIM_SECONDS = 300;
const RETRY_SECONDS = 60;
const MAX_ATTEMPTS = 5;
/** Free rows (left by a stopped instance, or due for another try) are looked for this often. */
const SWEEP_MS = 30_000;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&#34;', "'": '&#39;' })[character]!);
}

/**
 * Issue references in pushed commits: every issue a commit names (`#N`, `owner/repo#N`) that the pusher may read
 * gets a `commit_ref` timeline entry, and `close(s|d)`, `fix(es|ed)`, `resolve(s|d)` or `reopen(s|ed)` just
 * before the reference closes or reopens it when the pusher may (a writer of its issues, an administrator, or
 * its poster) and the branch is the repository's default one, or the branch the issue's `ref` names.
 *
 * The push's transaction keeps one `issue_push` row per branch moved; the reading runs after the push has been
 * answered, on whichever instance claims the row, and a row left by a stopped instance is claimed again later.
 * Reading twice does no harm: a commit's entry is made once per issue, and an issue already in the state a
 * keyword asks for is left alone.
 */
@Injectable()
export class CommitReferences implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('CommitReferences');
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pushes: IssuePushStore,
    private readonly clock: Clock,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly paths: RepositoryPaths,
    private readonly pushCommits: GitPushCommits,
    private readonly policy: RepositoryPolicy,
    private readonly issueStore: IssueStore,
    private readonly issues: IssuesService,
    private readonly siteUrls: SiteUrls,
    private readonly transactions: Transactions,
    private readonly timeline: IssueTimeline,
    private readonly milestones: MilestoneLookup,
    private readonly events: RepositoryEvents,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => this.committed(), SWEEP_MS);
    this.timer.unref();
    this.committed();
  }

  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.running;
  }

  async record(tx: EntityManager, repo: RepositoryEntity, pusherId: number, moves: BranchMove[]): Promise<void> {
    if (pusherId <= 0) return;
    const now = this.clock.nowUnix();
    await this.pushes.insert(
      tx,
      moves.map((move) => ({
        repoId: repo.id,
        pusherId,
        ref: move.ref,
        beforeSha: move.before,
        afterSha: move.after,
        attempts: 0,
        claimedUntil: 0,
        createdUnix: now,
      })),
    );
  }

  /** Starts reading (or reads once more after the current round, when one is running). */
  committed(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((error: Error) => this.logger.error(`reading pushed commits for issue references failed: ${error.message}`))
      .finally(() => {
        this.running = null;
        if (this.again) {
          this.again = false;
          this.committed();
        }
      });
  }

  /** Reads every free row, one at a time. Resolves when none is left. */
  async drain(): Promise<void> {
    while (!this.stopped) {
      const now = this.clock.nowUnix();
      const push = await this.pushes.claimNext(now, now + CLAIM_SECONDS);
      if (!push) return;
      try {
        await this.read(push);
        await this.pushes.delete(push.id);
      } catch (error) {
        const attempts = push.attempts + 1;
        this.logger.warn(`issue references of ${push.ref} in repository ${push.repoId} not read (attempt ${attempts}): ${(error as Error).message}`);
        if (attempts >= MAX_ATTEMPTS) await this.pushes.delete(push.id);
        else await this.pushes.retryLater(push.id, attempts, this.clock.nowUnix() + RETRY_SECONDS);
      }
    }
  }

  private async read(push: IssuePushEntity): Promise<void> {
    const repo = await this.repositories.byId(push.repoId);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    const pusher = await this.users.byId(push.pusherId);
    if (!repo || !owner || !pusher) return;
    const dir = this.paths.repository(owner.name, repo.name);
    const limit = isZeroId(push.beforeSha) ? NEW_BRANCH_COMMITS : MAX_COMMITS;
    const { commits } = await this.pushCommits.read(dir, push.beforeSha, push.afterSha, limit);
    const branch = push.ref.slice(BRANCH_PREFIX.length);
    const viewer = new AuthContext(pusher, 'password', null);
    const link = `${new URL(this.siteUrls.rootUrl).pathname.replace(/\/$/, '')}/${encodeURIComponent(owner.name)}/${encodeURIComponent(repo.name)}`;
    // Oldest first, as they were made.
    for (const commit of [...commits].reverse()) {
      const body = `<a href="${escapeHtml(link)}/commit/${escapeHtml(encodeURIComponent(commit.id))}">${escapeHtml(commit.message.split('\n', 1)[0])}</a>`;
      const seen = new Set<string>();
      for (const reference of findIssueReferences(commit.message, this.siteUrls.rootUrl)) {
        const place = reference.owner === '' ? { repo, owner } : await this.repository(reference.owner, reference.name);
        if (!place || !place.repo.hasIssues || place.repo.externalTrackerUrl !== '' || place.repo.isArchived) continue;
        const issue = await this.issueStore.findByIndex(place.repo.id, reference.index);
        if (!issue) continue;
        const key = `${issue.id}:${reference.action}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const rights = await commitReferenceRights(this.policy, viewer, place, issue);
        if (!rights.record) continue;
        await this.referenceCommit(issue, pusher.id, commit.id, body);
        if (issue.isPull || !rights.changeState || reference.action === 'none') continue;
        // An issue about a branch is closed only from that branch; any other only from the default branch.
        const wanted = issue.ref !== '' ? issue.ref.replace(/^refs\/heads\//, '') : repo.defaultBranch;
        if (branch !== wanted) continue;
        const target = new RepositoryTarget(place.repo, place.owner, viewer, () => Promise.resolve(rights.permission), rights.permission);
        await this.changeStateByCommit(target, issue.id, commit.id, reference.action === 'closes');
      }
    }
  }

  /** A pushed commit names the issue: one `commit_ref` timeline entry per commit and issue, `body` linking it. */
  private async referenceCommit(issue: IssueEntity, posterId: number, sha: string, body: string): Promise<void> {
    const now = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      if (await this.timeline.commitReferenced(tx, issue, posterId, sha, body)) await this.issueStore.update(tx, issue.id, { updatedUnix: now });
    });
  }

  /**
   * A pushed commit closes or reopens the issue (a closing keyword): the state changes as through PATCH, by the
   * pusher (`target.viewer`), and the timeline entry names the commit. Nothing when it is in that state already.
   */
  private async changeStateByCommit(target: RepositoryTarget, issueId: number, sha: string, closed: boolean): Promise<void> {
    const now = this.clock.nowUnix();
    const changed = await this.transactions.run(async (tx) => {
      const current = await this.issueStore.findById(issueId, tx);
      if (!current || current.isClosed === closed) return false;
      // An issue with open dependencies stays open, as Forgejo skips such a close.
      if (closed && target.repo.enableIssueDependencies && (await this.issueStore.openDependencyCount(current.id, tx)) > 0) return false;
      const write: Partial<IssueEntity> = { isClosed: closed, closedUnix: closed ? now : 0, updatedUnix: now };
      await this.repositories.addToCounter(tx, current.repoId, 'numClosedIssues', closed ? 1 : -1);
      await this.milestones.moveCounts(tx, current.milestoneId, 0, closed ? 1 : -1);
      await this.timeline.stateChanged(tx, current, target.viewer.user!.id, closed, sha);
      await this.issueStore.update(tx, current.id, write);
      await this.issues.record(tx, target, { ...current, ...write }, { action: closed ? 'closed' : 'reopened' });
      return true;
    });
    if (changed) this.events.committed();
  }

  private async repository(ownerName: string, name: string): Promise<{ repo: RepositoryEntity; owner: UserEntity } | null> {
    const owner = await this.users.byName(ownerName);
    const repo = owner ? await this.repositories.byOwnerAndName(owner.id, name) : null;
    return owner && repo ? { repo, owner } : null;
  }
}
