import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ForbiddenError, NotFoundError, TooManyRequestsError, UnauthorizedError } from '../common/errors';
import { RateLimits } from '../common/rate-limits';
import { AccessTokensService } from '../users/access-tokens.service';
import { UserEntity } from '../users/user.entity';
import { UserStore } from '../users/user.store';
import { AuthContext } from './auth-context';
import { ScopeSet } from './scopes';
import { DECOY_PASSWORD_HASH, KdfBusyError, verifyPassword } from './secrets';

type Credential = { kind: 'token'; token: string; fromQuery: boolean } | { kind: 'basic'; username: string; secret: string };

/**
 * The one answer to every failed password sign-in, whether the account exists, is an organisation, has no
 * password or the password is wrong: nothing tells accounts apart (issue 12, finding 4).
 */
export const SIGN_IN_FAILED = 'user does not exist or password is invalid';

/**
 * The credential chain every request passes (behaviour 1.4 and 1.6): authentication (401), account state
 * (403), sudo (403/404). It runs before routing, so bad credentials are a 401 even on unknown paths.
 */
@Injectable()
export class AuthenticationMiddleware implements NestMiddleware {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tokens: AccessTokensService,
    private readonly users: UserStore,
    private readonly limits: RateLimits,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    try {
      const credential = readCredential(request);
      if (credential?.kind === 'token' && credential.fromQuery) {
        response.setHeader('Warning', '299 - "token and access_token API authentication is deprecated and will be removed in a future release"');
      }
      let auth = credential ? await this.authenticate(credential, clientAddress(request)) : AuthContext.anonymous();
      if (auth.user) this.assertAccountUsable(auth.user);
      auth = await this.applySudo(request, auth);
      request.auth = auth;
      next();
    } catch (error) {
      request.auth ??= AuthContext.anonymous();
      next(error);
    }
  }

  /**
   * Failed sign-ins count against the client address and, for passwords, the account; once either is over
   * its limit the next attempt is a 429 before any KDF runs. Password work is the same whether the account
   * exists or not (a decoy hash stands in), and account state is only looked at once the password verified.
   */
  private async authenticate(credential: Credential, address: string): Promise<AuthContext> {
    const account = credential.kind === 'basic' ? `account:${credential.username.toLowerCase()}` : undefined;
    await this.limits.check('signInPerIp', address);
    if (account) await this.limits.check('signInPerAccount', account);
    try {
      return await this.verify(credential);
    } catch (error) {
      if (error instanceof KdfBusyError) throw new TooManyRequestsError(error.message, 1);
      if (error instanceof UnauthorizedError) {
        await this.limits.consume('signInPerIp', address).catch(() => undefined);
        if (account) await this.limits.consume('signInPerAccount', account).catch(() => undefined);
      }
      throw error;
    }
  }

  private async verify(credential: Credential): Promise<AuthContext> {
    if (credential.kind === 'token') {
      const { token, user } = await this.tokens.authenticate(credential.token);
      return new AuthContext(user, 'token', ScopeSet.fromStored(token.scope));
    }
    const { username, secret } = credential;
    // Forgejo: an empty password or "x-oauth-basic" means the user name is the token.
    if (secret === '' || secret === 'x-oauth-basic') return this.verify({ kind: 'token', token: username, fromQuery: false });
    const found = await this.users.findByName(username);
    const user = found && !found.isOrganization && found.passwdHash !== '' ? found : undefined;
    const verified = await verifyPassword(secret, user?.passwdHash ?? DECOY_PASSWORD_HASH);
    if (user && verified) return new AuthContext(user, 'password', null);
    // The secret may be a token presented as the password.
    try {
      const { token, user: owner } = await this.tokens.authenticate(secret);
      return new AuthContext(owner, 'token', ScopeSet.fromStored(token.scope));
    } catch (error) {
      if (error instanceof KdfBusyError) throw error;
      throw new UnauthorizedError(SIGN_IN_FAILED);
    }
  }

  private assertAccountUsable(user: UserEntity): void {
    if (!user.isActive || user.prohibitLogin) {
      throw new ForbiddenError('This account is prohibited from signing in, please contact your site administrator.');
    }
    if (user.mustChangePassword) {
      throw new ForbiddenError(`You must change your password. Change it at: ${this.config.rootUrl}user/settings/change_password`);
    }
  }

  private async applySudo(request: Request, auth: AuthContext): Promise<AuthContext> {
    const querySudo = request.query.sudo;
    const target = (typeof querySudo === 'string' ? querySudo : undefined) ?? request.header('sudo');
    if (target === undefined || target === '') return auth;
    if (!auth.isAdmin) throw new ForbiddenError('Only administrators allowed to sudo.');
    const user = await this.users.findByName(target);
    if (!user || user.isOrganization) throw new NotFoundError();
    return new AuthContext(user, auth.method, auth.scopes);
  }
}

function clientAddress(request: Request): string {
  return `ip:${request.ip ?? request.socket.remoteAddress ?? ''}`;
}

function readCredential(request: Request): Credential | undefined {
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
