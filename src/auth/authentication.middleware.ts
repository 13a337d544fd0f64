import { Inject, Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { APP_CONFIG, AppConfig } from '../config/config';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../common/errors';
import { UserEntity } from '../users/user.entity';
import { UserStore } from '../users/user.store';
import { AuthContext } from './auth-context';
import { CredentialChain, readCredential } from './credentials';

/**
 * The credential chain every request passes (behaviour 1.4 and 1.6): authentication (401), account state
 * (403), sudo (403/404). It runs before routing, so bad credentials are a 401 even on unknown paths.
 */
@Injectable()
export class AuthenticationMiddleware implements NestMiddleware {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly credentials: CredentialChain,
    private readonly users: UserStore,
  ) {}

  async use(request: Request, response: Response, next: NextFunction): Promise<void> {
    try {
      const credential = readCredential(request);
      if (credential?.kind === 'token' && credential.fromQuery) {
        response.setHeader('Warning', '299 - "token and access_token API authentication is deprecated and will be removed in a future release"');
      }
      let auth = credential ? await this.credentials.authenticate(credential) : AuthContext.anonymous();
      if (auth.user) this.assertAccountUsable(auth.user);
      auth = await this.applySudo(request, auth);
      request.auth = auth;
      next();
    } catch (error) {
      request.auth ??= AuthContext.anonymous();
      next(error);
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
