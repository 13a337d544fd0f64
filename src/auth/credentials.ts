import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { UnauthorizedError } from '../common/errors';
import { AccessTokensService } from '../users/access-tokens.service';
import { UserStore } from '../users/user.store';
import { AuthContext } from './auth-context';
import { ScopeSet } from './scopes';
import { verifyPassword } from './secrets';

export type Credential = { kind: 'token'; token: string; fromQuery: boolean } | { kind: 'basic'; username: string; secret: string };

/**
 * Verifies one credential (behaviour 1.4): a token, or Basic with a password or a token. Shared by the API's
 * middleware and the git routes, which answer the same credentials with their own statuses and texts.
 * Failures are UnauthorizedError.
 */
@Injectable()
export class CredentialChain {
  constructor(
    private readonly tokens: AccessTokensService,
    private readonly users: UserStore,
  ) {}

  async authenticate(credential: Credential): Promise<AuthContext> {
    if (credential.kind === 'token') {
      const { token, user } = await this.tokens.authenticate(credential.token);
      return new AuthContext(user, 'token', ScopeSet.fromStored(token.scope));
    }
    const { username, secret } = credential;
    // Forgejo: an empty password or "x-oauth-basic" means the user name is the token.
    if (secret === '' || secret === 'x-oauth-basic') return this.authenticate({ kind: 'token', token: username, fromQuery: false });
    const user = await this.users.findByName(username);
    if (user && !user.isOrganization && user.passwdHash !== '' && (await verifyPassword(secret, user.passwdHash))) {
      return new AuthContext(user, 'password', null);
    }
    // The secret may be a token presented as the password.
    try {
      const { token, user: owner } = await this.tokens.authenticate(secret);
      return new AuthContext(owner, 'token', ScopeSet.fromStored(token.scope));
    } catch {
      throw new UnauthorizedError(user ? 'user\'s password is invalid' : `user does not exist [name: ${username}]`);
    }
  }

}

/** The credential a request carries (header first, then the query string); malformed headers throw. */
export function readCredential(request: Request): Credential | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) return parseAuthorization(header);
  for (const name of ['token', 'access_token']) {
    const value = request.query[name];
    if (typeof value === 'string' && value !== '') return { kind: 'token', token: value, fromQuery: true };
  }
  return undefined;
}

function parseAuthorization(header: string): Credential {
  const parts = header.trim().split(/\s+/);
  if (parts.length !== 2) throw new UnauthorizedError('invalid Authorization header');
  const [scheme, value] = parts;
  switch (scheme.toLowerCase()) {
    case 'token':
    case 'bearer':
      return { kind: 'token', token: value, fromQuery: false };
    case 'basic': {
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(value)) throw new UnauthorizedError('invalid basic authentication');
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      if (colon < 0) throw new UnauthorizedError('invalid basic authentication');
      return { kind: 'basic', username: decoded.slice(0, colon), secret: decoded.slice(colon + 1) };
    }
    default:
      throw new UnauthorizedError(`unsupported authorization scheme: ${scheme}`);
  }
}
