import { Injectable } from '@nestjs/common';
import { AuthContext } from '../auth/auth-context';
import type { RepositoryTarget } from '../access/repository-policy';
import { RepositoryPolicy } from '../access/repository-policy';
import { BadRequestError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { IssueConfig } from '../config/slices';
import { queryKey, RecentReads } from '../database/recent-reads';
import { Transactions } from '../database/transactions';
import { LabelLookup } from '../labels/label-lookup';
import { MilestoneLookup } from '../milestones/milestone-lookup';
import { RepositoryAccess, visibilityScope } from '../repos/repository-access';
import { RepositoryDirectory } from '../repos/repository-directory';
import type { RepositoryEntity } from '../repos/repository.entity';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { totalFromCounters } from './issue-counts';
import { IssueCriteria, IssueStore } from './issue.store';
import { queryTime } from './issue-times';
import type { IssueWire } from './issue.wire';
import { queryWords } from './issue-words';
import { MAX_NAMES } from './issue-limits';
import { IssueQuery, IssuesService } from './issues.service';

function text(query: IssueQuery, name: string): string {
  const value = query[name];
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return '';
}

/** A boolean query parameter as Go's ParseBool reads it (`1`, `t`, `true`, …); anything else is false. */
function flag(query: IssueQuery, name: string): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text(query, name));
}

/**
 * Pages kept at once (recent-reads.ts): a page of 30 issues is about 48 KB of JSON and three times that as
 * objects, so at most some 15 MB; polling clients ask a few pages again and again.
 */
const KEPT_PAGES = 32;

/**
 * Lists of issues: a repository's (open by default, newest first) and the search across the repositories the
 * caller may read, with Forgejo's filters (`state`, `type`, `labels`, `milestones`, `q`, `since`/`before`, the
 * users); `q` reads the word index, never the bodies. A page asked again is answered from the one read
 * moments ago while no write can have changed it (ISSUE_LIST_CACHE_MS).
 */
@Injectable()
export class IssueListsService {
  private readonly recent: RecentReads<Page<IssueWire>>;

  constructor(
    private readonly issueService: IssuesService,
    private readonly issues: IssueStore,
    private readonly users: UserAccounts,
    private readonly labels: LabelLookup,
    private readonly milestones: MilestoneLookup,
    private readonly repositories: RepositoryDirectory,
    private readonly policy: RepositoryPolicy,
    private readonly access: RepositoryAccess,
    transactions: Transactions,
    config: IssueConfig,
  ) {
    this.recent = new RecentReads(transactions, config.listCacheMs, KEPT_PAGES);
  }

  list(target: RepositoryTarget, query: IssueQuery, page: PageQuery): Promise<Page<IssueWire>> {
    this.issueService.assertTracker(target);
    const key = `list ${target.repo.id} ${target.viewer.viewKey} ${page.offset} ${page.limit} ${queryKey(query)}`;
    return this.recent.get(key, () => this.read(target, query, page));
  }

  private async read(target: RepositoryTarget, query: IssueQuery, page: PageQuery): Promise<Page<IssueWire>> {
    const criteria = await this.criteria(query, target.repo);
    if (criteria === 'nothing') return { items: [], total: 0 };
    const found = await this.issues.list({ ...criteria, repoId: target.repo.id }, page, totalFromCounters(target.repo, criteria));
    return {
      items: await this.issueService.wires(found.items, target.viewer, new Map([[target.repo.id, { repo: target.repo, owner: target.owner }]])),
      total: found.total,
    };
  }

  /**
   * GET /repos/issues/search: issues of every repository the caller may read, newest first; `labels` is any of
   * them (by name, in any repository), an unknown `owner` a 400.
   */
  search(viewer: AuthContext, query: IssueQuery, page: PageQuery): Promise<Page<IssueWire>> {
    return this.recent.get(`search ${viewer.viewKey} ${page.offset} ${page.limit} ${queryKey(query)}`, () => this.find(viewer, query, page));
  }

