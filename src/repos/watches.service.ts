import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { UserVisibility } from '../users/user-visibility';
import { UsersService } from '../users/users.service';
import type { RepositoryTarget } from '../access/repository-policy';
import { RepositoryAccess, visibilityScope } from './repository-access';
import { toWatchInfoWire } from './repository.mapper';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire, WatchInfoWire } from './repository.wire';
import { WatchStore } from './watch.store';
import { SiteUrls } from '../common/site-urls';

/**
 * Watches: the order of all three routes is scope → repository missing or invisible (404) →
 * anonymous (401). `watchers_count` changes only when a watch row is really inserted or deleted.
 */
@Injectable()
export class WatchesService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly watches: WatchStore,
    private readonly repositories: RepositoryStore,
    private readonly usersService: UsersService,
    private readonly userVisibility: UserVisibility,
    private readonly access: RepositoryAccess,
    private readonly views: RepositoryViews,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** GET: 200 WatchInfo when watching, otherwise 404. */
  async get(target: RepositoryTarget): Promise<WatchInfoWire> {
    const { repo, owner, viewer } = target;
    requireSignedIn(viewer);
    if (!(await this.watches.exists(viewer.user.id, repo.id))) throw new NotFoundError();
    return toWatchInfoWire(repo, owner, this.siteUrls);
  }

  /** PUT: the route admitted signed-in callers only. */
  async watch(target: RepositoryTarget): Promise<WatchInfoWire> {
    const { repo, owner, viewer } = target;
    const uid = viewer.user!.id;
    try {
      await this.transactions.run(async (tx) => {
        await this.watches.insert(tx, uid, repo.id, this.clock.nowUnix());
        if (!(await this.repositories.addToCounter(tx, repo.id, 'numWatches', 1))) throw new NotFoundError();
      });
    } catch (error) {
      // Already watching: PUT is idempotent.
      if (!isUniqueViolation(error)) throw error;
    }
    return toWatchInfoWire(repo, owner, this.siteUrls);
  }

  /** DELETE: the route admitted signed-in callers only. */
  async unwatch(target: RepositoryTarget): Promise<void> {
    const { repo, viewer } = target;
    const uid = viewer.user!.id;
    await this.transactions.run(async (tx) => {
      if (await this.watches.delete(tx, uid, repo.id)) await this.repositories.addToCounter(tx, repo.id, 'numWatches', -1);
    });
  }

  /** GET /user/subscriptions. */
  async listMine(viewer: AuthContext, page: PageQuery): Promise<Page<RepositoryWire>> {
    requireSignedIn(viewer);
    return this.listWatchedBy(viewer, viewer.user.id, page);
  }

  /** GET /users/{username}/subscriptions (users group B). */
  async listOf(viewer: AuthContext, username: string, page: PageQuery): Promise<Page<RepositoryWire>> {
    const user = await this.usersService.byName(username);
    await this.userVisibility.assertVisible(viewer, user);
    return this.listWatchedBy(viewer, user.id, page);
  }

  private async listWatchedBy(viewer: AuthContext, uid: number, page: PageQuery): Promise<Page<RepositoryWire>> {
    const access = await this.access.of(viewer);
    return this.views.page(await this.repositories.listWatchedBy(uid, visibilityScope(access), page), viewer, access);
  }
}
