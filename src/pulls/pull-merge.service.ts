import { Injectable, Logger, OnApplicationBootstrap, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { CommitState, requiredContextsState } from '../access/branch-merge';
import { BranchProtections } from '../access/branch-protection-policy';
import { assertMayCancelAutoMerge, mayDeleteMergedHead } from '../access/pull-rules';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { admitToRepositoryRoute, RepositoryRouteRule } from '../access/repository-route-rule';
import { AuthContext } from '../auth/auth-context';
import { ConflictError, ForbiddenError, MethodNotAllowedError, NotFoundError } from '../common/errors';
import { faultPoint } from '../common/fault-points';
import { SiteUrls } from '../common/site-urls';
import { Clock } from '../common/time';
import { ContentRepositories, ContentRepository } from '../content/content-repository';
import { Leases } from '../database/leases';
import { Transactions } from '../database/transactions';
import { GitChanges } from '../git/git-changes';
import { GitCommits } from '../git/git-commits';
import { CommitStatusLookup } from '../statuses/commit-status-lookup';
import { StatusesService } from '../statuses/statuses.service';
import { GitRefs } from '../git/git-refs';
import { GitMerges } from '../git/merge-engine';
import type { MergeStyle } from '../git/merge-errors';
import type { RefUpdate } from '../git/push-hooks';
import { IssuesService } from '../issues/issues.service';
import { gitSignature } from '../repos/git-signature';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryPushes } from '../repos/repository-pushes.service';
import { UserAccounts } from '../users/user-accounts';
import { mergeMessage, squashMessage } from './pull-merge-messages';
import type { PullMergeIntentEntity } from './pull-merge.entity';
import type { MergePullRequestOption } from './pull-merge.option';
import { PullMergeStore } from './pull-merge.store';
import { PullRequestEntity, PullStatus } from './pull-request.entity';
import { PullRequestStore, PullRow } from './pull-request.store';
import { PullChecks } from './pull-checks';
import { PullHeads } from './pull-heads';
import { PullServerPushes } from './pull-server-pushes';
import { PullsService } from './pulls.service';

// One cohesive thing, kept whole though long: the checks of the merge route in Forgejo's order and the one path
// that builds, publishes and records a merge (and finishes one cut short); split, that order would be read across files.

/** `Do` of the merge option: the styles, and marking a pull request merged by hand. */
export const MERGE_DOS = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only', 'manually-merged'] as const;

/** Which repository setting allows each style (Forgejo's IsMergeStyleAllowed). */
const ALLOWED_BY: Record<(typeof MERGE_DOS)[number], keyof RepositoryEntity> = {
  merge: 'allowMergeCommits',
  rebase: 'allowRebase',
  'rebase-merge': 'allowRebaseExplicit',
  squash: 'allowSquashMerge',
  'fast-forward-only': 'allowFastForwardOnlyMerge',
  'manually-merged': 'allowManualMerge',
};

/**
 * The door of POST …/pulls/{index}/merge (Forgejo: the pull requests' group, reqToken, mustNotBeArchived), declared
 * on its route and asked again of a scheduled merge's author when the checks pass.
 */
