import { Injectable } from '@nestjs/common';
import { ScopeSet } from '../auth/scopes';
import { Clock } from '../common/time';
import type { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { OAuth2RecordStore } from './oauth2-record.store';
import { apiScopesOfToken } from './oauth2-scopes';

/** The provider's access tokens: 43 characters of base64url (API tokens are 40 hex characters). */
const OAUTH2_TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/**
 * Resolves an OAuth2 access token presented to the API or to git over HTTP. It is read from the database on
 * every request, with its grant: deleting the application or revoking the grant stops it at the next request,
 * and the grant's consented scopes bound what it may do.
 */
@Injectable()
export class OAuth2AccessTokens {
  constructor(
    private readonly records: OAuth2RecordStore,
    private readonly users: UserAccounts,
    private readonly clock: Clock,
  ) {}

  static looksLikeOne(token: string): boolean {
    return OAUTH2_TOKEN_PATTERN.test(token);
  }

  /** The token's user and API scopes, or null when it is unknown, expired or revoked. */
  async authenticate(token: string): Promise<{ user: UserEntity; scopes: ScopeSet } | null> {
    if (!OAuth2AccessTokens.looksLikeOne(token)) return null;
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
