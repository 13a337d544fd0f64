import { Injectable, Logger } from '@nestjs/common';
import { totalFromCounters } from '../issues/issue-counts';
import type { EntityManager } from 'typeorm';
import { assertCodeReadable, assertMayChangePullBase, assertMayEditPull, assertMayOpenPullFrom, assertMaySetMaintainerEdit } from '../access/pull-rules';
import { RepositoryPolicy, RepositoryTarget } from '../access/repository-policy';
import { permissionsOnWire } from '../access/repository-viewer-rules';
import { AuthContext } from '../auth/auth-context';
import { BadRequestError, ConflictError, InvalidInputError, NotFoundError, PreconditionFailedError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { SiteUrls } from '../common/site-urls';
import { IssueConfig } from '../config/slices';
import { queryKey, RecentReads } from '../database/recent-reads';
import { Transactions } from '../database/transactions';
import { BranchMove, RepositoryEvents } from '../events/repository-events';
import { ContentRepositories } from '../content/content-repository';
import { ContentRefs } from '../content/content-refs';
import { toCommitWire } from '../content/content.mapper';
import type { CommitWire } from '../content/content.wire';
import { GitCompare } from '../git/git-compare';
import { GitObjects } from '../git/git-objects';
import { GitRefs, isPlainRevision } from '../git/git-refs';
import type { RefUpdate } from '../git/push-hooks';
import type { IssueEntity } from '../issues/issue.entity';
import { IssueChange, IssuesService } from '../issues/issues.service';
import type { PullRequestMetaWire } from '../issues/issue.wire';
import { repositoryUrls } from '../repos/repository.mapper';
import { RepositoryViews } from '../repos/repository-views';
import { RepositoryDirectory } from '../repos/repository-directory';
import { UserAccounts } from '../users/user-accounts';
import { toUserWire } from '../users/user.mapper';
import { PullChecks } from './pull-checks';
import { HeadRepository, PullHeads } from './pull-heads';
import type { PullReviewHooks } from './pull-review-hooks';
import { PullRequestEntity, PullStatus } from './pull-request.entity';
import { PullCriteria, PullRequestStore, PullRow } from './pull-request.store';
import { toChangedFileWire, toPullRequestMetaWire, toPullRequestWire } from './pull.mapper';
import type { CreatePullRequestOption, EditPullRequestOption } from './pull.options';
import type { ChangedFileWire, CompareWire, PullRequestWire } from './pull.wire';
import type { RepositoryWire } from '../repos/repository.wire';
import { Deliver, deliverGitOutput } from '../content/download-delivery';

// One cohesive thing, kept whole though long: the rules of pull requests, whose lists, writes and git reads share
// one reading of which branches a pull request joins and who may change it.

/** The raw query of a list, as the route received it. */
export type PullQuery = Record<string, unknown>;

function text(query: PullQuery, name: string): string {
  const value = query[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return '';
}

function texts(query: PullQuery, name: string): string[] {
  const value = query[name];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === 'string');
  return [];
}

/**
 * Pages and single pull requests kept at once (recent-reads.ts): a page of 30 is about 177 KB of JSON (two
 * Repository objects each) and three times that as objects, so the pages take at most some 10 MB.
 */
const KEPT_PAGES = 16;
const KEPT_PULLS = 128;

/** A branch name as a pull request may name it. */
function isBranchName(name: string): boolean {
  return name.length <= 255 && isPlainRevision(name);
}

/** Forgejo's text for a second open pull request of the same head and base. */
function alreadyExists(existing: PullRequestEntity): ConflictError {
  return new ConflictError(
    `pull request already exists for these targets [id: ${existing.id}, issue_id: ${existing.repoIndex}, head_repo_id: ${existing.headRepoId}, base_repo_id: ${existing.baseRepoId}, head_branch: ${existing.headBranch}, base_branch: ${existing.baseBranch}]`,
  );
}

/**
 * Pull requests of a repository: each is an issue (numbers, title, body, labels, assignees, comments) with a head
 * and a base branch. Readers of the pull requests unit who read the code see them; callers who may push the
 * head branch open them; the poster or a writer edits. Mergeability is tested in the background (PullChecks).
 */
@Injectable()
export class PullsService {
  private readonly logger = new Logger('PullsService');
  private reviews: PullReviewHooks | null = null;
  /** Repositories whose open pull requests a recorded push has just asked to test (onPushRecorded): woken after. */
  private readonly basesMarked = new Set<number>();
  private readonly recentPages: RecentReads<Page<PullRequestWire>>;
  private readonly recentPulls: RecentReads<PullRequestWire>;

  constructor(
    private readonly store: PullRequestStore,
    private readonly issues: IssuesService,
    private readonly checks: PullChecks,
    private readonly content: ContentRepositories,
    private readonly contentRefs: ContentRefs,
    private readonly refs: GitRefs,
    private readonly compare: GitCompare,
    private readonly views: RepositoryViews,
    private readonly repositories: RepositoryDirectory,
    private readonly users: UserAccounts,
    private readonly policy: RepositoryPolicy,
    private readonly transactions: Transactions,
    private readonly events: RepositoryEvents,
    private readonly siteUrls: SiteUrls,
    private readonly heads: PullHeads,
    private readonly objects: GitObjects,
    config: IssueConfig,
  ) {
    this.recentPages = new RecentReads(transactions, config.listCacheMs, KEPT_PAGES);
    this.recentPulls = new RecentReads(transactions, config.listCacheMs, KEPT_PULLS);
  }

  /** The reviews module registers what pull requests ask of reviews. */
  useReviews(hooks: PullReviewHooks): void {
    this.reviews = hooks;
  }

  /** The reviews of a pull request as the merge rules count them. */
  mergeReviews(issueId: number): ReturnType<PullReviewHooks['mergeReviews']> {
    return this.reviews ? this.reviews.mergeReviews(issueId) : Promise.resolve([]);
  }

  /** The issue of a pull request is being deleted: its reviews go in the same transaction. */
  async deleteReviewsOf(tx: EntityManager, issueId: number): Promise<void> {
    await this.reviews?.deleted(tx, issueId);
  }

  // The routes of pull requests declare `needsPullRequests`: their door answered 404 when the unit is off or the
  // caller may not read the code (access/pull-rules.ts#assertPullRequestsReadable).

  /** A page asked again moments later is the one read then while no write can have changed it (ISSUE_LIST_CACHE_MS). */
  list(target: RepositoryTarget, query: PullQuery, page: PageQuery): Promise<Page<PullRequestWire>> {
    const key = `${target.repo.id} ${target.viewer.viewKey} ${page.offset} ${page.limit} ${queryKey(query)}`;
    return this.recentPages.get(key, () => this.read(target, query, page));
  }

  private async read(target: RepositoryTarget, query: PullQuery, page: PageQuery): Promise<Page<PullRequestWire>> {
    const criteria: PullCriteria = { baseRepoId: target.repo.id, sort: text(query, 'sort') };
    const state = text(query, 'state');
    if (state !== 'all') criteria.isClosed = state === 'closed';
    const labels = texts(query, 'labels')
      .flatMap((value) => value.split(','))
      .filter((value) => value.trim() !== '');
    if (labels.length > 0) {
      if (labels.some((value) => !/^\d{1,15}$/.test(value.trim()))) throw new InvalidInputError('labels must be label ids');
      criteria.labelIds = labels.map((value) => Number(value.trim()));
    }
    const milestone = text(query, 'milestone');
    if (milestone !== '' && milestone !== '0') {
      if (!/^\d{1,15}$/.test(milestone)) throw new InvalidInputError('milestone must be an id');
      criteria.milestoneId = Number(milestone);
    }
    const poster = text(query, 'poster');
    if (poster !== '') {
      const user = await this.users.byName(poster);
      if (!user) throw new BadRequestError(`user redirect does not exist [name: ${poster.toLowerCase()}]`);
      criteria.posterId = user.id;
    }
    // Narrowed by state alone, the repository's counters say how many match.
    const byStateOnly = criteria.labelIds === undefined && criteria.milestoneId === undefined && criteria.posterId === undefined;
    const known = byStateOnly ? totalFromCounters(target.repo, { isPull: true, isClosed: criteria.isClosed }) : undefined;
    const found = await this.store.list(criteria, page, known);
    const pulls = await this.store.byIssueIds(found.items.map((issue) => issue.id));
    const rows = found.items.filter((issue) => pulls.has(issue.id)).map((issue) => ({ issue, pull: pulls.get(issue.id)! }));
    return { items: await this.wires(target, rows), total: found.total };
  }

  /** GET …/pulls/pinned: the pinned pull requests, in their order. */
  async pinned(target: RepositoryTarget): Promise<PullRequestWire[]> {
    const issues = await this.store.pinned(target.repo.id);
    const pulls = await this.store.byIssueIds(issues.map((issue) => issue.id));
    return this.wires(
      target,
      issues.filter((issue) => pulls.has(issue.id)).map((issue) => ({ issue, pull: pulls.get(issue.id)! })),
    );
  }

  /** As the list, one pull request asked again is the one read moments ago while nothing was written since. */
  get(target: RepositoryTarget, rawIndex: string): Promise<PullRequestWire> {
    return this.recentPulls.get(`${target.repo.id} ${target.viewer.viewKey} ${rawIndex}`, async () => {
      const row = await this.find(target, rawIndex);
      return (await this.wires(target, [row]))[0];
    });
  }

  /**
   * GET …/pulls/{base}/{head}: the pull request of these branches. As Forgejo: `branch` in this repository,
   * `owner:branch` in the owner's repository of this one's name, `owner/name:branch` in that repository.
   */
  async byBaseAndHead(target: RepositoryTarget, base: string, head: string): Promise<PullRequestWire> {
    let headRepoId = target.repo.id;
    let headBranch = head;
    const colon = head.indexOf(':');
    if (colon >= 0) {
      headBranch = head.slice(colon + 1);
      const [ownerName, name = target.repo.name] = head.slice(0, colon).split('/');
      const owner = await this.users.byName(ownerName);
      const repo = owner ? await this.repositories.byOwnerAndName(owner.id, name) : null;
      if (!repo) throw new NotFoundError();
      headRepoId = repo.id;
    }
    const row = await this.store.byBaseAndHead(target.repo.id, base, headRepoId, headBranch);
    if (!row) throw new NotFoundError();
    return (await this.wires(target, [row]))[0];
  }

  /** GET …/commits/{sha}/pull: the pull request merged as this commit. */
  async byMergedCommit(target: RepositoryTarget, sha: string): Promise<PullRequestWire> {
    const pull = await this.store.byMergedCommit(target.repo.id, sha);
    const issue = pull ? await this.store.issueOf(pull) : null;
    if (!pull || !issue) throw new NotFoundError();
    return (await this.wires(target, [{ pull, issue }]))[0];
  }

  /**
   * POST …/pulls: the route admitted signed-in readers of the pull requests on a repository that takes writes;
   * the body, then the branches' lookups (404), then the head's writers (403), as Forgejo.
   */
  async create(target: RepositoryTarget, option: CreatePullRequestOption): Promise<PullRequestWire> {
    if (option.head === option.base) throw new InvalidInputError('Invalid PullRequest: There are no changes between the head and the base');
    // `branch`, or `owner:branch` of a fork in this repository's network (Forgejo's parseCompareInfo).
    const resolved = await this.heads.resolve(target, option.head);
    if (resolved === null || !isBranchName(option.base) || !isBranchName(resolved.branch)) throw new NotFoundError();
    const headBranch = resolved.branch;
    if (resolved.sameRepository && headBranch === option.base)
      throw new InvalidInputError('Invalid PullRequest: There are no changes between the head and the base');
    const dir = this.content.open(target).dir;
    const basePlace: HeadRepository = { repo: target.repo, owner: target.owner, dir };
    const headPlace = resolved.sameRepository ? basePlace : this.heads.place(resolved.target.repo, resolved.target.owner);
    const baseSha = await this.content.withGit(() => this.refs.resolveCommit(dir, `refs/heads/${option.base}`));
    const headSha = await this.content.withGit(() => this.refs.resolveCommit(headPlace.dir, `refs/heads/${headBranch}`));
    if (!baseSha || !headSha) throw new NotFoundError();
    // A pull request is opened from a branch its author may push: the head repository's writers.
    await assertMayOpenPullFrom(resolved.target);
    const existing = await this.store.openOf(target.repo.id, option.base, headPlace.repo.id, headBranch);
    if (existing) throw alreadyExists(existing);
    // A fork's head commits reach the base through the network's pool: only the branch's missing objects move.
    if (!resolved.sameRepository) await this.content.withGit(() => this.heads.reach(basePlace, headPlace, headBranch, headSha));
    const mergeBase = (await this.content.withGit(() => this.compare.mergeBase(dir, baseSha, headSha))) ?? '';
    let created: PullRequestEntity | null = null;
    const issue = await this.issues.open(
      target,
      {
        title: option.title,
        body: option.body,
        assignee: option.assignee || undefined,
        assignees: option.assignees,
        labels: option.labels,
        milestone: option.milestone,
        due_date: option.due_date,
      },
      true,
      {
        unit: 'repo.pulls',
        within: async (tx, row) => {
          // Checked again inside the transaction: of two concurrent creates, the second finds the first.
          const clash = await this.store.openOf(target.repo.id, option.base, headPlace.repo.id, headBranch, tx);
          if (clash) throw alreadyExists(clash);
          created = await this.store.insert(tx, {
            issueId: row.id,
            repoIndex: row.repoIndex,
            baseRepoId: target.repo.id,
            headRepoId: headPlace.repo.id,
            headBranch,
            baseBranch: option.base,
            headCommitId: headSha,
            baseCommitId: baseSha,
            mergeBase,
            status: PullStatus.Checking,
            conflictedFiles: '[]',
            allowMaintainerEdit: target.repo.defaultAllowMaintainerEdit,
            checkVersion: 1,
          });
        },
      },
    );
    const pull = created as PullRequestEntity | null;
    if (!pull) throw new NotFoundError();
    await this.content.withGit(() => this.heads.publish(basePlace, headPlace, headBranch, issue.repoIndex, headSha));
    // Tested now, so that the answer already says whether it merges; a failure leaves it to the drain.
    await this.checks.test(pull.id).catch(() => this.checks.wake());
    const stored = (await this.store.byId(pull.id)) ?? pull;
    return (await this.wires(target, [{ pull: stored, issue }]))[0];
  }

  /**
   * PATCH: 201 with the pull request. The route admitted signed-in readers; as Forgejo, the body (422) and the
   * pull request (404) come before the poster-or-writer rule (403). Writer-only fields are dropped for the poster.
   */
  async edit(target: RepositoryTarget, rawIndex: string, option: EditPullRequestOption): Promise<PullRequestWire> {
    const row = await this.find(target, rawIndex);
    const editor = await assertMayEditPull(target, row.issue);
    const writer = editor.writer;
    if (option.state !== undefined && option.state !== null && row.pull.hasMerged && (option.state === 'closed') !== row.issue.isClosed) {
      throw new PreconditionFailedError('cannot change state of this pull request, it was already merged');
    }
    const changes: Partial<PullRequestEntity> = {};
    let retest = false;
    if (option.base && option.base !== row.pull.baseBranch) {
      assertMayChangePullBase(editor);
      const dir = this.content.open(target).dir;
      const base = isBranchName(option.base) ? await this.content.withGit(() => this.refs.resolveCommit(dir, `refs/heads/${option.base}`)) : null;
      if (!base) throw new NotFoundError(`new base '${option.base}' not exist`);
      if (row.pull.hasMerged) throw new ConflictError('pull request has already been merged');
      if (row.issue.isClosed) throw new InvalidInputError('issue is closed');
      const existing = await this.store.openOf(target.repo.id, option.base, row.pull.headRepoId, row.pull.headBranch);
      if (existing) throw alreadyExists(existing);
      changes.baseBranch = option.base;
      retest = true;
    }
    if (option.allow_maintainer_edit !== undefined && option.allow_maintainer_edit !== null && option.allow_maintainer_edit !== row.pull.allowMaintainerEdit) {
      assertMaySetMaintainerEdit(editor);
      changes.allowMaintainerEdit = option.allow_maintainer_edit;
    }
    const reopening = option.state === 'open' && row.issue.isClosed;
    if (reopening) {
      const clash = await this.store.openOf(target.repo.id, changes.baseBranch ?? row.pull.baseBranch, row.pull.headRepoId, row.pull.headBranch);
      if (clash && clash.id !== row.pull.id) throw alreadyExists(clash);
      retest = true;
    }
    const labels = writer && option.labels !== undefined && option.labels !== null ? await this.issues.usableLabels(target, option.labels) : null;
    // A pull request's `assignee` is a plain string in Forgejo: empty means not given (an issue's edit clears the
    // assignees with it). Go clients send every field, so `tea pr close` carries `"assignee": ""`.
    const issue = await this.issues.change(
      target,
      row.issue,
      {
        title: option.title,
        body: option.body,
        assignee: option.assignee || undefined,
        assignees: option.assignees,
        milestone: option.milestone || undefined,
        state: option.state,
        due_date: option.due_date,
        unset_due_date: option.unset_due_date,
      },
      writer,
      {
        unit: 'repo.pulls',
        within: async (tx, current) => {
          if (Object.keys(changes).length > 0) await this.store.update(tx, row.pull.id, changes);
          if (labels !== null) {
            await this.issues.replaceLabels(tx, current, labels, target.viewer.user!.id);
            await this.issues.record(tx, target, current, { action: 'label_updated' });
          }
          if (retest) await this.store.requestCheck(tx, [row.pull.id]);
          if (changes.baseBranch)
            await this.issues.record(tx, target, current, { action: 'edited', changes: { base: { from: row.pull.baseBranch } } } as unknown as IssueChange);
        },
      },
    );
    if (retest) this.checks.wake();
    const pull = (await this.store.byId(row.pull.id)) ?? row.pull;
    return (await this.wires(target, [{ pull, issue }]))[0];
  }

  /** …/pulls/{index}.diff and .patch: the text of the change from the merge base to the head. */
  async diffOrPatch(target: RepositoryTarget, rawIndex: string, kind: 'diff' | 'patch', binary: boolean, deliver: Deliver): Promise<void> {
    const row = await this.find(target, rawIndex);
    const dir = this.content.open(target).dir;
    const { from, to } = await this.span(dir, row.pull);
    // Streamed as git writes it, whatever its size, inside one slot of the process cap until the last byte.
    await this.content.withGit(() =>
      deliverGitOutput(
        kind === 'diff' ? this.compare.streamDiff(dir, from, to, binary) : this.compare.streamPatch(dir, from, to, binary),
        { 'Content-Type': 'text/plain; charset=utf-8' },
        deliver,
      ),
    );
  }

  /** …/pulls/{index}/files: the files changed from the merge base to the head, paged. */
  async files(target: RepositoryTarget, rawIndex: string, page: PageQuery): Promise<Page<ChangedFileWire>> {
    const row = await this.find(target, rawIndex);
    const content = this.content.open(target);
    const { from, to } = await this.span(content.dir, row.pull);
    const changes = await this.content.withGit(() => this.compare.changedPaths(content.dir, from, to));
    const items = changes.slice(page.offset, page.offset + page.limit).map((change) => toChangedFileWire(change, content.urls.html, content.urls.api, to));
    return { items, total: changes.length };
  }

  /** …/pulls/{index}/commits: the head's commits not in the base, newest first, paged. */
  async commits(target: RepositoryTarget, rawIndex: string, page: PageQuery, options: { stat: boolean; files: boolean }): Promise<Page<CommitWire>> {
    const row = await this.find(target, rawIndex);
    const content = this.content.open(target);
    const { from, to } = await this.span(content.dir, row.pull);
    const { total, commits } = await this.content.withGit(async () => {
      const total = await this.compare.countBetween(content.dir, from, to);
      const commits = await this.compare.commitsBetween(content.dir, from, to, {
        skip: page.offset,
        limit: page.limit,
        withChanges: options.stat || options.files,
      });
      return { total, commits };
    });
    const users = await this.contentRefs.usersByEmail(
      target.viewer,
      commits.flatMap((commit) => [commit.authorEmail, commit.committerEmail]),
    );
    return { items: commits.map((commit) => toCommitWire(content.urls, commit, users, options)), total };
  }

  /** GET /repos/{owner}/{repo}/compare/{base}...{head}: the head's commits not in the base. */
  async compareRevisions(target: RepositoryTarget, spec: string, options: { stat: boolean; files: boolean }): Promise<CompareWire> {
    await assertCodeReadable(target);
    const content = this.content.open(target);
    let parts = spec.split('...');
    if (parts.length !== 2) parts = spec.split('..');
    if (parts.length !== 2) parts = [target.repo.defaultBranch, spec];
    const [base, head] = parts;
    const resolved = await this.heads.resolve(target, head);
    if (resolved === null || !isPlainRevision(base) || !isPlainRevision(resolved.branch)) throw new NotFoundError();
    const result = await this.content.withGit(async () => {
      const baseSha = await this.refs.resolveCommit(content.dir, base);
      let headSha: string | null;
      if (resolved.sameRepository) headSha = await this.refs.resolveCommit(content.dir, resolved.branch);
      else {
        // Another repository's head: a branch of it, whose commits the base then reaches through the pool.
        const headPlace = this.heads.place(resolved.target.repo, resolved.target.owner);
        headSha = isBranchName(resolved.branch) ? await this.refs.resolveCommit(headPlace.dir, `refs/heads/${resolved.branch}`) : null;
        if (headSha) await this.heads.reach({ repo: target.repo, owner: target.owner, dir: content.dir }, headPlace, resolved.branch, headSha);
      }
      if (!baseSha || !headSha) return null;
      const mergeBase = (await this.compare.mergeBase(content.dir, baseSha, headSha)) ?? baseSha;
      const total = await this.compare.countBetween(content.dir, mergeBase, headSha);
      const commits = await this.compare.commitsBetween(content.dir, mergeBase, headSha, {
        skip: 0,
        limit: Math.min(total, 250),
        withChanges: options.stat || options.files,
      });
      return { total, commits };
    });
    if (!result) throw new NotFoundError();
    const users = await this.contentRefs.usersByEmail(
      target.viewer,
      result.commits.flatMap((commit) => [commit.authorEmail, commit.committerEmail]),
    );
    return { total_commits: result.total, commits: result.commits.map((commit) => toCommitWire(content.urls, commit, users, options)) };
  }

  /** The `pull_request` part of issues that are pull requests (registered with IssuesService). */
  async meta(issues: IssueEntity[], tx?: EntityManager): Promise<Map<number, PullRequestMetaWire>> {
    const pulls = await this.store.byIssueIds(
      issues.map((issue) => issue.id),
      tx,
    );
    const result = new Map<number, PullRequestMetaWire>();
    const htmlBases = new Map<number, string>();
    for (const issue of issues) {
      const pull = pulls.get(issue.id);
      if (!pull) continue;
      let html = htmlBases.get(issue.repoId);
      if (html === undefined) {
        const repo = await this.repositories.byId(issue.repoId, tx);
        const owner = repo ? await this.users.byId(repo.ownerId, tx) : null;
        html = repo && owner ? repositoryUrls(owner, repo, this.siteUrls).html : '';
        htmlBases.set(issue.repoId, html);
      }
      result.set(issue.id, toPullRequestMetaWire(pull, issue, html));
    }
    return result;
  }

  /**
   * A change to a pull request's issue, as a `pull_request` event inside its transaction (registered with
   * IssuesService). The pull request is shown as to an anonymous viewer, with what the row knows (no git).
   */
  async record(tx: EntityManager, target: RepositoryTarget, issue: IssueEntity, change: IssueChange): Promise<void> {
    await this.recordEvent(tx, target, issue, { action: change.action, changes: change.changes });
  }

  /**
   * A `pull_request` event of any hook event type (a review's, a review request's) inside the caller's
   * transaction; `hookEvent` defaults to `pull_request`.
   */
  async recordEvent(
    tx: EntityManager,
    target: RepositoryTarget,
    issue: IssueEntity,
    event: { action: string; changes?: object; hookEvent?: string; requestedReviewer?: object | null; review?: { type: string; content: string } | null },
  ): Promise<void> {
    const change = event;
    const pull = await this.store.byIssueId(issue.id, tx);
    if (!pull) return;
    const anonymous = AuthContext.anonymous();
    const [issueWire] = await this.issues.wires([issue], anonymous, new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]), tx, {
      pullMeta: false,
    });
    const repoWire = await this.views.one(target.repo, target.owner, anonymous, { admin: false, push: false, pull: true });
    // A fork's head is shown as Forgejo's payloads show it, null once the fork is gone.
    const head = pull.headRepoId === target.repo.id ? null : await this.heads.of(pull, target, tx);
    const headRepoWire =
      pull.headRepoId === target.repo.id
        ? repoWire
        : head
          ? await this.views.one(head.repo, head.owner, anonymous, { admin: false, push: false, pull: true })
          : null;
    const mergedBy = pull.hasMerged && pull.mergerId ? await this.users.byId(pull.mergerId, tx) : null;
    const reviews = this.reviews ? (await this.reviews.summaries([issue.id], tx)).get(issue.id) : undefined;
    const wire = toPullRequestWire(pull, issueWire, {
      baseRepo: repoWire,
      headRepo: headRepoWire,
      baseSha: pull.baseCommitId,
      headSha: pull.headCommitId,
      mergedBy: mergedBy ? toUserWire(mergedBy, anonymous, this.siteUrls) : null,
      reviews,
    });
    await this.events.record(tx, {
      kind: 'pull_request',
      action: change.action,
      repo: target.repo,
      senderId: target.viewer.user?.id ?? 0,
      pullRequest: wire,
      changes: change.changes,
      hookEvent: event.hookEvent,
      requestedReviewer: event.requestedReviewer,
      review: event.review,
    });
  }

  /**
   * In the transaction that records a push (or a server write) moving branches: the open pull requests into them
   * are asked for a new test in that same commit, in one statement, rather than in a transaction of their own
   * after it (a commit and its flush on every push to a base with open pull requests).
   */
  async onPushRecorded(tx: EntityManager, repositoryId: number, moves: BranchMove[]): Promise<void> {
    const branches = moves.filter((move) => move.ref.startsWith('refs/heads/')).map((move) => move.ref.slice('refs/heads/'.length));
    if ((await this.store.requestChecksOnBases(tx, repositoryId, branches)) > 0) this.basesMarked.add(repositoryId);
  }

  /**
   * After refs of a repository moved (a push, a server write): open pull requests whose head branch moved get
   * `refs/pull/{n}/head` in their base repository (this one, or the source of this fork: the fork's new commits
   * reach it through the pool), a new test and a `synchronized` event; those whose base moved a new test; those
   * whose head or base branch was deleted are closed, as Forgejo closes them. The tests run in the background.
   */
  async onRefsChanged(repositoryId: number, updates: RefUpdate[], senderId: number): Promise<void> {
    // The open pull requests into the moved branches were asked for a test when the change was recorded.
    if (this.basesMarked.delete(repositoryId)) this.checks.wakeAfterPush();
    const moved = new Map<string, string>();
    const deleted: string[] = [];
    for (const update of updates) {
      if (!update.ref.startsWith('refs/heads/')) continue;
      const branch = update.ref.slice('refs/heads/'.length);
      if (/^0+$/.test(update.newId)) deleted.push(branch);
      else moved.set(branch, update.newId);
    }
    if (moved.size === 0 && deleted.length === 0) return;
    const heads = await this.store.openWithHeads(repositoryId, [...moved.keys()]);
    const gone = [
      ...new Map(
        [...(await this.store.openWithHeads(repositoryId, deleted)), ...(await this.store.openWithBases(repositoryId, deleted))].map((row) => [
          row.pull.id,
          row,
        ]),
      ).values(),
    ];
    if (heads.length === 0 && gone.length === 0) return;
    const repo = await this.repositories.byId(repositoryId);
    const owner = repo ? await this.users.byId(repo.ownerId) : null;
    if (!repo || !owner) return;
    const sender = senderId > 0 ? await this.users.byId(senderId) : null;
    const viewer = sender ? new AuthContext(sender, 'password', null) : AuthContext.anonymous();
    const pushed = this.heads.place(repo, owner);
    // The base repository of each pull request concerned, as the sender acts on it.
    const targets = new Map<number, RepositoryTarget>([
      [repo.id, new RepositoryTarget(repo, owner, viewer, () => this.policy.permission(viewer, repo, owner), null)],
    ]);
    for (const row of [...heads, ...gone]) {
      if (targets.has(row.pull.baseRepoId)) continue;
      const baseRepo = await this.repositories.byId(row.pull.baseRepoId);
      const baseOwner = baseRepo ? await this.users.byId(baseRepo.ownerId) : null;
      if (baseRepo && baseOwner)
        targets.set(baseRepo.id, new RepositoryTarget(baseRepo, baseOwner, viewer, () => this.policy.permission(viewer, baseRepo, baseOwner), null));
    }
    const synchronized: PullRow[] = [];
    await this.content.withGit(async () => {
      for (const row of heads) {
        const commit = moved.get(row.pull.headBranch)!;
        const base = targets.get(row.pull.baseRepoId);
        if (!base || row.pull.headCommitId === commit) continue;
        try {
          await this.heads.publish(this.heads.place(base.repo, base.owner), pushed, row.pull.headBranch, row.issue.repoIndex, commit);
          synchronized.push(row);
        } catch (error) {
          // Left to the test, which publishes the head again before it measures.
          this.logger.warn(`refs/pull/${row.issue.repoIndex}/head of repository ${row.pull.baseRepoId} not moved: ${(error as Error).message}`);
        }
      }
    });
    await this.transactions.run(async (tx) => {
      for (const row of synchronized) await this.store.update(tx, row.pull.id, { headCommitId: moved.get(row.pull.headBranch)! });
      // A pull request opened on the pushed commit was tested when it was opened (its push is answered first).
      const headMoved = heads.filter((row) => row.pull.headCommitId !== moved.get(row.pull.headBranch));
      await this.store.requestCheck(tx, [...new Set(headMoved.map((row) => row.pull.id))]);
      if (viewer.isSignedIn)
        for (const row of synchronized) await this.issues.record(tx, targets.get(row.pull.baseRepoId)!, row.issue, { action: 'synchronized' });
    });
    this.events.committed();
    // Reviews of a head that changed the diff go stale (and approvals are dismissed where the rule says so).
    if (this.reviews) {
      for (const row of synchronized) {
        const base = targets.get(row.pull.baseRepoId);
        if (!base) continue;
        await this.reviews
          .headMoved(base, row, row.pull.headCommitId, moved.get(row.pull.headBranch)!)
          .catch((error: unknown) => this.logger.warn(`reviews of pull request ${row.pull.id} after a push: ${(error as Error).message}`));
      }
    }
    for (const row of gone) {
      const base = targets.get(row.pull.baseRepoId);
      if (base && viewer.isSignedIn) await this.issues.change(base, row.issue, { state: 'closed' }, true).catch(() => undefined);
    }
    this.checks.wakeAfterPush();
  }

  /**
   * In the deletion of a repository: its open pull requests into other repositories (from a fork) are closed
   * after the commit by the one who deleted it, as Forgejo's CloseRepoBranchesPulls; their head ref stays in the
   * base, whose pool keeps the commits.
   */
  async onHeadRepositoryDeleted(tx: EntityManager, repositoryId: number, doerId: number): Promise<(() => Promise<void>) | void> {
    const rows = (await this.store.openFromRepository(repositoryId, tx)).filter((row) => row.pull.baseRepoId !== repositoryId);
    if (rows.length === 0) return;
    return async () => {
      const doer = doerId > 0 ? await this.users.byId(doerId) : null;
      if (!doer) return;
      const viewer = new AuthContext(doer, 'password', null);
      for (const row of rows) {
        const baseRepo = await this.repositories.byId(row.pull.baseRepoId);
        const baseOwner = baseRepo ? await this.users.byId(baseRepo.ownerId) : null;
        if (!baseRepo || !baseOwner) continue;
        const target = new RepositoryTarget(baseRepo, baseOwner, viewer, () => this.policy.permission(viewer, baseRepo, baseOwner), null);
        await this.issues
          .change(target, row.issue, { state: 'closed' }, true)
          .catch((error: Error) => this.logger.warn(`closing pull request ${row.pull.id}: ${error.message}`));
      }
    };
  }

  /** The pull request numbered `rawIndex` of the target (404 otherwise, also for an issue's number). */
  async find(target: RepositoryTarget, rawIndex: string): Promise<PullRow> {
    const index = /^\d{1,15}$/.test(rawIndex) ? Number(rawIndex) : 0;
    const row = index > 0 ? await this.store.byIndex(target.repo.id, index) : null;
    if (!row) throw new NotFoundError();
    return row;
  }

  /** The commits a pull request's diff runs between: its merge base (or base) and its head as stored. */
  private async span(dir: string, pull: PullRequestEntity): Promise<{ from: string; to: string }> {
    const to = pull.headCommitId;
    let from = pull.hasMerged ? pull.mergeBase : '';
    if (!from) {
      from =
        (await this.content.withGit(async () => {
          const base = await this.refs.resolveCommit(dir, `refs/heads/${pull.baseBranch}`);
          return base ? this.compare.mergeBase(dir, base, to) : null;
        })) ?? pull.mergeBase;
    }
    if (!from || !to) throw new NotFoundError();
    return { from, to };
  }

  /** The JSON of pull requests of one repository for the target's viewer: git read once for the page. */
  private async wires(target: RepositoryTarget, rows: PullRow[]): Promise<PullRequestWire[]> {
    if (rows.length === 0) return [];
    const places = new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]]);
    const issueWires = await this.issues.wires(
      rows.map((row) => row.issue),
      target.viewer,
      places,
      undefined,
      { pullMeta: false },
    );
    const repoWire = await this.views.one(target.repo, target.owner, target.viewer, await permissionsOnWire(target));
    const dir = this.content.open(target).dir;
    const names = [
      ...new Set(
        rows.flatMap((row) => [`refs/heads/${row.pull.baseBranch}`, ...(row.pull.headRepoId === target.repo.id ? [`refs/heads/${row.pull.headBranch}`] : [])]),
      ),
    ];
    // Branch tips through the batch readers (ref files read as git reads them, remembered by their stat): a page
    // costs no git process, where a for-each-ref per request was the larger part of a list's time.
    const found = target.repo.isEmpty ? new Map<string, string>() : await this.content.withReaders(() => this.objects.peelRefs(dir, names));
    // Heads in forks: the fork as the viewer may see it (null when they may not read its code, or it is gone)
    // and its branch's tip read in the fork.
    const forks = new Map<number, { wire: RepositoryWire | null; tips: Map<string, string> }>();
    for (const row of rows) {
      if (row.pull.headRepoId === target.repo.id || forks.has(row.pull.headRepoId)) continue;
      const place = await this.heads.of(row.pull, target);
      if (!place) {
        forks.set(row.pull.headRepoId, { wire: null, tips: new Map() });
        continue;
      }
      const permission = await this.policy.permission(target.viewer, place.repo, place.owner);
      const branches = [...new Set(rows.filter((other) => other.pull.headRepoId === place.repo.id).map((other) => `refs/heads/${other.pull.headBranch}`))];
      forks.set(place.repo.id, {
        wire: permission.canRead('repo.code') ? await this.views.one(place.repo, place.owner, target.viewer, permission.toWire()) : null,
        tips: place.repo.isEmpty ? new Map() : await this.content.withReaders(() => this.objects.peelRefs(place.dir, branches)),
      });
    }
    const mergerIds = [...new Set(rows.filter((row) => row.pull.hasMerged && row.pull.mergerId > 0).map((row) => row.pull.mergerId))];
    const mergers = new Map((await this.users.byIds(mergerIds)).map((user) => [user.id, user]));
    const reviews = this.reviews ? await this.reviews.summaries(rows.map((row) => row.issue.id)) : new Map<number, undefined>();
    return rows.map((row, n) => {
      const merger = mergers.get(row.pull.mergerId);
      const fork = forks.get(row.pull.headRepoId);
      return toPullRequestWire(row.pull, issueWires[n], {
        baseRepo: repoWire,
        headRepo: fork ? fork.wire : repoWire,
        baseSha: found.get(`refs/heads/${row.pull.baseBranch}`) ?? '',
        headSha: (fork ? fork.tips : found).get(`refs/heads/${row.pull.headBranch}`) ?? null,
        mergedBy: merger ? toUserWire(merger, target.viewer, this.siteUrls) : null,
        reviews: reviews.get(row.issue.id),
      });
    });
  }
}
