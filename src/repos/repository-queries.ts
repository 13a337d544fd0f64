import { InvalidInputError } from '../common/errors';
import type { RepositorySort } from './repository.store';
import { queryString } from '../http/query';

/**
 * Pure parsing of the list queries: GET /repos/search and the `order_by` of GET /user/repos.
 * Values are read as Forgejo reads form values: the first one, booleans as Go's ParseBool
 * (anything unrecognised is false), integers as 0 when they do not parse.
 */
export type RawQuery = Record<string, unknown>;

export interface SearchRequest {
  keyword: string;
  topicOnly: boolean;
  includeDescription: boolean;
  uid: number;
  priorityOwnerId: number;
  starredBy: number;
  /** `private`: default true for signed-in callers; false → public repositories of public owners only. */
  includePrivate: boolean;
  isPrivate?: boolean;
  template?: boolean;
  archived?: boolean;
  mode: '' | 'source' | 'fork' | 'mirror' | 'collaborative';
  exclusive: boolean;
  sort: RepositorySort[];
}

const SEARCH_MODES = ['', 'source', 'fork', 'mirror', 'collaborative'] as const;

/** Sort keys of GET /repos/search, ascending; `desc` reverses each part. */
const SEARCH_SORTS: Record<string, RepositorySort[]> = {
  alpha: [{ key: 'owner' }, { key: 'name' }],
  created: [{ key: 'created' }],
  updated: [{ key: 'updated' }],
  size: [{ key: 'size' }],
  git_size: [{ key: 'gitSize' }],
  lfs_size: [{ key: 'lfsSize' }],
  id: [{ key: 'id' }],
  stars: [{ key: 'stars' }],
  // Fork counts are not a sort key yet: this sorts by id alone.
  forks: [],
};

/** Caps on `q` (SECURITY.md): each comma-separated term is one more OR in the query. */
export const MAX_SEARCH_TERMS = 32;
export const MAX_SEARCH_KEYWORD_LENGTH = 1024;

export function parseSearchQuery(query: RawQuery, signedIn: boolean): SearchRequest {
  const keyword = text(query.q).trim();
  if (keyword.length > MAX_SEARCH_KEYWORD_LENGTH) throw new InvalidInputError(`search keyword is too long: at most ${MAX_SEARCH_KEYWORD_LENGTH} characters`);
  if (keyword.split(',').filter((term) => term !== '').length > MAX_SEARCH_TERMS) {
    throw new InvalidInputError(`too many search terms: at most ${MAX_SEARCH_TERMS}`);
  }
  const mode = text(query.mode);
  if (!(SEARCH_MODES as readonly string[]).includes(mode)) throw new InvalidInputError(`Invalid search mode: "${mode}"`);
  let sort: RepositorySort[] = [{ key: 'name' }];
  const sortMode = text(query.sort);
  if (sortMode !== '') {
    const order = text(query.order) || 'asc';
    if (order !== 'asc' && order !== 'desc') throw new InvalidInputError(`Invalid sort order: "${order}"`);
    // Own keys only: `sort=valueOf` must not find Object.prototype's.
    const parts = Object.hasOwn(SEARCH_SORTS, sortMode) ? SEARCH_SORTS[sortMode] : undefined;
    if (!parts) throw new InvalidInputError(`Invalid sort mode: "${sortMode}"`);
    sort = parts.map((part) => ({ ...part, descending: order === 'desc' }));
  }
  return {
    keyword,
    topicOnly: bool(query.topic),
    includeDescription: bool(query.includeDesc),
    uid: int(query.uid),
    priorityOwnerId: int(query.priority_owner_id),
    starredBy: int(query.starredBy),
    includePrivate: signedIn && (text(query.private) === '' || bool(query.private)),
    isPrivate: optionalBool(query.is_private),
    template: optionalBool(query.template),
    archived: optionalBool(query.archived),
    mode: mode as SearchRequest['mode'],
    exclusive: bool(query.exclusive),
    sort,
  };
}

/** `order_by` of GET /user/repos; absent → name ascending. */
const USER_REPOSITORY_ORDERS: Record<string, RepositorySort[]> = {
  name: [{ key: 'name' }],
  id: [{ key: 'id' }],
  newest: [{ key: 'created', descending: true }],
  oldest: [{ key: 'created' }],
  recentupdate: [{ key: 'updated', descending: true }],
  leastupdate: [{ key: 'updated' }],
  alphabetically: [{ key: 'owner' }, { key: 'name' }],
  reversealphabetically: [
    { key: 'owner', descending: true },
    { key: 'name', descending: true },
  ],
  size: [{ key: 'size' }],
  reversesize: [{ key: 'size', descending: true }],
  gitsize: [{ key: 'gitSize' }],
  reversegitsize: [{ key: 'gitSize', descending: true }],
  lfssize: [{ key: 'lfsSize' }],
  reverselfssize: [{ key: 'lfsSize', descending: true }],
  moststars: [{ key: 'stars', descending: true }],
  feweststars: [{ key: 'stars' }],
  mostforks: [],
  fewestforks: [],
};

export function parseUserRepositoryOrder(query: RawQuery): RepositorySort[] {
  const orderBy = text(query.order_by);
  if (orderBy === '') return USER_REPOSITORY_ORDERS.name;
  const sort = Object.prototype.hasOwnProperty.call(USER_REPOSITORY_ORDERS, orderBy) ? USER_REPOSITORY_ORDERS[orderBy] : undefined;
  if (!sort) throw new InvalidInputError('invalid order_by');
  return sort;
}

function text(value: unknown): string {
  return queryString(value) ?? '';
}

/** Go's strconv.ParseBool, with a parse failure read as false (Forgejo's FormBool). */
function bool(value: unknown): boolean {
  return ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text(value));
}

function optionalBool(value: unknown): boolean | undefined {
  return text(value) === '' ? undefined : bool(value);
}

function int(value: unknown): number {
  const raw = text(value).trim();
  if (!/^[+-]?\d+$/.test(raw)) return 0;
  const parsed = Number(raw);
  return Number.isSafeInteger(parsed) ? parsed : 0;
}
