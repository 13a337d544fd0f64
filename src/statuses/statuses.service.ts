import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { InvalidInputError } from '../common/errors';
import type { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { ContentRefs } from '../content/content-refs';
import { ContentRepositories, ContentRepository } from '../content/content-repository';
import { Transactions } from '../database/transactions';
import { RepositoryEvents } from '../events/repository-events';
import { RepositoriesService } from '../repos/repositories.service';
import { toUserWire } from '../users/user.mapper';
import { UserAccounts } from '../users/user-accounts';
import { Claims } from '../claims/claims';
import { CAPS, tooMany } from '../common/caps';
import type { UserWire } from '../users/user.wire';
import type { CommitStatusEntity } from './commit-status.entity';
import { combinedState, toCommitStatusWire } from './commit-status.mapper';
import { CommitStatusStore, StatusSort } from './commit-status.store';
import type { CombinedStatusWire, CommitStatusWire } from './commit-status.wire';
import { COMMIT_STATUS_STATES, CreateStatusOption } from './create-status.option';
import { SiteUrls } from '../common/site-urls';

/**
 * Commit statuses (CI results): any reader sees them, writers (push permission) add them; each one added is
 * also the `status` event, recorded in the same transaction.
 */
@Injectable()
export class StatusesService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly content: ContentRepositories,
    private readonly refs: ContentRefs,
    private readonly repositories: RepositoriesService,
    private readonly statuses: CommitStatusStore,
    private readonly users: UserAccounts,
    private readonly transactions: Transactions,
    private readonly events: RepositoryEvents,
    private readonly clock: Clock,
    private readonly claims: Claims,
  ) {}

  private readonly createdListeners: ((repoId: number, sha: string) => Promise<void>)[] = [];

  /** Hears of each new status once it is committed (scheduled merges wait for them). */
  onCreated(listener: (repoId: number, sha: string) => Promise<void>): void {
    this.createdListeners.push(listener);
  }

  /** POST /repos/{owner}/{repo}/statuses/{sha}. Order: 404 → 401 → 403 → body 422 → state 422 → commit 422. */
  async create(repository: RepositoryTarget, sha: string, option: CreateStatusOption): Promise<CommitStatusWire> {
    const viewer = repository.viewer;
    const target = this.content.open(repository);
    const state = option.state ?? '';
    if (!(COMMIT_STATUS_STATES as readonly string[]).includes(state)) throw new InvalidInputError(`invalid state: "${state}"`);
    const commit = target.repo.isEmpty || !/^[0-9a-fA-F]{4,64}$/.test(sha) ? null : await this.content.withReaders(() => this.refs.resolve(target, sha));
    if (!commit) throw new InvalidInputError(`object does not exist [id: ${sha}]`);
    const now = this.clock.nowUnix();
    const status = await this.transactions.run(async (tx) => {
      await this.claims.serializeWriters(tx, `statuses:${target.repo.id}:${commit.commit}`);
      if ((await this.statuses.countOfCommit(tx, target.repo.id, commit.commit)) >= CAPS.statusesPerCommit) {
        throw new InvalidInputError(tooMany('statuses', 'a commit', CAPS.statusesPerCommit));
      }
      const row = await this.statuses.insert(tx, {
        repoId: target.repo.id,
        sha: commit.commit,
        state,
        targetUrl: option.target_url ?? '',
        description: option.description ?? '',
        context: option.context ?? '',
        creatorId: viewer.user!.id,
        createdUnix: now,
        updatedUnix: now,
      });
      await this.events.record(tx, { kind: 'status', repo: target.repo, senderId: viewer.user!.id, status: { ...row } });
      return row;
    });
    this.events.committed();
    for (const listener of this.createdListeners) await listener(target.repo.id, commit.commit).catch(() => undefined);
    return toCommitStatusWire(status, target.urls.api, toUserWire(viewer.user!, viewer, this.siteUrls));
  }

  /** GET …/statuses/{sha} and …/commits/{ref}/statuses: every status of the commit, paged. */
  async list(repository: RepositoryTarget, ref: string, filter: { state: string; sort: string }, page: PageQuery): Promise<Page<CommitStatusWire>> {
    const viewer = repository.viewer;
    const target = await this.content.open(repository);
    const sha = await this.resolve(target, ref);
    const sort = (['oldest', 'recentupdate', 'leastupdate', 'leastindex', 'highestindex'].includes(filter.sort) ? filter.sort : '') as StatusSort;
    const found = await this.statuses.list(target.repo.id, sha, { state: filter.state, sort }, page);
    return { items: await this.wires(viewer, target, found.items), total: found.total };
  }

  /** GET …/commits/{ref}/status: the latest status per context and their combined state. */
  async combined(repository: RepositoryTarget, ref: string, page: PageQuery): Promise<{ combined: CombinedStatusWire; total: number }> {
    const viewer = repository.viewer;
    const target = await this.content.open(repository);
    const sha = await this.resolve(target, ref);
    const found = await this.statuses.latestPerContext(target.repo.id, sha, page);
    if (found.items.length === 0) {
      // Forgejo answers an empty object's zero values when a commit has no status.
      return { combined: { state: '', sha: '', total_count: 0, statuses: null, repository: null, commit_url: '', url: '' }, total: 0 };
    }
    const repositoryWire = await this.repositories.get(repository);
    return {
      combined: {
        state: combinedState(found.items),
        sha,
        total_count: found.items.length,
        statuses: await this.wires(viewer, target, found.items),
        repository: repositoryWire,
        commit_url: '',
        url: '',
      },
      total: found.total,
    };
  }

  /** A branch, tag or (abbreviated) commit id; an unknown ref gives no statuses (as Forgejo: the name is the sha). */
  private async resolve(target: ContentRepository, ref: string): Promise<string> {
    if (target.repo.isEmpty) return ref;
    const found = await this.content.withReaders(() => this.refs.resolve(target, ref));
    return found ? found.commit : ref;
  }

  private async wires(viewer: AuthContext, target: ContentRepository, statuses: CommitStatusEntity[]): Promise<CommitStatusWire[]> {
    const site = this.siteUrls;
    const creators = new Map<number, UserWire>();
    for (const user of await this.users.byIds([...new Set(statuses.map((status) => status.creatorId))])) creators.set(user.id, toUserWire(user, viewer, site));
    return statuses.map((status) => toCommitStatusWire(status, target.urls.api, creators.get(status.creatorId) ?? null));
  }
}
