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

/**
 * What an access token may do on the API: bounded by what the user consented to in the grant. A token's own
 * scope (asked at refresh, or by a silent re-authorization) may narrow the grant's API scopes, never widen
 * them: a token naming no API scope has the grant's, not every scope.
 */
export function apiScopesOfToken(tokenScope: string, grantScope: string): ScopeSet {
  const granted = apiScopesOfGrant(grantScope);
  const asked = tokenScope.split(/[\s,]+/).filter((scope) => API_SCOPES.includes(scope));
  return asked.length === 0 ? granted : ScopeSet.parse(asked).within(granted);
}

/** True when a grant of these scopes lets its tokens do everything the user may (no API scope, or `all`). */
export function grantsFullAccess(scopes: readonly string[]): boolean {
  const granted = apiScopesOfGrant(scopes.join(' '));
  return !granted.publicOnly && granted.toList().includes('all');
}
