import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { faultPoint } from '../common/fault-points';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { UserVisibility } from '../users/user-visibility';
import { UserAccounts } from '../users/user-accounts';
import { UsersService } from '../users/users.service';
import type { RepositoryTarget } from '../access/repository-policy';
import { RepositoryAccess, visibilityScope } from './repository-access';
import { RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire } from './repository.wire';
import { StarStore } from './star.store';

/**
 * Stars: idempotent; the repository's `stars_count` and the user's `starred_repos_count` change
 * in the star row's transaction, and only when a row is really inserted or deleted.
 */
@Injectable()
export class StarsService {
  constructor(
    private readonly stars: StarStore,
    private readonly repositories: RepositoryStore,
    private readonly users: UserAccounts,
    private readonly usersService: UsersService,
    private readonly userVisibility: UserVisibility,
    private readonly access: RepositoryAccess,
    private readonly views: RepositoryViews,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** GET /user/starred/{owner}/{repo}: 204 when starred, otherwise 404. */
  async assertStarred(target: RepositoryTarget): Promise<void> {
    const { repo, viewer } = target;
    requireSignedIn(viewer);
    if (!(await this.stars.exists(viewer.user.id, repo.id))) throw new NotFoundError();
  }

  async star(target: RepositoryTarget): Promise<void> {
    const { repo, viewer } = target;
    requireSignedIn(viewer);
    const uid = viewer.user.id;
    const now = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      // Already starred (or a concurrent request starred it first): nothing to do.
      if (!(await this.stars.insertIfAbsent(tx, uid, repo.id, now))) return;
      // The repository may have been deleted meanwhile: then nothing is kept.
      if (!(await this.repositories.addToCounter(tx, repo.id, 'numStars', 1))) throw new NotFoundError();
      await this.users.addToCounter(tx, uid, 'numStars', 1);
      faultPoint('star.written');
    });
  }

  async unstar(target: RepositoryTarget): Promise<void> {
    const { repo, viewer } = target;
    requireSignedIn(viewer);
    const uid = viewer.user.id;
    await this.transactions.run(async (tx) => {
      if (!(await this.stars.delete(tx, uid, repo.id))) return;
      await this.repositories.addToCounter(tx, repo.id, 'numStars', -1);
      await this.users.addToCounter(tx, uid, 'numStars', -1);
    });
  }

  /** GET /user/starred: what the caller starred and can still see. */
  async listMine(viewer: AuthContext, page: PageQuery): Promise<Page<RepositoryWire>> {
    requireSignedIn(viewer);
    return this.listStarredBy(viewer, viewer.user.id, page);
  }

  /** GET /users/{username}/starred (users group B): what that user starred that the caller can see. */
  async listOf(viewer: AuthContext, username: string, page: PageQuery): Promise<Page<RepositoryWire>> {
    const user = await this.usersService.byName(username);
    await this.userVisibility.assertVisible(viewer, user);
    return this.listStarredBy(viewer, user.id, page);
  }

  private async listStarredBy(viewer: AuthContext, uid: number, page: PageQuery): Promise<Page<RepositoryWire>> {
    const access = await this.access.of(viewer);
    return this.views.page(await this.repositories.listStarredBy(uid, visibilityScope(access), page), viewer, access);
  }
}
