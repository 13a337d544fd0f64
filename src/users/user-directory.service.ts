import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { Page, PageQuery } from '../common/paging';
import { systemUser } from './system-users';
import { UserEntity } from './user.entity';
import { UserSearchQuery, UserSearchSort, UserSearchStore } from './user-search.store';
import { UserVisibility } from './user-visibility';
import { UsersService } from './users.service';

const SORTS: readonly UserSearchSort[] = ['oldest', 'newest', 'alphabetically', 'reversealphabetically', 'recentupdate', 'leastupdate'];

/** The raw query string of GET /users/search. */
export interface UserSearchParameters {
  q?: unknown;
  uid?: unknown;
  sort?: unknown;
}

/** Reading users as other callers see them: profiles (users groups A and B) and the user search. */
@Injectable()
export class UserDirectoryService {
  constructor(
    private readonly users: UsersService,
    private readonly visibility: UserVisibility,
    private readonly searchStore: UserSearchStore,
  ) {}

  /**
   * A user or organisation named in a `/users/{username}...` path, after the route's scope (and, for group B,
   * sign-in) checks: unknown → 404, public-only token on a non-public user → 403, not visible → 404.
   */
  async visibleByName(viewer: AuthContext, name: string): Promise<UserEntity> {
    const user = await this.users.byName(name);
    await this.visibility.assertVisible(viewer, user);
    return user;
  }

  /** GET /users/search: individual users only, filtered and paged in SQL. */
  async search(viewer: AuthContext, parameters: UserSearchParameters, page: PageQuery): Promise<Page<UserEntity>> {
    const query = parseSearch(parameters);
    const synthetic = systemUser(query.uid);
    if (synthetic) return { items: page.offset === 0 ? [synthetic] : [], total: 1 };
    return this.searchStore.search(viewer, query, page);
  }

  /**
   * GET /admin/users (a site admin: every individual user): `q` and `sort` as the user search; `login_name`
   * the exact login (Anvil has no external sign-in sources, so the login name is the user name).
   */
  async adminSearch(viewer: AuthContext, parameters: AdminUserSearchParameters, page: PageQuery): Promise<Page<UserEntity>> {
    const loginName = (firstString(parameters.login_name) ?? '').trim();
    // Every account signs in locally (source 0): another source has no users.
    const source = (firstString(parameters.source_id) ?? '').trim();
    if (/^\d+$/.test(source) && Number(source) > 0) return { items: [], total: 0 };
    return this.searchStore.search(viewer, { ...parseSearch({ q: parameters.q, sort: parameters.sort }), loginName }, page);
  }
}

/** The raw query string of GET /admin/users. */
export interface AdminUserSearchParameters extends UserSearchParameters {
  login_name?: unknown;
  source_id?: unknown;
}

function parseSearch(parameters: UserSearchParameters): UserSearchQuery {
  const sort = firstString(parameters.sort) ?? '';
  const uid = (firstString(parameters.uid) ?? '').trim();
  return {
    keyword: (firstString(parameters.q) ?? '').trim(),
    // Forgejo reads uid as an integer and ignores anything else (0: no restriction).
    uid: /^-?\d+$/.test(uid) && Number.isSafeInteger(Number(uid)) ? Number(uid) : 0,
    // An unknown sort is not an error: it sorts alphabetically.
    sort: (SORTS as readonly string[]).includes(sort) ? (sort as UserSearchSort) : 'alphabetically',
  };
}

function firstString(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && typeof value[0] === 'string') return value[0];
  return undefined;
}
