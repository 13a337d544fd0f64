import { createHash, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { Request } from 'express';
import { ReverseProxyConfig } from '../config/slices';
import { AuditService, SignInCarrier } from '../audit/audit.service';
import { clientIp, TrustedProxies } from '../http/client-address';
import { DomainError, TooManyRequestsError, UnauthorizedError } from '../common/errors';
import { RateLimits } from '../http/rate-limits';
import { OAuth2AccessTokens } from '../oauth2/oauth2-access-tokens';
import { AccessTokensService, TOKEN_FAILED } from '../users/access-tokens.service';
import { UserAccounts } from '../users/user-accounts';
import type { UserEntity } from '../users/user.entity';
import { UsersService } from '../users/users.service';
import { AuthContext } from './auth-context';
import { ScopeSet } from './scopes';
import { DECOY_PASSWORD_HASH, KdfBusyError, TOKEN_PATTERN, verifyPassword } from './secrets';

// One cohesive thing, kept whole though long: how a request's credential is verified, and the counts that guard it.

export type Credential =
  | { kind: 'token'; token: string; fromQuery: boolean }
  | { kind: 'basic'; username: string; secret: string }
  /** The user a trusted gateway signed in, named in its header (REVERSE_PROXY_AUTH_*). */
  | { kind: 'reverse-proxy'; username: string; email: string; fullName: string };

/**
 * The one answer to every failed password sign-in, whether the account exists, is an organisation, has no
 * password or the password is wrong: nothing tells accounts apart.
 */
export const SIGN_IN_FAILED = 'user does not exist or password is invalid';

/** What git over HTTP and LFS answer to wrong credentials (401). */
export const GIT_CREDENTIALS_REFUSED = 'Credentials are incorrect or have expired.';

/**
 * Verifies one credential (docs/check-order.md): a token, or Basic with a password or a token. Shared by the API's
 * middleware and the git routes, which answer the same credentials with their own statuses and texts.
 * Failures are UnauthorizedError; a client address or account over its failed sign-in limit, or a full KDF
 * queue, is a TooManyRequestsError, raised before any KDF runs.
 */
@Injectable()
export class CredentialChain {
  private readonly proxies: TrustedProxies;
  /** First verifications of tokens under way, by the token's SHA-256 (firstVerification). */
  private readonly firstVerifications = new Map<string, Promise<AuthContext>>();
  /** Password attempts under way, by SHA-256 of address, account name and password (sharedPasswordAttempt). */
  private readonly passwordAttempts = new Map<string, Promise<AuthContext>>();

  constructor(
    private readonly reverseProxyConfig: ReverseProxyConfig,
    private readonly tokens: AccessTokensService,
    private readonly users: UserAccounts,
    private readonly accounts: UsersService,
    private readonly limits: RateLimits,
    private readonly oauth2Tokens: OAuth2AccessTokens,
    private readonly audit: AuditService,
  ) {
    this.proxies = new TrustedProxies(reverseProxyConfig.trustedProxies, reverseProxyConfig.forwardingHeader);
  }

  /**
   * The credential a request carries: an Authorization header or a query token first (a token sent through
   * the gateway keeps its own scopes), then, when REVERSE_PROXY_AUTH_ENABLED, the gateway's user header, but
   * only when the socket's peer itself is a trusted proxy: from anywhere else the header is ignored.
   */
  read(request: Request): Credential | undefined {
    const carried = readCredential(request);
    if (carried !== undefined || !this.reverseProxyConfig.authEnabled) return carried;
    const { userHeader, emailHeader, fullNameHeader } = this.reverseProxyConfig;
    const username = headerValue(request, userHeader);
    if (username === '' || !this.proxies.has(request.socket.remoteAddress ?? '')) return undefined;
    return { kind: 'reverse-proxy', username, email: headerValue(request, emailHeader), fullName: headerValue(request, fullNameHeader) };
  }

  /**
   * The caller of a git transport (smart HTTP, LFS): anonymous without a credential; a malformed or wrong one
   * is one UnauthorizedError with the text git clients print (GIT_CREDENTIALS_REFUSED), so that nothing tells
   * the failures apart. A TooManyRequestsError goes on as it is.
   */
  async authenticateGitRequest(request: Request): Promise<AuthContext> {
    try {
      const credential = this.read(request);
      return credential ? await this.authenticate(credential, clientAddress(request)) : AuthContext.anonymous();
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new UnauthorizedError(GIT_CREDENTIALS_REFUSED);
      throw error;
    }
  }

  /**
   * Failed sign-ins count against the client address and, for passwords, the account. A password attempt is
   * counted before its key derivation runs and given back once it succeeds, so concurrent attempts beyond the
   * limit are refused (429) without any hashing; a token is counted the same way before it is looked up, unless
   * this process has verified it before (authenticateToken). Requests presenting the same token or password at
   * the same moment share its first verification (firstVerification, sharedPasswordAttempt).
   * Password work is the same whether the account exists or not (a decoy hash stands in); account state is
   * the caller's to check, once the password verified.
   */
  async authenticate(credential: Credential, address: string): Promise<AuthContext> {
    const client = address.startsWith('ip:') ? address.slice(3) : address;
    let context: AuthContext;
    try {
      context = await this.authenticateCarrier(credential, address);
    } catch (error) {
      if (error instanceof UnauthorizedError) await this.audit.signIn('failure', carrierOf(credential, null), client, null, attemptedName(credential));
      throw error;
    }
    const user = context.user!;
    // An account that may not sign in is refused by the caller (403); the log says it was refused.
    const usable = user.isActive && !user.prohibitLogin && !user.mustChangePassword;
    await this.audit.signIn(usable ? 'success' : 'failure', carrierOf(credential, context), client, { id: user.id, name: user.name });
    return context;
  }

  private async authenticateCarrier(credential: Credential, address: string): Promise<AuthContext> {
    if (credential.kind === 'token') return this.authenticateToken(credential, address);
    if (credential.kind === 'reverse-proxy') return this.authenticateGatewayUser(credential, address.startsWith('ip:') ? address.slice(3) : address);
    // A token in the password (or in the user name, see verify) that this process verified before is no guess:
    // it goes the token's way, without the password's key derivation or the sign-in counts. Forgejo, too, tries
    // a token before the password; git clients and CI send one with every request.
    const asToken = nameIsToken(credential) ? credential.username : credential.secret;
    if (this.verifiedBefore(asToken)) return this.authenticateToken({ kind: 'token', token: asToken, fromQuery: false }, address);
    if (!looksLikeToken(asToken)) return this.sharedPasswordAttempt(credential, address);
    return this.firstVerification(
      asToken,
      () => this.authenticateBasic(credential, address),
      () => this.authenticateCarrier(credential, address),
    );
  }

  private async authenticateBasic(credential: Credential & { kind: 'basic' }, address: string): Promise<AuthContext> {
    const account = `account:${credential.username.toLowerCase()}`;
    const refunds: (() => Promise<void>)[] = [await this.limits.reserve('signInPerIp', address)];
    try {
      refunds.push(await this.limits.reserve('signInPerAccount', account));
    } catch (error) {
      await refundAll(refunds);
      throw error;
    }
    try {
      const context = await this.verify(credential, `${address}|${account}`);
      await refundAll(refunds);
      return context;
    } catch (error) {
      if (!(error instanceof UnauthorizedError)) await refundAll(refunds);
      if (error instanceof KdfBusyError) throw new TooManyRequestsError(error.message, 1);
      throw error;
    }
  }

  /**
   * A token this process verified before is no guess: it is checked without counting (no store write on the
   * common path). Any other is counted before it is looked up, and the count given back when it verifies, so
   * concurrent guesses beyond the limit are refused (429) without being checked.
   */
  private async authenticateToken(credential: Credential & { kind: 'token' }, address: string): Promise<AuthContext> {
    if (this.verifiedBefore(credential.token)) {
      try {
        return await this.verify(credential, address);
      } catch (error) {
        // Deleted since: an ordinary failed sign-in.
        if (error instanceof UnauthorizedError) await this.limits.consume('signInPerIp', address);
        throw error;
      }
    }
    return this.firstVerification(
      credential.token,
      async () => {
        const refund = await this.limits.reserve('signInPerIp', address);
        try {
          const context = await this.verify(credential, address);
          await refundAll([refund]);
          return context;
        } catch (error) {
          if (!(error instanceof UnauthorizedError)) await refundAll([refund]);
          if (error instanceof KdfBusyError) throw new TooManyRequestsError(error.message, 1);
          throw error;
        }
      },
      () => this.authenticateToken(credential, address),
    );
  }

  /**
   * A password attempt, or the one under way with the same account name and password from the same address:
   * requests presenting one password at once (parallel git clones with a user's password) share one key
   * derivation and one count, each with the first's outcome (its own copy of the user on success). A request
   * that comes after it ended makes an attempt of its own: nothing of a password's verification is kept.
   */
  private async sharedPasswordAttempt(credential: Credential & { kind: 'basic' }, address: string): Promise<AuthContext> {
    const key = secretKey(address, credential.username.toLowerCase(), credential.secret);
    const earlier = this.passwordAttempts.get(key);
    if (earlier) return ownCopy(await earlier);
    return whileRunning(this.passwordAttempts, key, this.authenticateBasic(credential, address));
  }

  /** An API or OAuth2 token this process found valid before: no guess. */
  private verifiedBefore(token: string): boolean {
    return this.tokens.verifiedBefore(token) || this.oauth2Tokens.verifiedBefore(token);
  }

  /**
   * The first verification of `token` (one not verified before) runs `verify`, counted as every guess is. A
   * request presenting the same token meanwhile waits for it and then tries `again`: once the token verified it
   * is no guess, and goes through uncounted. So a burst with one new token (a CI fan-out, the first minute after
   * a restart) is counted and verified once, not refused beyond the sign-in limit; the same wrong token sent at
   * once is tried one attempt after another, each counted.
   */
  private async firstVerification(token: string, verify: () => Promise<AuthContext>, again: () => Promise<AuthContext>): Promise<AuthContext> {
    const key = secretKey(token);
    const earlier = this.firstVerifications.get(key);
    if (earlier) {
      await earlier.catch(() => undefined);
      return again();
    }
    return whileRunning(this.firstVerifications, key, verify());
  }

  /**
   * The gateway has authenticated the user already: nothing to verify and no limit to count. An unknown name is
   * registered when REVERSE_PROXY_AUTO_REGISTRATION allows, else refused (401), as is an organisation's name.
   */
  private async authenticateGatewayUser(credential: Credential & { kind: 'reverse-proxy' }, address: string): Promise<AuthContext> {
    let user = await this.users.byName(credential.username);
    if (!user && this.reverseProxyConfig.autoRegistration) {
      try {
        user = await this.accounts.registerFromGateway({
          username: credential.username,
          email: credential.email !== '' ? credential.email : `${randomUUID()}@noreply.localhost`,
          fullName: credential.fullName,
          address,
        });
      } catch (error) {
        if (error instanceof DomainError) throw new UnauthorizedError(`the gateway's user cannot be registered: ${error.message}`);
        throw error;
      }
    }
    if (!user || user.isOrganization) throw new UnauthorizedError(SIGN_IN_FAILED);
    return new AuthContext(user, 'reverse-proxy', null);
  }

  /** `client` is whose turn a key derivation waits for (KDF work is shared fairly between clients). */
  private async verify(credential: Exclude<Credential, { kind: 'reverse-proxy' }>, client: string): Promise<AuthContext> {
    if (credential.kind === 'token') return this.resolveToken(credential.token);
    const { username, secret } = credential;
    if (nameIsToken(credential)) return this.verify({ kind: 'token', token: username, fromQuery: false }, client);
    const found = await this.users.byName(username);
    const user = found && !found.isOrganization && found.passwdHash !== '' ? found : undefined;
    const verified = await verifyPassword(secret, user?.passwdHash ?? DECOY_PASSWORD_HASH, client);
    if (user && verified) return new AuthContext(user, 'password', null);
    // The secret may be a token presented as the password.
    try {
      return await this.resolveToken(secret);
    } catch (error) {
      if (error instanceof KdfBusyError) throw error;
      throw new UnauthorizedError(SIGN_IN_FAILED);
    }
  }

  /**
   * The one place a presented token is resolved: an API token, or an OAuth2 access token (a different shape),
   * each with its scopes.
   */
  private async resolveToken(plaintext: string): Promise<AuthContext> {
    if (OAuth2AccessTokens.looksLikeOne(plaintext)) {
      const granted = await this.oauth2Tokens.authenticate(plaintext);
      if (!granted) throw new UnauthorizedError(TOKEN_FAILED);
      return new AuthContext(granted.user, 'token', granted.scopes);
    }
    const { token, user } = await this.tokens.authenticate(plaintext);
    return new AuthContext(user, 'token', ScopeSet.fromStored(token.scope));
  }
}

/** Gives back every reserved count; a refund the store refuses is logged there and does not hide the answer. */
async function refundAll(refunds: (() => Promise<void>)[]): Promise<void> {
  await Promise.all(refunds.map((refund) => refund().catch(() => undefined)));
}

/** Whom failed sign-ins are counted against: the client's address, as `ip:<address>`. */
export function clientAddress(request: Request): string {
  return `ip:${clientIp(request)}`;
}

/** The credential a request carries (header first, then the query string); malformed headers throw. */
export function readCredential(request: Request): Credential | undefined {
  const header = request.headers.authorization;
  if (header !== undefined) return parseAuthorization(header);
  // Express parses the query string at every read of `request.query`: only a URL with one is read.
  if (!request.url.includes('?')) return undefined;
  const query = request.query;
  for (const name of ['token', 'access_token']) {
    const value = query[name];
    if (typeof value === 'string' && value !== '') return { kind: 'token', token: value, fromQuery: true };
  }
  return undefined;
}

/** How a sign-in came, for the audit log: Basic carrying a token counts as a token. */
function carrierOf(credential: Credential, context: AuthContext | null): SignInCarrier {
  if (credential.kind === 'basic') return context?.method === 'token' ? 'token' : 'basic';
  return credential.kind;
}

/** The account name a failed sign-in tried; never a secret (Basic with an empty password carries a token as the name). */
function attemptedName(credential: Credential): string {
  if (credential.kind === 'reverse-proxy') return credential.username;
  if (credential.kind === 'basic' && !nameIsToken(credential)) return credential.username;
  return '';
}

/** A key for a secret (and what goes with it) that holds no secret: SHA-256 of the parts. */
function secretKey(...parts: string[]): string {
  return createHash('sha256').update(parts.join('\0')).digest('base64');
}

/** `running` kept in `flights` under `key` until it settles, for requests that come meanwhile to join. */
function whileRunning<T>(flights: Map<string, Promise<T>>, key: string, running: Promise<T>): Promise<T> {
  flights.set(key, running);
  const settled = () => {
    if (flights.get(key) === running) flights.delete(key);
  };
  running.then(settled, settled);
  return running;
}

/** The same sign-in for another request: a user entity of its own, so that no request sees another's changes. */
function ownCopy(context: AuthContext): AuthContext {
  const user = context.user && (Object.assign(Object.create(Object.getPrototypeOf(context.user) as object), context.user) as UserEntity);
  return new AuthContext(user, context.method, context.scopes);
}

/** An API token's or an OAuth2 access token's shape (a password may have it too, and is then tried as both). */
function looksLikeToken(secret: string): boolean {
  return TOKEN_PATTERN.test(secret) || OAuth2AccessTokens.looksLikeOne(secret);
}

/** Forgejo: Basic with an empty password or "x-oauth-basic" carries the token as the user name. */
function nameIsToken(credential: Credential & { kind: 'basic' }): boolean {
  return credential.secret === '' || credential.secret === 'x-oauth-basic';
}

/** A header's value, trimmed; the first of repeated ones. */
function headerValue(request: Request, name: string): string {
  const value = request.headers[name];
  return (Array.isArray(value) ? (value[0] ?? '') : (value ?? '')).trim();
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
