import { Injectable } from '@nestjs/common';
import type { Request, Response } from 'express';
import { runAsActor } from '../audit/audit-context';
import type { AuthContext } from '../auth/auth-context';
import { clientAddress, CredentialChain, SIGN_IN_FAILED } from '../auth/credentials';
import { clientIp } from '../http/client-address';
import { ForbiddenError, UnauthorizedError } from '../common/errors';
import { SiteConfig } from '../config/slices';
import type { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { ConsentForm } from './consent.form';
import { OAuth2Provider } from './oauth2-provider';

/** One pending authorization request, as the sign-in and consent page shows it. */
export interface Interaction {
  uid: string;
  clientId: string;
  clientName: string;
  redirectUri: string;
  scopes: string[];
  /** The scopes the user consented to earlier in the grant this request extends (none for a new grant). */
  grantedScopes: string[];
  /** The provider asks who the user is (`login`) or only for consent. */
  needsSignIn: boolean;
  /** The name of the user already known (the provider's session, or the request's carrier); null when unknown. */
  signedIn: string | null;
  /** The provider's session account and grant, when it has them. */
  sessionAccountId?: string;
  grantId?: string;
}

/**
 * Signing in and consenting for the OAuth2 provider: who the user is (a password, checked by the credential
 * chain with its rate limits, or the carrier the API already believes) and the grant of the scopes the
 * application asked for.
 */
@Injectable()
export class OAuth2SignIn {
  constructor(
    private readonly provider: OAuth2Provider,
    private readonly credentials: CredentialChain,
    private readonly users: UserAccounts,
    private readonly siteConfig: SiteConfig,
  ) {}

  countAttempt(request: Request, response: Response): Promise<void> {
    return this.provider.admit(request, response);
  }

  /** The pending request of this browser (its interaction cookie), or null when it expired or is another one. */
  async details(request: Request, response: Response): Promise<Interaction | null> {
    let details;
    try {
      details = await (await this.provider.oidc()).interactionDetails(request, response);
    } catch {
      return null;
    }
    if (details.uid !== request.params.uid) return null;
    const clientId = String(details.params.client_id ?? '');
    const oidc = await this.provider.oidc();
    const client = await oidc.Client.find(clientId);
    if (!client) return null;
    const needsSignIn = details.prompt.name === 'login';
    const sessionAccountId = details.session?.accountId;
    let signedIn: string | null = null;
    if (!needsSignIn && sessionAccountId) signedIn = (await this.users.byId(Number(sessionAccountId)))?.name ?? null;
    else signedIn = carrierUser(request.auth)?.name ?? null;
    const grant = details.grantId ? await oidc.Grant.find(details.grantId) : undefined;
    const grantedScopes =
      grant && grant.accountId === sessionAccountId
        ? grant
            .getOIDCScope()
            .split(' ')
            .filter((scope) => scope !== '')
        : [];
    return {
      uid: details.uid,
      grantedScopes,
      clientId,
      clientName: client.clientName ?? clientId,
      redirectUri: String(details.params.redirect_uri ?? ''),
      scopes: String(details.params.scope ?? '')
        .split(' ')
        .filter((scope) => scope !== ''),
      needsSignIn,
      signedIn,
      sessionAccountId,
      grantId: details.grantId,
    };
  }

  /** Signs in (when the provider asks) and grants the requested scopes; the provider then redirects to the application. */
  async authorize(request: Request, response: Response, interaction: Interaction, form: ConsentForm, auth: AuthContext | undefined): Promise<void> {
    const oidc = await this.provider.oidc();
    let user: UserEntity | null;
    if (interaction.needsSignIn || !interaction.sessionAccountId) {
      user = carrierUser(auth) ?? (await this.verifyPassword(request, form));
    } else {
      user = await this.users.byId(Number(interaction.sessionAccountId));
      if (!user) throw new UnauthorizedError(SIGN_IN_FAILED);
    }
    const accountId = String(user.id);
    const existing = !interaction.needsSignIn && interaction.grantId ? await oidc.Grant.find(interaction.grantId) : undefined;
    const grant = existing && existing.accountId === accountId ? existing : new oidc.Grant({ accountId, clientId: interaction.clientId });
    if (interaction.scopes.length > 0) grant.addOIDCScope(interaction.scopes.join(' '));
    // The grant is the user's consent: the audit log names them, from this address.
    const grantId = await runAsActor({ id: user.id, name: user.name, address: clientIp(request) }, () => grant.save());
    await oidc.interactionFinished(request, response, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false });
  }

  async deny(request: Request, response: Response): Promise<void> {
    await (
      await this.provider.oidc()
    ).interactionFinished(request, response, { error: 'access_denied', error_description: 'the request is denied' }, { mergeWithLastSubmission: false });
  }

  /** A password sign-in, as the API's Basic authentication checks it (same limits); tokens are not passwords here. */
  private async verifyPassword(request: Request, form: ConsentForm): Promise<UserEntity> {
    if (!form.user_name || !form.password) throw new UnauthorizedError(SIGN_IN_FAILED);
    const auth = await this.credentials.authenticate({ kind: 'basic', username: form.user_name, secret: form.password }, clientAddress(request));
    if (auth.method !== 'password' || !auth.user) throw new UnauthorizedError(SIGN_IN_FAILED);
    const user = auth.user;
    if (!user.isActive || user.prohibitLogin) throw new ForbiddenError('This account is prohibited from signing in, please contact your site administrator.');
    if (user.mustChangePassword)
      throw new ForbiddenError(`You must change your password. Change it at: ${this.siteConfig.rootUrl}user/settings/change_password`);
    return user;
  }
}

/**
 * The user a request's carrier already proves, other than a token (a token is for programs, not a browser's
 * sign-in): Basic with a password, or the gateway's identity when reverse-proxy authentication is on.
 */
function carrierUser(auth: AuthContext | undefined): UserEntity | null {
  if (!auth?.user || auth.method === 'token' || auth.method === 'anonymous') return null;
  return auth.user;
}