  private async find(viewer: AuthContext, query: IssueQuery, page: PageQuery): Promise<Page<IssueWire>> {
    const criteria = await this.criteria(query, null);
    if (criteria === 'nothing') return { items: [], total: 0 };
    const access = await this.access.of(viewer);
    const ownerName = text(query, 'owner');
    if (ownerName !== '') {
      const owner = await this.users.byName(ownerName);
      if (!owner) throw new BadRequestError(`user does not exist [uid: 0, name: ${ownerName}]`);
      criteria.ownerId = owner.id;
    }
    // The caller's own issues: created, assigned or mentioned (ignored for anonymous callers, as Forgejo).
    const me = viewer.user?.id;
    if (me !== undefined) {
      if (flag(query, 'created')) criteria.posterId = me;
      if (flag(query, 'assigned')) criteria.assigneeId = me;
      if (flag(query, 'mentioned')) criteria.mentionedId = me;
    }
    const found = await this.issues.list({ ...criteria, scope: visibilityScope(access) }, page);
    const repos = new Map<number, { repo: RepositoryEntity; owner: UserEntity }>();
    const pageRepos = await this.repositories.byIds([...new Set(found.items.map((issue) => issue.repoId))]);
    const owners = new Map((await this.users.byIds([...new Set(pageRepos.map((repo) => repo.ownerId))])).map((owner) => [owner.id, owner]));
    for (const repo of pageRepos) {
      const owner = owners.get(repo.ownerId);
      if (owner) repos.set(repo.id, { repo, owner });
    }
    // A team may give a repository's code but not its issues: such issues leave the page.
    const permissions = await this.policy.permissions(viewer, access.standing, [...repos.values()]);
    const readable = found.items.filter((issue) => permissions.get(issue.repoId)?.canRead('repo.issues'));
    return { items: await this.issueService.wires(readable, viewer, repos), total: found.total - (found.items.length - readable.length) };
  }

  /** The list filters of a query; 'nothing' when a filter names a label or milestone that does not exist. */
  private async criteria(query: IssueQuery, repo: RepositoryEntity | null): Promise<IssueCriteria | 'nothing'> {
    const before = queryTime(query.before, 'before');
    const since = queryTime(query.since, 'since');
    const criteria: IssueCriteria = {};
    const state = text(query, 'state');
    if (state !== 'all') criteria.isClosed = state === 'closed';
    // Without a type, issues and pull requests alike.
    const type = text(query, 'type');
    if (type === 'pulls') criteria.isPull = true;
    else if (type === 'issues') criteria.isPull = false;
    const q = text(query, 'q').trim();
    if (q !== '' && !q.includes('\0')) {
      const words = queryWords(q);
      if (words.length > 0) criteria.words = words;
    }
    if (since !== undefined) criteria.updatedAfter = since;
    if (before !== undefined) criteria.updatedBefore = before;
    const labelNames = text(query, 'labels')
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
    if (labelNames.length > MAX_NAMES) throw new InvalidInputError(`at most ${MAX_NAMES} labels`);
    if (labelNames.length > 0 && !repo) {
      // The search across repositories: any of the labels of that name, wherever they are, as Forgejo.
      criteria.anyLabelIds = await this.labels.idsNamedAnywhere([...new Set(labelNames)]);
      if (criteria.anyLabelIds.length === 0) return 'nothing';
    } else if (labelNames.length > 0 && repo) {
      const found = await this.labels.byNames(repo.id, repo.ownerId, labelNames);
      const ids = [...new Set(found.map((label) => label.id))];
      // Every named label must exist and be on the issue.
      if (new Set(found.map((label) => label.name)).size < new Set(labelNames).size) return 'nothing';
      criteria.labelIds = ids;
    }
    // `milestones`: names, else ids; as Forgejo, parts that match nothing are dropped, and if none is left the
    // list is not narrowed at all.
    const milestoneParts = text(query, 'milestones')
      .split(',')
      .filter((part) => part !== '');
    if (milestoneParts.length > MAX_NAMES) throw new InvalidInputError(`at most ${MAX_NAMES} milestones`);
    if (milestoneParts.length > 0) {
      const ids = repo ? await this.milestones.idsNamed(repo.id, milestoneParts) : await this.milestones.idsNamedAnywhere(milestoneParts);
      if (ids.length > 0) criteria.milestoneIds = ids;
    }
    for (const key of ['created_by', 'assigned_by', 'mentioned_by'] as const) {
      const name = text(query, key);
      if (name === '') continue;
      const user = await this.users.byName(name);
      if (!user) throw new NotFoundError();
      if (key === 'created_by') criteria.posterId = user.id;
      if (key === 'assigned_by') criteria.assigneeId = user.id;
      if (key === 'mentioned_by') criteria.mentionedId = user.id;
    }
    return criteria;
  }
}
