import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { LRUCache } from 'lru-cache';
import { ScopeSet } from '../auth/scopes';
import { Clock } from '../common/time';
import type { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { OAuth2RecordStore } from './oauth2-record.store';
import { apiScopesOfToken } from './oauth2-scopes';

/** The provider's access tokens: 43 characters of base64url (API tokens are 40 hex characters). */
const OAUTH2_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** Tokens remembered as found valid by this process (a few dozen bytes each). */
const VALID_KEPT = 10_000;

/**
 * Resolves an OAuth2 access token presented to the API or to git over HTTP. It is read from the database on
 * every request, with its grant: deleting the application or revoking the grant stops it at the next request,
 * and the grant's consented scopes bound what it may do.
 */
@Injectable()
export class OAuth2AccessTokens {
  /** SHA-256 of the tokens this process found valid, the least recently used going first. */
  private readonly foundValid = new LRUCache<string, true>({ max: VALID_KEPT });

  constructor(
    private readonly records: OAuth2RecordStore,
    private readonly users: UserAccounts,
    private readonly clock: Clock,
  ) {}

  static looksLikeOne(token: string): boolean {
    return OAUTH2_TOKEN_PATTERN.test(token);
  }

  /**
   * Whether this process found the token valid before: then it is no guess, and is not counted against the
   * sign-in limits (credentials.ts). It is still read at every request, so a revocation counts at once.
   */
  verifiedBefore(token: string): boolean {
    return OAuth2AccessTokens.looksLikeOne(token) && this.foundValid.has(digest(token));
  }

  /** The token's user and API scopes, or null when it is unknown, expired or revoked. */
  async authenticate(token: string): Promise<{ user: UserEntity; scopes: ScopeSet } | null> {
    if (!OAuth2AccessTokens.looksLikeOne(token)) return null;
    const found = await this.resolve(token);
    if (found) this.foundValid.set(digest(token), true);
    else this.foundValid.delete(digest(token));
    return found;
  }

  private async resolve(token: string): Promise<{ user: UserEntity; scopes: ScopeSet } | null> {
    const now = this.clock.nowUnix();
    const payload = await this.records.find('AccessToken', token, now);
    if (!payload || typeof payload.grantId !== 'string' || typeof payload.accountId !== 'string') return null;
    if (typeof payload.exp === 'number' && payload.exp <= now) return null;
    const grantScope = await this.records.grantScope(payload.grantId, now);
    if (grantScope === undefined) return null;
    const id = /^\d{1,16}$/.test(payload.accountId) ? Number(payload.accountId) : 0;
    const user = id > 0 ? await this.users.byId(id) : null;
    if (!user || user.isOrganization) return null;
    return { user, scopes: apiScopesOfToken(typeof payload.scope === 'string' ? payload.scope : '', grantScope) };
  }
}

function digest(token: string): string {
  return createHash('sha256').update(token).digest('base64');
}
