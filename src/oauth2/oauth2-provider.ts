import { generateKeyPair, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Logger, OnModuleDestroy, OnModuleInit } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { default as Provider, Configuration, KoaContextWithOIDC } from 'oidc-provider';
import { hashToken, sameHash } from '../auth/secrets';
import { runAsActor } from '../audit/audit-context';
import { AuditService } from '../audit/audit.service';
import { clientAddress } from '../auth/credentials';
import { clientIp } from '../http/client-address';
import { TooManyRequestsError } from '../common/errors';
import { ServiceUnavailableError } from '../common/dependency-errors';
import { RateLimits } from '../http/rate-limits';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { SiteConfig } from '../config/slices';
import { SecretBox, SecretUnreadableError } from '../secrets/secret-box';
import { html, page, PAGE_CSP } from '../pages/page-layout';
import { OrganizationMemberships } from '../users/organization-memberships';
import { avatarUrl } from '../users/user.mapper';
import { UserAccounts } from '../users/user-accounts';
import { OAuth2ApplicationStore } from './oauth2-application.store';
import { OAuth2RecordStore } from './oauth2-record.store';
import { API_SCOPES, IDENTITY_SCOPES } from './oauth2-scopes';
import { OAuth2Storage } from './oauth2-storage';
import { loadOidcProvider } from './oidc-provider-library';

// One cohesive thing, kept whole though long: the adapter of oidc-provider — its making at first use, its
// configuration as Forgejo's provider behaves, and the middleware in front of it — each part reads the others.

/** The provider's endpoints, at Forgejo's paths so that Woodpecker and Drone find them unchanged. */
export const OAUTH2_ROUTES = {
  authorization: '/login/oauth/authorize',
  token: '/login/oauth/access_token',
  userinfo: '/login/oauth/userinfo',
  jwks: '/login/oauth/keys',
  introspection: '/login/oauth/introspect',
  revocation: '/login/oauth/revoke',
  end_session: '/login/oauth/logout',
} as const;

/** Where the provider sends the browser to sign in and consent (oauth2-interaction.controller.ts). */
export const INTERACTION_PATH = 'login/oauth/interaction';

const DISCOVERY_PATH = '/.well-known/openid-configuration';
const PROVIDER_PATHS = new Set<string>([...Object.values(OAUTH2_ROUTES), DISCOVERY_PATH]);

/** Largest body the token, introspection and revocation endpoints read (their forms are a few hundred bytes). */
export const OAUTH2_MAX_BODY_BYTES = 16 * 1024;

/** Lifetimes, in seconds. */
const TTL = {
  AccessToken: 60 * 60,
  AuthorizationCode: 10 * 60,
  IdToken: 60 * 60,
  Interaction: 60 * 60,
  RefreshToken: 30 * 24 * 60 * 60,
  Grant: 365 * 24 * 60 * 60,
  Session: 14 * 24 * 60 * 60,
};

const generateKeyPairAsync = promisify(generateKeyPair);

/** How often expired records are removed. */
const PURGE_EVERY_MS = 15 * 60 * 1000;

/** Most organisations listed in the `groups` claim. */
const MAX_GROUPS = 100;

/**
 * The OAuth2 / OpenID Connect provider: panva's certified `oidc-provider`, configured as Forgejo's provider
 * behaves (authorization code with PKCE, required of public clients; rotated refresh tokens; no client
 * credentials grant) and storing everything in the database through OAuth2Storage (oauth2-storage.ts), so
 * that every instance serves every request. Its signing key is made once, sealed with SECRET_KEY, and shared.
 */
