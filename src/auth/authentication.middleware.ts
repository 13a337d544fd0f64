import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../common/errors';
import { AccessTokensService } from '../users/access-tokens.service';
import { UserEntity } from '../users/user.entity';
import { UserStore } from '../users/user.store';
import { AuthContext } from './auth-context';
import { ScopeSet } from './scopes';
import { verifyPassword } from './secrets';

type Credential = { kind: 'token'; token: string; fromQuery: boolean } | { kind: 'basic'; username: string; secret: string };

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
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    try {
      const credential = readCredential(request);
      if (credential?.kind === 'token' && credential.fromQuery) {
        response.setHeader('Warning', '299 - "token and access_token API authentication is deprecated and will be removed in a future release"');
      }
      let auth = credential ? await this.authenticate(credential) : AuthContext.anonymous();
      if (auth.user) this.assertAccountUsable(auth.user);
      auth = await this.applySudo(request, auth);
      request.auth = auth;
      next();
    } catch (error) {
      request.auth ??= AuthContext.anonymous();
      next(error);
    }
  }

  private async authenticate(credential: Credential): Promise<AuthContext> {
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