export const MERGE_ROUTE: RepositoryRouteRule = { unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' };

/** Forgejo's draft marks: such a pull request cannot be merged. */
function isWorkInProgress(title: string): boolean {
  return /^\s*(WIP:|\[WIP\])/i.test(title);
}

/**
 * Merging pull requests (docs/pull-requests.md, "Merging"): the checks of Forgejo's merge route, the commits of
 * the style built in the bare repository (GitMerges), then the base branch moved with one compare-and-swap that
 * goes through a push's rules (pre-receive), and a push's effects (size, `push` event, re-tests) recorded as for
 * any push. The pull request is recorded merged and closed (with its `closed` event, `merged: true`) right after.
 * A merge intent row, written before the branch moves and removed with the merged state, lets a start-up finish
 * a merge cut by a crash between the two, or drop it when the branch never moved.
 */
@Injectable()
export class PullMergeService implements OnModuleInit, OnApplicationBootstrap {
  private readonly logger = new Logger('PullMerges');

  constructor(
    private readonly pulls: PullsService,
    private readonly pullStore: PullRequestStore,
    private readonly store: PullMergeStore,
    private readonly issues: IssuesService,
    private readonly content: ContentRepositories,
    private readonly pushes: RepositoryPushes,
    private readonly merges: GitMerges,
    private readonly refs: GitRefs,
    private readonly commits: GitCommits,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly policy: RepositoryPolicy,
    private readonly leases: Leases,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly siteUrls: SiteUrls,
    private readonly protections: BranchProtections,
    private readonly changes: GitChanges,
    private readonly statuses: CommitStatusLookup,
    private readonly statusWrites: StatusesService,
    private readonly heads: PullHeads,
    private readonly serverPushes: PullServerPushes,
    private readonly checks: PullChecks,
  ) {}

  onModuleInit(): void {
    this.statusWrites.onCreated((repoId, sha) => this.onStatus(repoId, sha));
  }

  /** Finishes or drops the merges a crash cut (a bounded few per start; the rest at the next). */
  async onApplicationBootstrap(): Promise<void> {
    await this.recover().catch((error) => this.logger.error(`recovering merges: ${(error as Error).message}`));
  }

  /** GET …/pulls/{index}/merge: 204 when merged, 404 otherwise. */
  async isMerged(target: RepositoryTarget, rawIndex: string): Promise<void> {
    const row = await this.pulls.find(target, rawIndex);
    if (!row.pull.hasMerged) throw new NotFoundError();
  }

  /**
   * POST …/pulls/{index}/merge, whose route (MERGE_ROUTE) admitted signed-in readers on a repository that takes
   * writes: 'scheduled' when `merge_when_checks_succeed` left it for the head's checks. Who may merge is decided
   * after the lookup, in CheckPullMergeable's order (assertMergeable).
   */
  async merge(target: RepositoryTarget, rawIndex: string, option: MergePullRequestOption): Promise<'merged' | 'scheduled'> {
    const found = await this.pulls.find(target, rawIndex);
    // One merge of a pull request at a time, on every instance: the second finds it merged.
    const outcome = await this.leases.run(`pull-merge:${found.pull.id}`, async (): Promise<'merged' | 'scheduled'> => {
      // A merge of this pull request cut on another instance (its lease lapsed) is finished or dropped first.
      const left = await this.store.intentOf(found.pull.id);
      if (left) await this.recoverOne(left);
      const read = (await this.pullStore.byIndex(target.repo.id, found.issue.repoIndex)) ?? found;
      const style = option.Do as (typeof MERGE_DOS)[number];
      const auto = option.merge_when_checks_succeed === true && style !== 'manually-merged';
      const { row, allowed: rulesAllow } = await this.assertMergeable(target, read, style === 'manually-merged', option.force_merge ?? false, auto);
      if (style === 'manually-merged') {
        await this.markManuallyMerged(target, row, option.MergeCommitID ?? '');
        return 'merged';
      }
      const headRepository = await this.headRepositoryName(target, row);
      const message = mergeMessage(
        style,
        { title: row.issue.title, index: row.issue.repoIndex, headBranch: row.pull.headBranch, baseBranch: row.pull.baseBranch, headRepository },
        option.MergeTitleField,
        option.MergeMessageField,
      );
      // A merge for when the checks pass waits, as Forgejo's, for the base rule's other checks too (approvals,
      // reviews): it is merged now only when nothing holds it back.
      if (auto && (!rulesAllow || (await this.checksState(target, row)) !== 'success')) {
        const scheduled = await this.transactions.run((tx) =>
          this.store.scheduleAutoMerge(tx, {
            pullId: row.pull.id,
            doerId: target.viewer.user!.id,
            mergeStyle: style,
            message,
            deleteBranchAfterMerge: option.delete_branch_after_merge === true,
            createdUnix: this.clock.nowUnix(),
          }),
        );
        if (!scheduled) throw new ConflictError(`pull request with ID ${row.pull.id} is already scheduled to auto merge`);
        return 'scheduled';
      }
      if (!target.repo[ALLOWED_BY[style]]) throw new MethodNotAllowedError(`${style} is not allowed an allowed merge style for this repository`);
      await this.mergeWithStyle(target, row, style, message, option.head_commit_id ?? '');
      await this.store.cancelAutoMerge(undefined, row.pull.id);
      return 'merged';
    });
    if (outcome === 'merged' && option.delete_branch_after_merge) await this.deleteHeadBranch(target, found);
    return outcome;
  }

  /** DELETE …/pulls/{index}/merge: the scheduled merge goes (204); 404 when none; then its scheduler or an admin (403). */
  async cancelAutoMerge(target: RepositoryTarget, rawIndex: string): Promise<void> {
    const row = await this.pulls.find(target, rawIndex);
    const scheduled = await this.store.autoMergeOf(row.pull.id);
    if (!scheduled) throw new NotFoundError();
    await assertMayCancelAutoMerge(target, scheduled);
    await this.transactions.run((tx) => this.store.cancelAutoMerge(tx, row.pull.id));
  }

  /** The head's checks as a scheduled merge waits for them: the base rule's required contexts, else every status. */
  private async checksState(target: RepositoryTarget, row: PullRow): Promise<string> {
    const rule = await this.protections.governing(target.repo.id, row.pull.baseBranch);
    const statuses = (await this.statuses.latestPerContext(target.repo.id, row.pull.headCommitId)).items.map((status) => ({
      context: status.context,
      state: status.state as CommitState,
    }));
    return requiredContextsState(statuses, rule?.statusCheckContexts ?? []);
  }

  /**
   * A new status of a commit: the scheduled merges of open pull requests whose head it is run once the checks
   * pass, as their schedulers (a merge that fails now stays scheduled; Forgejo logs it likewise).
   */
  async onStatus(repoId: number, sha: string): Promise<void> {
    for (const scheduled of await this.store.allAutoMerges()) {
      const pull = await this.pullStore.byId(scheduled.pullId);
      if (!pull || pull.baseRepoId !== repoId || pull.headCommitId !== sha || pull.hasMerged) continue;
      const repo = await this.repositories.byId(repoId);
      const owner = repo ? await this.users.byId(repo.ownerId) : null;
      const doer = await this.users.byId(scheduled.doerId);
      if (!repo || !owner || !doer) continue;
      const viewer = new AuthContext(doer, 'password', null);
      const target = new RepositoryTarget(repo, owner, viewer, () => this.policy.permission(viewer, repo, owner), null);
      const row = await this.pullStore.byIndex(repoId, pull.repoIndex);
      if (!row || (await this.checksState(target, row)) !== 'success') continue;
      const option = {
        Do: scheduled.mergeStyle,
        MergeTitleField: scheduled.message,
        delete_branch_after_merge: scheduled.deleteBranchAfterMerge,
      } as MergePullRequestOption;
      // The scheduler passes the merge route's door again, as on the day they scheduled it.
      await admitToRepositoryRoute(target, MERGE_ROUTE)
        .then(() => this.merge(target, String(pull.repoIndex), option))
        .catch((error: unknown) => this.logger.warn(`scheduled merge of pull request ${pull.id}: ${(error as Error).message}`));
    }
  }

  /** `owner/name` of a fork's head for the merge message; undefined for the base itself, null once deleted. */
  private async headRepositoryName(target: RepositoryTarget, row: PullRow): Promise<string | null | undefined> {
    if (row.pull.headRepoId === target.repo.id) return undefined;
    const head = await this.heads.of(row.pull, target);
    return head ? `${head.owner.name}/${head.repo.name}` : null;
  }

  /**
   * Forgejo's CheckPullMergeable, in its order and words (405 unless said otherwise): whether the base rule's
   * checks allow the merge now, with the pull request as judged.
   */
  private async assertMergeable(
    target: RepositoryTarget,
    read: PullRow,
    manually: boolean,
    forceMerge: boolean,
    auto = false,
  ): Promise<{ allowed: boolean; row: PullRow }> {
    let row = read;
    if (row.pull.hasMerged) throw new MethodNotAllowedError('');
    if (row.issue.isClosed) throw new NotFoundError();
    // The merge whitelist of a protected base branch, or write access (the access policy decides).
    if (!(await this.protections.mayMergeInto(target, row.pull.baseBranch))) throw new MethodNotAllowedError('User not allowed to merge PR');
    if (manually) return { allowed: true, row };
    if (isWorkInProgress(row.issue.title)) throw new MethodNotAllowedError('Work in progress PRs cannot be merged');
    // A test asked for moments ago (a push) runs now, or its running one ends, rather than "Please try again later".
    if (row.pull.status === PullStatus.Checking) {
      await this.checks.settle(row.pull.id);
      row = (await this.pullStore.byIndex(target.repo.id, row.issue.repoIndex)) ?? row;
    }
    if (row.pull.status !== PullStatus.Mergeable && row.pull.status !== PullStatus.Empty) throw new MethodNotAllowedError('Please try again later');
    const content = this.content.open(target);
    const verdict = await this.protections.judgeMerge(target, {
      baseBranch: row.pull.baseBranch,
      forceMerge,
      commitsBehind: row.pull.commitsBehind,
      reviews: await this.pulls.mergeReviews(row.issue.id),
      changes: this.changes.reading(content.dir, row.pull.mergeBase || row.pull.baseCommitId, row.pull.headCommitId),
      statuses: async () => (await this.statuses.latestPerContext(target.repo.id, row.pull.headCommitId)).items,
    });
    // Scheduling a merge for when the checks pass skips the rule's checks now, as Forgejo's.
    if (!verdict.allowed && !auto) throw new MethodNotAllowedError(verdict.message);
    return { allowed: verdict.allowed, row };
  }

  private async mergeWithStyle(target: RepositoryTarget, row: PullRow, style: MergeStyle, message: string, expectedHead: string): Promise<void> {
    const content = this.content.open(target);
    const viewer = target.viewer.user!;
    const now = this.clock.nowUnix();
    const merger = { ...gitSignature(viewer, this.siteUrls, now), whenUnix: now };
    const baseRef = `refs/heads/${row.pull.baseBranch}`;
    const prepared = await this.content.withGit(async () => {
      const baseTip = (await this.refs.peelRefs(content.dir, [baseRef])).get(baseRef);
      // The head branch's tip (a fork's reaches the base through the pool), else refs/pull/{n}/head.
      const headTip = (await this.heads.tip({ repo: target.repo, owner: target.owner, dir: content.dir }, row.pull)) ?? undefined;
      if (!baseTip || !headTip) throw new NotFoundError();
      if (expectedHead !== '' && expectedHead !== headTip) throw new ConflictError('head out of date');
      let squashAuthor: { name: string; email: string; whenUnix: number } | undefined;
      let text = message;
      if (style === 'squash') {
        const author = await this.squashAuthor(content, row, baseTip, headTip, now);
        squashAuthor = author;
        text = squashMessage(message, author, merger);
      }
      const result = await this.merges.prepare(content.dir, { style, baseTip, headTip, message: text, merger, squashAuthor });
      return { baseTip, tip: result.tip };
    });
    const update: RefUpdate = { ref: baseRef, oldId: prepared.baseTip, newId: prepared.tip };
    await this.publish(target, content, row, style, update);
  }

  /**
   * The squashed commit's author: the poster as one of the head's commits names them (an address of theirs),
   * else the poster's own signature, as Forgejo chooses.
   */
  private async squashAuthor(
    content: ContentRepository,
    row: PullRow,
    baseTip: string,
    headTip: string,
    now: number,
  ): Promise<{ name: string; email: string; whenUnix: number }> {
    const poster = await this.users.byId(row.issue.posterId);
    for (const author of await this.merges.authors(content.dir, baseTip, headTip)) {
      if (poster && (await this.users.emailOwnerId(author.email)) === poster.id) return { ...author, whenUnix: now };
    }
    if (poster) return { ...gitSignature(poster, this.siteUrls, now), whenUnix: now };
    return { name: 'Ghost', email: 'ghost@noreply.localhost', whenUnix: now };
  }

  /**
   * The branch moves as a push would move it: pre-receive's rules first (quota, tree budget, the rules of the
   * base branch), the intent recorded, one compare-and-swap, then post-receive's effects and the merged state.
   */
  private async publish(target: RepositoryTarget, content: ContentRepository, row: PullRow, style: MergeStyle, update: RefUpdate): Promise<void> {
    const mergerId = target.viewer.user!.id;
    const intent = {
      pullId: row.pull.id,
      repoId: target.repo.id,
      mergerId,
      style,
      ref: update.ref,
      oldCommitId: update.oldId,
      newCommitId: update.newId,
      pushRecorded: false,
      createdUnix: this.clock.nowUnix(),
    };
    let recorded = false;
    try {
      await this.serverPushes.move(target, content, row.pull.id, update, async () => {
        await this.transactions.run((tx) => this.store.recordIntent(tx, intent));
        recorded = true;
        faultPoint('merge.intent-recorded');
      });
    } catch (error) {
      if (recorded) await this.transactions.run((tx) => this.store.dropIntent(tx, row.pull.id));
      throw error;
    }
    faultPoint('merge.ref-updated');
    await this.finish({ ...intent, id: 0 }, target);
  }

  /** What follows the branch's move, each step once: the push's effects, then the merged and closed state. */
  private async finish(intent: PullMergeIntentEntity, target: RepositoryTarget): Promise<void> {
    if (!intent.pushRecorded) {
      await this.pushes.recordRefChanges(
        intent.repoId,
        [{ ref: intent.ref, oldId: intent.oldCommitId, newId: intent.newCommitId }],
        intent.mergerId,
        undefined,
        (tx) => this.store.markPushRecorded(tx, intent.pullId),
      );
      faultPoint('merge.push-recorded');
    }
    const pull = await this.pullStore.byId(intent.pullId);
    const issue = pull ? await this.pullStore.issueOf(pull) : null;
    if (!pull || !issue || pull.hasMerged) return this.transactions.run((tx) => this.store.dropIntent(tx, intent.pullId));
    const merged: Partial<PullRequestEntity> = {
      hasMerged: true,
      mergedCommitId: intent.newCommitId,
      mergerId: intent.mergerId,
      mergedUnix: this.clock.nowUnix(),
      status: PullStatus.Mergeable,
    };
    await this.closeAsMerged(target, issue, pull, merged, (tx) => this.store.dropIntent(tx, intent.pullId));
  }

  /** The merged state and the issue closed, in one transaction with the `closed` event (`merged: true`). */
  private async closeAsMerged(
    target: RepositoryTarget,
    issue: PullRow['issue'],
    pull: PullRequestEntity,
    merged: Partial<PullRequestEntity>,
    alongWith?: (tx: EntityManager) => Promise<void>,
  ): Promise<void> {
    await this.issues.change(target, issue, { state: 'closed' }, true, {
      unit: 'repo.pulls',
      within: async (tx) => {
        await this.pullStore.update(tx, pull.id, merged);
        await alongWith?.(tx);
      },
    });
  }

  /** manually-merged: the given commit must be on the base branch; no ref moves. */
  private async markManuallyMerged(target: RepositoryTarget, row: PullRow, commitId: string): Promise<void> {
    if (!target.repo.allowManualMerge) throw new MethodNotAllowedError('manually-merged is not allowed an allowed merge style for this repository');
    const content = this.content.open(target);
    const fullLength = /^[0-9a-f]{40}$/.test(commitId) || /^[0-9a-f]{64}$/.test(commitId);
    const when = fullLength
      ? await this.content.withGit(async () => {
          const commit = await this.refs.resolveCommit(content.dir, commitId);
          const base = await this.refs.resolveCommit(content.dir, `refs/heads/${row.pull.baseBranch}`);
          if (!commit || !base || !(await this.merges.isAncestor(content.dir, commit, base))) return null;
          const header = (await this.commits.commits(content.dir, [commit])).get(commit);
          return header ? Math.floor(Date.parse(header.authorDate) / 1000) : this.clock.nowUnix();
        })
      : null;
    if (when === null) throw new ConflictError('Wrong commit ID');
    const merged: Partial<PullRequestEntity> = {
      hasMerged: true,
      mergedCommitId: commitId,
      mergerId: target.viewer.user!.id,
      mergedUnix: when,
      status: PullStatus.ManuallyMerged,
    };
    await this.closeAsMerged(target, row.issue, row.pull, merged);
  }

  /**
   * delete_branch_after_merge: the head branch goes unless another open pull request still uses it (then the
   * merge answers 200 all the same); the default branch answers 403, as Forgejo.
   */
  private async deleteHeadBranch(base: RepositoryTarget, row: PullRow): Promise<void> {
    const head = await this.heads.of(row.pull, base);
    if (!head) return;
    const others = await this.pullStore.openWithHeads(head.repo.id, [row.pull.headBranch]);
    if (others.some((other) => other.pull.id !== row.pull.id)) return;
    const target =
      head.repo.id === base.repo.id
        ? base
        : new RepositoryTarget(head.repo, head.owner, base.viewer, () => this.policy.permission(base.viewer, head.repo, head.owner), null);
    if (!(await mayDeleteMergedHead(base, target, row.pull))) return;
    if (row.pull.headBranch === target.repo.defaultBranch) throw new ForbiddenError('can not delete default branch');
    await this.protections.assertAllowed(target.repo.id, {
      door: 'branch-api',
      branch: row.pull.headBranch,
      pusher: this.protections.callerPusher(target),
      facts: { deletion: true, isForcePush: async () => false, firstChangedPath: async () => null },
    });
    const content = this.content.open(target);
    await this.content.deleteRef(target.viewer, content, async () => {
      const refs = await this.refs.refs(content.dir, `refs/heads/${row.pull.headBranch}`);
      return refs.find((ref) => ref.ref === `refs/heads/${row.pull.headBranch}`);
    });
  }

  /**
   * Merges a crash cut: intents whose pull request's lease is free (a live merge holds it from its checks to
   * its last step; a dead process's is taken over at once on its machine, elsewhere once it lapses). The branch
   * holds the merge (or went on from it): the steps not yet done are done. It does not: the merge never
   * happened, and the intent goes.
   */
  async recover(): Promise<number> {
    const intents = await this.store.intents(100);
    let finished = 0;
    for (const intent of intents) {
      const done = await this.leases
        .run(`pull-merge:${intent.pullId}`, () => this.recoverOne(intent), { waitMs: 0 })
        .catch((error) => {
          this.logger.warn(`merge of pull request ${intent.pullId} not recovered yet: ${(error as Error).message}`);
          return false;
        });
      if (done) finished++;
    }
    return finished;
  }

  /** One intent, under its pull request's lease; true when the merge was completed. */
  async recoverOne(intent: PullMergeIntentEntity): Promise<boolean> {
    const current = await this.store.intentOf(intent.pullId);
    if (!current || current.id !== intent.id) return false;
    const repo = await this.repositories.byId(intent.repoId);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    const merger = await this.users.byId(intent.mergerId);
    if (!repo || !owner || !merger) {
      await this.transactions.run((tx) => this.store.dropIntent(tx, intent.pullId));
      return false;
    }
    const viewer = new AuthContext(merger, 'password', null);
    const target = new RepositoryTarget(repo, owner, viewer, () => this.policy.permission(viewer, repo, owner), null);
    const content = this.content.open(target);
    const landed = await this.content.withGit(async () => {
      const tip = await this.refs.resolveCommit(content.dir, intent.ref);
      return tip !== null && (tip === intent.newCommitId || (await this.merges.isAncestor(content.dir, intent.newCommitId, tip)));
    });
    if (!landed) {
      await this.transactions.run((tx) => this.store.dropIntent(tx, intent.pullId));
      return false;
    }
    await this.finish(current, target);
    return true;
  }
}