@Injectable()
export class OAuth2Provider implements OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger('OAuth2');
  /** The provider and its request handler, made at the first request that needs them (or null: `unavailable`). */
  private started?: Promise<{ provider: Provider; handler: (request: IncomingMessage, response: ServerResponse) => Promise<void> } | null>;
  private sweeper?: NodeJS.Timeout;
  /** Why the provider does not serve (its key is unreadable), or null. */
  private unavailable: string | null = null;
  private readonly storage: OAuth2Storage;

  constructor(
    private readonly siteConfig: SiteConfig,
    private readonly records: OAuth2RecordStore,
    private readonly applications: OAuth2ApplicationStore,
    private readonly users: UserAccounts,
    private readonly organizations: OrganizationMemberships,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly limits: RateLimits,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {
    this.storage = new OAuth2Storage(records, applications, box, clock, transactions, audit);
  }

  onModuleInit(): void {
    // Expired codes, tokens, sessions and interactions are removed now and then (by any instance; it is idempotent).
    this.sweeper = setInterval(() => {
      this.records.purgeExpired(this.clock.nowUnix()).catch((error: Error) => this.logger.warn(`expired OAuth2 records not removed: ${error.message}`));
    }, PURGE_EVERY_MS);
    this.sweeper.unref();
  }

  /**
   * The provider is made at the first request to its paths, not at start: loading the library and making the
   * signing key (an RSA key pair, on the first instance ever) cost a start that serves no OAuth2 client nothing.
   * A failure to read the key is kept (503 until restart); any other failure (the database away) is retried by
   * the next request.
   */
  private start() {
    if (this.started === undefined) {
      this.started = this.make();
      this.started.catch(() => (this.started = undefined));
    }
    return this.started;
  }

  private async make() {
    let signingKey: Record<string, unknown>;
    try {
      signingKey = await this.signingKey();
    } catch (error) {
      if (!(error instanceof SecretUnreadableError)) throw error;
      // Another SECRET_KEY than the instance that made the key: the rest of the server works, OAuth2 answers 503.
      this.unavailable = 'the OAuth2 signing key cannot be read with this SECRET_KEY: every instance needs the same SECRET_KEY';
      this.logger.error(this.unavailable);
      return null;
    }
    const ProviderClass = loadOidcProvider((message) => this.logger.warn(message));
    const provider = new ProviderClass(this.issuer, this.configuration(signingKey));
    // The request's scheme and host are ROOT_URL's, whatever a client sends: the provider builds its URLs from them.
    provider.proxy = true;
    // Client secrets are stored hashed (salt$hash in the client's metadata): compare the presented one's hash.
    provider.Client.prototype.compareClientSecret = async function (this: { clientSecret?: string }, presented: string) {
      const [salt, hash] = (this.clientSecret ?? '').split('$');
      if (!salt || !hash || typeof presented !== 'string' || presented === '') return false;
      return sameHash(await hashToken(presented, salt), hash);
    } as never;
    provider.on('server_error', (_ctx: unknown, error: Error) => this.logger.error(`OAuth2 provider error: ${error.message}`));
    return { provider, handler: provider.callback() as never as (request: IncomingMessage, response: ServerResponse) => Promise<void> };
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** ROOT_URL, as Forgejo names its issuer. */
  get issuer(): string {
    return this.siteConfig.rootUrl;
  }

  /** The provider, for the sign-in pages (which the middleware admitted: it is made, or they answered 503). */
  async oidc(): Promise<Provider> {
    const started = await this.start();
    if (started === null) throw new ServiceUnavailableError(this.unavailable ?? 'OAuth2 is unavailable', 60);
    return started.provider;
  }

  /**
   * Express middleware answering the provider's paths, registered ahead of the API's authentication (the
   * token endpoint's Basic credentials are a client's, not a user's). Counted per client address and capped
   * in body size before the provider reads anything.
   */
  middleware(): RequestHandler {
    return (request: Request, response: Response, next: NextFunction) => {
      const path = request.path;
      const isInteraction = path.startsWith(`/${INTERACTION_PATH}/`);
      const isProvider = PROVIDER_PATHS.has(path) || path.startsWith(`${OAUTH2_ROUTES.authorization}/`);
      if (!isProvider && !isInteraction) return next();
      if (isProvider && Number(request.headers['content-length'] ?? 0) > OAUTH2_MAX_BODY_BYTES) {
        response
          .status(413)
          .type('application/json')
          .send(JSON.stringify({ error: 'invalid_request', error_description: 'request body too large' }));
        return;
      }
      this.start().then(
        (started) => {
          if (started === null) {
            response
              .status(503)
              .type('application/json')
              .send(JSON.stringify({ error: 'temporarily_unavailable', error_description: this.unavailable }));
          } else if (isProvider) this.serve(started.handler, path, request, response, next);
          else next();
        },
        (error: unknown) => next(error),
      );
    };
  }

  /** One request to the provider's own endpoints (the middleware made the provider). */
  private serve(
    handler: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
    path: string,
    request: Request,
    response: Response,
    next: NextFunction,
  ): void {
    const root = new URL(this.siteConfig.rootUrl);
    const counted = path === DISCOVERY_PATH || path === OAUTH2_ROUTES.jwks ? Promise.resolve() : this.admit(request, response);
    counted.then(
      () => {
        request.headers['x-forwarded-proto'] = root.protocol.slice(0, -1);
        request.headers['x-forwarded-host'] = root.host;
        const address = clientIp(request);
        request.headers['x-forwarded-for'] = address;
        if (path === OAUTH2_ROUTES.authorization) withDefaultScope(request);
        // A grant the provider revokes here (a refresh token replayed or revoked) is logged from this address.
        void runAsActor({ id: 0, name: '', address }, () => handler(request, response));
      },
      (error: unknown) => {
        if (!(error instanceof TooManyRequestsError)) return next(error);
        response.setHeader('Retry-After', String(error.retryAfterSeconds));
        response
          .status(429)
          .type('application/json')
          .send(JSON.stringify({ error: 'slow_down', error_description: 'too many requests, try again later' }));
      },
    );
  }

  /**
   * Counts one request to the provider's endpoints or its sign-in page against the client address: refused
   * (429) when the address has failed RATE_LIMIT_OAUTH2 times in the window, or made RATE_LIMIT_OAUTH2_REQUESTS
   * requests of any outcome. Only an answer of 4xx counts as a failure, once it is sent: a busy client that
   * succeeds (an office behind one NAT signing in many times a minute) is held by the generous cap alone.
   */
  async admit(request: Request, response: Response): Promise<void> {
    const key = clientAddress(request);
    await this.limits.check('oauth2', key);
    await this.limits.consume('oauth2Requests', key);
    response.once('finish', () => {
      if (response.statusCode < 400 || response.statusCode >= 500 || response.statusCode === 429) return;
      this.limits.consume('oauth2', key).catch((error: unknown) => {
        if (!(error instanceof TooManyRequestsError)) this.logger.warn(`OAuth2 failure not counted: ${(error as Error).message}`);
      });
    });
  }

  private configuration(signingKey: Record<string, unknown>): Configuration {
    const secure = this.siteConfig.rootUrl.startsWith('https:');
    // Every instance signs the provider's cookies with the same key, derived from SECRET_KEY.
    const cookieKey = this.box.derive('oauth2 cookies');
    return {
      adapter: (name: string) => this.storage.adapter(name),
      findAccount: (_ctx, accountId) => this.findAccount(accountId),
      claims: {
        openid: ['sub'],
        profile: ['name', 'preferred_username', 'profile', 'picture', 'website', 'updated_at'],
        email: ['email', 'email_verified'],
        groups: ['groups'],
      },
      scopes: [...IDENTITY_SCOPES, 'offline_access', ...API_SCOPES],
      // As Forgejo: an ID token carries the claims of the granted scopes, not only the userinfo endpoint.
      conformIdTokenClaims: false,
      jwks: { keys: [signingKey as never] },
      cookies: {
        keys: [cookieKey],
        long: { secure, sameSite: 'lax', httpOnly: true },
        short: { secure, sameSite: 'lax', httpOnly: true },
      },
      features: {
        devInteractions: { enabled: false },
        introspection: { enabled: true },
        revocation: { enabled: true },
        clientCredentials: { enabled: false },
        userinfo: { enabled: true },
        rpInitiatedLogout: { enabled: false },
      },
      responseTypes: ['code'],
      // Forgejo requires PKCE of public clients only; confidential ones may use it.
      pkce: { required: (_ctx, client) => client.tokenEndpointAuthMethod === 'none' },
      routes: OAUTH2_ROUTES,
      interactions: { url: (_ctx, interaction) => `${new URL(this.siteConfig.rootUrl).pathname}${INTERACTION_PATH}/${interaction.uid}` },
      // Every code exchange gets a refresh token, as from Forgejo; each refresh hands out a new one.
      issueRefreshToken: (_ctx, client) => client.grantTypeAllowed('refresh_token'),
      rotateRefreshToken: true,
      ttl: {
        AccessToken: TTL.AccessToken,
        AuthorizationCode: TTL.AuthorizationCode,
        IdToken: TTL.IdToken,
        Interaction: TTL.Interaction,
        RefreshToken: TTL.RefreshToken,
        Grant: TTL.Grant,
        Session: TTL.Session,
      },
      clientBasedCORS: () => true,
      renderError: (ctx: KoaContextWithOIDC, out: { error: string; error_description?: string }) => {
        ctx.type = 'html';
        ctx.set('Content-Security-Policy', PAGE_CSP);
        ctx.body = page(
          'Authorization failed · Anvil',
          html`<h1>Authorization failed</h1>
            <p class="error" role="status">${out.error_description ?? out.error}</p>`,
        );
      },
    };
  }

  /** The claims Forgejo gives: the user id as `sub`, names, e-mail, avatar, profile and organisations as groups. */
  private async findAccount(accountId: string) {
    const id = /^\d{1,16}$/.test(accountId) ? Number(accountId) : 0;
    const user = id > 0 ? await this.users.byId(id) : null;
    if (!user || user.isOrganization || !user.isActive || user.prohibitLogin) return undefined;
    const rootUrl = this.siteConfig.rootUrl;
    return {
      accountId,
      claims: async () => {
        const organizations = await this.organizations.organizationsOf(user.id, true, { page: 1, limit: MAX_GROUPS, offset: 0 });
        return {
          sub: String(user.id),
          name: user.fullName || user.name,
          preferred_username: user.name,
          profile: `${rootUrl}${encodeURIComponent(user.name)}`,
          picture: avatarUrl({ rootUrl, rootHost: this.siteConfig.rootHost, ssh: { user: '', host: '', port: 0 } }),
          website: user.website,
          updated_at: user.updatedUnix,
          email: user.email,
          email_verified: user.isActive,
          groups: organizations.items.map((organization) => organization.name),
        };
      },
    };
  }

  /** The RS256 signing key: made by the first instance to start, sealed with SECRET_KEY, read by the others. */
  private async signingKey(): Promise<Record<string, unknown>> {
    let sealed = await this.records.findSealedSigningKey();
    if (sealed === undefined) {
      const { privateKey } = await generateKeyPairAsync('rsa', { modulusLength: 2048 });
      const jwk = { ...privateKey.export({ format: 'jwk' }), alg: 'RS256', use: 'sig', kid: randomBytes(12).toString('base64url') };
      sealed = await this.records.storeSigningKeyOnce(this.box.seal(JSON.stringify(jwk)), this.clock.nowUnix());
    }
    return JSON.parse(this.box.open(sealed)) as Record<string, unknown>;
  }
}

const KNOWN_SCOPES = new Set<string>([...IDENTITY_SCOPES, 'offline_access', ...API_SCOPES]);

/**
 * Forgejo's clients (Woodpecker, Drone) ask for no scope, or for scopes Forgejo does not know, and Forgejo then
 * grants everything the user may do; the provider grants nothing without a scope it knows, so such a request
 * also asks for `all`, which says the same.
 */
function withDefaultScope(request: Request): void {
  const query = request.url.indexOf('?');
  const params = new URLSearchParams(query < 0 ? '' : request.url.slice(query + 1));
  const asked = (params.get('scope') ?? '').split(' ').filter((scope) => scope !== '');
  if (asked.some((scope) => KNOWN_SCOPES.has(scope))) return;
  params.set('scope', [...asked, 'all'].join(' '));
  request.url = `${query < 0 ? request.url : request.url.slice(0, query)}?${params.toString()}`;
}
