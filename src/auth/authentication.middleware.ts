import { Injectable } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';
import { HttpConfig, SiteConfig } from '../config/slices';
import { markRequestStart, RequestTimedOutError } from '../http/request-timeout';
import { ForbiddenError, NotFoundError, UnauthorizedError } from '../common/errors';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { RequestGitClient } from '../git/request-git-client';
import { AuthContext } from './auth-context';
import { runInScope } from '../common/request-scope';
import { clientIp } from '../http/client-address';
import { clientAddress, Credential, CredentialChain } from './credentials';

export { SIGN_IN_FAILED } from './credentials';

/**
 * The credential chain every request passes (docs/check-order.md): authentication (401), account state
 * (403), sudo (403/404). It runs before routing, so bad credentials are a 401 even on unknown paths.
 * Registered once, as plain Express middleware (bootstrap.ts): `handle`.
 */
@Injectable()
export class AuthenticationMiddleware {
  constructor(
    private readonly httpConfig: HttpConfig,
    private readonly siteConfig: SiteConfig,
    private readonly credentials: CredentialChain,
    private readonly users: UserAccounts,
  ) {}

  readonly handle = (request: Request, response: Response, next: NextFunction): void => {
    let credential: Credential | undefined;
    try {
      credential = this.credentials.read(request);
    } catch (error) {
      request.auth = AuthContext.anonymous();
      return next(error);
    }
    // An anonymous request without sudo needs no lookup: it goes on at once, without a promise.
    if (credential === undefined && request.headers.sudo === undefined && !(request.url.includes('?') && request.query.sudo !== undefined)) {
      request.auth = AuthContext.anonymous();
      return RequestGitClient.run(request, response, null, next);
    }
    // API_REQUEST_TIMEOUT covers the lookups of authentication too: a database that hangs answers 503 here,
    // before any route's own timer is armed (http/request-timeout.ts counts from this start).
    const limit = this.httpConfig.apiRequestTimeoutMs;
    let settled = false;
    const timer =
      limit > 0
        ? setTimeout(() => {
            settled = true;
            request.auth ??= AuthContext.anonymous();
            next(new RequestTimedOutError());
          }, limit)
        : undefined;
    markRequestStart(request);
    this.authenticate(request, response, credential).then(
      ({ auth, sudoBy }) => {
        clearTimeout(timer);
        if (settled) return;
        request.auth = auth;
        if (!auth.user) return RequestGitClient.run(request, response, auth.id, next);
        // What the request changes is recorded in the audit log as this user's, from this address; one scope
        // carries that and the git client.
        const actor = { id: auth.user.id, name: auth.user.name, address: clientIp(request), sudoBy };
        runInScope({ actor, gitClient: RequestGitClient.of(request, response, auth.id) }, next);
      },
      (error: unknown) => {
        clearTimeout(timer);
        if (settled) return;
        request.auth ??= AuthContext.anonymous();
        next(error);
      },
    );
  };

  private async authenticate(request: Request, response: Response, credential: Credential | undefined): Promise<{ auth: AuthContext; sudoBy?: string }> {
    if (credential?.kind === 'token' && credential.fromQuery) {
      response.setHeader('Warning', '299 - "token and access_token API authentication is deprecated and will be removed in a future release"');
    }
    const auth = credential ? await this.credentials.authenticate(credential, clientAddress(request)) : AuthContext.anonymous();
    if (auth.user) this.assertAccountUsable(auth.user);
    const acting = await this.applySudo(request, auth);
    return { auth: acting, sudoBy: acting.user?.id !== auth.user?.id ? auth.user?.name : undefined };
  }

  private assertAccountUsable(user: UserEntity): void {
    if (!user.isActive || user.prohibitLogin) {
      throw new ForbiddenError('This account is prohibited from signing in, please contact your site administrator.');
    }
    if (user.mustChangePassword) {
      throw new ForbiddenError(`You must change your password. Change it at: ${this.siteConfig.rootUrl}user/settings/change_password`);
    }
  }

  private async applySudo(request: Request, auth: AuthContext): Promise<AuthContext> {
    const querySudo = request.query.sudo;
    const target = (typeof querySudo === 'string' ? querySudo : undefined) ?? request.header('sudo');
    if (target === undefined || target === '') return auth;
    if (!auth.isAdmin) throw new ForbiddenError('Only administrators allowed to sudo.');
    const user = await this.users.byName(target);
    if (!user || user.isOrganization) throw new NotFoundError();
    return new AuthContext(user, auth.method, auth.scopes);
  }
}
