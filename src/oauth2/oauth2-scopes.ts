import { SCOPE_CATEGORIES, ScopeSet } from '../auth/scopes';

/** The OpenID Connect scopes, which choose claims, not API access. */
export const IDENTITY_SCOPES = ['openid', 'profile', 'email', 'groups'] as const;

/** API token scopes a client may also ask for, to narrow what its access token may do. */
export const API_SCOPES = ['all', 'public-only', ...SCOPE_CATEGORIES.flatMap((category) => [`read:${category}`, `write:${category}`])];

/**
 * What an OAuth2 access token may do on the API, as Forgejo decides it: the granted scopes that are API token
 * scopes, and every scope when the grant names none of them.
 */
export function apiScopesOfGrant(granted: string): ScopeSet {
  const items = granted.split(/[\s,]+/).filter((scope) => API_SCOPES.includes(scope));
  return ScopeSet.parse(items.length > 0 ? items : ['all']);
}
