import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { dependencyFailure } from '../common/dependency-errors';
import { DomainError, NotFoundError, SearchError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { OrganizationMemberships } from '../users/organization-memberships';
import { UserVisibility } from '../users/user-visibility';
import { UserEntity, Visibility } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { UsersService } from '../users/users.service';
import { RepositoryAccess, visibilityScope, ownerRepositoryFilter } from './repository-access';
import { parseSearchQuery, parseUserRepositoryOrder, RawQuery } from './repository-queries';
import { RepositoryCriteria, RepositoryStore } from './repository.store';
import { RepositoryViews } from './repository-views';
import type { RepositoryWire } from './repository.wire';

const NOTHING: Page<never> = { items: [], total: 0 };

/** Repository lists: search, the caller's repositories, a user's repositories. Visibility is filtered in SQL. */
@Injectable()
export class RepositoryListsService {
  constructor(
    private readonly repositories: RepositoryStore,
    private readonly access: RepositoryAccess,
    private readonly organizations: OrganizationMemberships,
    private readonly users: UsersService,
    private readonly userVisibility: UserVisibility,
    private readonly views: RepositoryViews,
    private readonly accounts: UserAccounts,
  ) {}

  /** GET /repos/search: bad mode/sort/order → 422; any other failure → SearchError. */
  async search(viewer: AuthContext, query: RawQuery, page: PageQuery): Promise<Page<RepositoryWire>> {
    const request = parseSearchQuery(query, viewer.isSignedIn);
    try {
      const access = await this.access.of(viewer);
      const criteria: RepositoryCriteria = {
        scope: visibilityScope(access),
        publicOwnersOnly: !request.includePrivate,
        isPrivate: request.isPrivate,
        isTemplate: request.template,
        archived: request.archived,
        sort: request.sort,
      };
      // As Forgejo: a source is neither a fork nor a mirror.
      if (request.mode === 'source') Object.assign(criteria, { isMirror: false, isFork: false });
      if (request.mode === 'fork') criteria.isFork = true;
      if (request.mode === 'collaborative') criteria.isMirror = false;
      if (request.mode === 'mirror') criteria.isMirror = true;
      // Users named by id in the query are subject to visibility as those named in a path are: an invisible
      // one yields nothing rather than what they starred or which organisations they own.
      for (const id of [request.uid, request.starredBy]) {
        if (id > 0 && !(await this.visibleById(viewer, id))) return NOTHING;
      }
      if (request.uid > 0) {
        // Owned by uid, or reachable as an owner of the owning organisation; `exclusive` keeps the owned ones,
        // `collaborative` the others.
        const ownedOrgs = request.exclusive ? [] : await this.organizations.ownedOrgIds(request.uid);
        criteria.ownerIds = request.mode === 'collaborative' && !request.exclusive ? ownedOrgs : [request.uid, ...ownedOrgs];
      }
      if (request.starredBy > 0) criteria.starredBy = request.starredBy;
      if (request.topicOnly && request.keyword !== '') {
        // With `topic`, each comma-separated term is a topic name matched exactly, through the topic index.
        criteria.topics = [
          ...new Set(
            request.keyword
              .split(',')
              .map((term) => term.trim().toLowerCase())
              .filter((term) => term !== ''),
          ),
        ];
      } else if (request.keyword !== '') {
        const alternatives = request.keyword.split(',').filter((alternative) => alternative !== '');
        const pieces = request.keyword.split('/');
        const ownerAndName = pieces.length === 2 ? (pieces as [string, string]) : undefined;
        if (alternatives.length > 0) criteria.keyword = { alternatives, includeDescription: request.includeDescription, ownerAndName };
        if (ownerAndName) criteria.priorityOwnerName = ownerAndName[0];
      }
      // Only ordering, but still a user named by id: an invisible one changes nothing (not even the order).
      if (request.priorityOwnerId > 0 && (await this.visibleById(viewer, request.priorityOwnerId))) criteria.priorityOwnerId = request.priorityOwnerId;
      return await this.views.page(await this.repositories.list(criteria, page), viewer, access);
    } catch (error) {
      if (error instanceof DomainError) throw error;
      const failure = dependencyFailure(error);
      if (failure) {
        throw new SearchError(failure.message, {
          status: failure.status,
          retryAfterSeconds: (failure as { retryAfterSeconds?: number }).retryAfterSeconds,
          cause: error,
        });
      }
      throw new SearchError((error as Error).message, { cause: error });
    }
  }

  private async visibleById(viewer: AuthContext, id: number): Promise<boolean> {
    const user = await this.accounts.byId(id);
    if (!user) return true;
    return !(viewer.publicOnly && user.visibility !== Visibility.Public && !viewer.is(user.id)) && (await this.userVisibility.canSee(viewer, user));
  }

  /**
   * GET /user/repos: the caller's repositories, those of organisations where a team of theirs includes all
   * repositories, and those they collaborate on or reach through a team, private ones included (a public-only
   * token still sees only public ones).
   */
  async listMine(viewer: AuthContext, query: RawQuery, page: PageQuery): Promise<Page<RepositoryWire>> {
    const sort = parseUserRepositoryOrder(query);
    const access = await this.access.of(viewer);
    const ownerIds = [viewer.user!.id, ...(access.standing?.allRepositoryOrgIds ?? [])];
    // As Forgejo: also what the caller collaborates on or reaches through a team.
    const criteria: RepositoryCriteria = { scope: visibilityScope(access), ownerIds, sort };
    if (access.standing?.hasRepositoryGrants) criteria.orGrantedTo = viewer.user!.id;
    return this.views.page(await this.repositories.list(criteria, page), viewer, access);
  }

  /** GET /users/{username}/repos (users group A): owned repositories the caller can see, by id. */
  async listOwnedBy(viewer: AuthContext, username: string, page: PageQuery): Promise<Page<RepositoryWire>> {
    const owner = await this.users.byName(username);
    return this.listOfOwner(viewer, owner, page);
  }

  /** GET /orgs/{org}/repos: as a user's list (by id, the caller's visibility), for an organisation only. */
  async listOfOrganization(viewer: AuthContext, orgName: string, page: PageQuery): Promise<Page<RepositoryWire>> {
    const org = await this.accounts.byName(orgName);
    if (!org || !org.isOrganization) throw new NotFoundError();
    return this.listOfOwner(viewer, org, page);
  }

  private async listOfOwner(viewer: AuthContext, owner: UserEntity, page: PageQuery): Promise<Page<RepositoryWire>> {
    await this.userVisibility.assertVisible(viewer, owner);
    const access = await this.access.of(viewer);
    const filter = ownerRepositoryFilter(visibilityScope(access), owner);
    const repositories =
      filter === 'none'
        ? { items: [], total: 0 }
        : filter === 'scoped'
          ? await this.repositories.list({ scope: visibilityScope(access), ownerIds: [owner.id], sort: [{ key: 'id' }] }, page)
          : await this.repositories.listOfOwner(owner.id, filter, page);
    return this.views.page(repositories, viewer, access, [owner]);
  }
}
