import { createHash } from 'node:crypto';
import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { InvalidScopeError, ScopeSet } from '../auth/scopes';

/** The one answer to a token that does not verify. */
export const TOKEN_FAILED = 'user does not exist or access token does not exist';
import { generateSalt, generateToken, hashToken, sameHash, TOKEN_PATTERN } from '../auth/secrets';
import { BadRequestError, ForbiddenError, InvalidInputError, NotFoundError, UnauthorizedError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { AccessTokenEntity } from './access-token.entity';
import { AccessTokenStore } from './access-token.store';
import { UserEntity } from './user.entity';
import { TokenVerifications, Verification } from './token-verifications';

export interface NewAccessToken {
  token: AccessTokenEntity;
  /** The plaintext, shown exactly once. */
  plaintext: string;
}

/** Presented tokens whose verification is remembered (VERIFICATION_CACHE_SIZE entries, least recently used out first). */
export const VERIFICATION_CACHE_SIZE = 10_000;

/** How often a token's last-used time is written at most: a write per request would cost more than it tells. */
const TOUCH_INTERVAL_SECONDS = 60;

@Injectable()
export class AccessTokensService {
  private readonly verifications = new TokenVerifications(VERIFICATION_CACHE_SIZE, (plaintext) => this.verify(plaintext));

  constructor(
    private readonly tokens: AccessTokenStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async create(owner: UserEntity, name: string, scopeItems: string[] | undefined): Promise<NewAccessToken> {
    let scopes: ScopeSet;
    try {
      scopes = ScopeSet.parse(scopeItems ?? []);
    } catch (error) {
      if (error instanceof InvalidScopeError) {
        throw new BadRequestError(`invalid access token scope provided: ${error.message}`);
      }
      throw error;
    }
    if (scopes.isEmpty) throw new BadRequestError('access token must have a scope');
    const plaintext = generateToken();
    const salt = generateSalt();
    const hash = await hashToken(plaintext, salt);
    const now = this.clock.nowUnix();
    const token = await this.transactions.run(async (tx) => {
      const existing = await this.tokens.listAllByUser(owner.id, tx);
      if (existing.some((token) => token.name === name)) throw new BadRequestError('access token name has been used already');
      const created = await this.tokens.insert(tx, {
        uid: owner.id,
        name,
        tokenHash: hash,
        tokenSalt: salt,
        tokenLastEight: plaintext.slice(-8),
        scope: scopes.toStored(),
        createdUnix: now,
        updatedUnix: now,
      });
      await this.audit.record(tx, { action: 'token.create', target: tokenTarget(owner, created), detail: { scopes: scopes.toStored() } });
      return created;
    });
    return { token, plaintext };
  }

  list(owner: UserEntity, page: PageQuery): Promise<Page<AccessTokenEntity>> {
    return this.tokens.listByUser(owner.id, page);
  }

  /** `{token}` is a numeric id or a token name (matched case-insensitively, as Forgejo does on MySQL). */
  async delete(owner: UserEntity, idOrName: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const all = await this.tokens.listAllByUser(owner.id, tx);
      const byId = /^\d+$/.test(idOrName) ? all.find((token) => token.id === Number(idOrName)) : undefined;
      const matches = byId ? [byId] : all.filter((token) => token.name.toLowerCase() === idOrName.toLowerCase());
      if (matches.length === 0) throw new NotFoundError();
      if (matches.length > 1) throw new InvalidInputError(`multiple matches for token name '${idOrName}'`);
      await this.tokens.delete(tx, matches[0].id);
      await this.audit.record(tx, { action: 'token.delete', target: tokenTarget(owner, matches[0]) });
    });
  }

  /** Resolves a presented token to its row and owner; a token of the wrong shape simply does not exist. */
  async authenticate(plaintext: string): Promise<{ token: AccessTokenEntity; user: UserEntity }> {
    const found = TOKEN_PATTERN.test(plaintext) ? await this.findToken(plaintext) : null;
    if (!found) throw new UnauthorizedError(TOKEN_FAILED);
    const now = this.clock.nowUnix();
    if (now - found.token.updatedUnix >= TOUCH_INTERVAL_SECONDS) await this.tokens.touch(found.token.id, now);
    return found;
  }

  /**
   * Whether `plaintext` was verified before as a stored token (this process remembers it): a sign-in with it
   * is no guess, and the sign-in limits need not count it. Asks nothing of the database.
   */
  verifiedBefore(plaintext: string): boolean {
    return TOKEN_PATTERN.test(plaintext) && this.verifications.knownValid(digest(plaintext));
  }

  /** The token and its owner, read on every request (a deleted token or changed account counts at once). */
  private async findToken(plaintext: string): Promise<{ token: AccessTokenEntity; user: UserEntity } | null> {
    const key = digest(plaintext);
    for (let attempt = 0; attempt < 2; attempt++) {
      const verification = await this.verifications.get(key, plaintext);
      if (verification === undefined || verification.id === undefined) return null;
      const found = await this.tokens.findWithOwner(verification.id);
      if (found && found.token.tokenLastEight === plaintext.slice(-8)) return found;
      // Deleted since it was verified: forget it, and verify once more against what is stored now.
      this.verifications.forget(key);
    }
    return null;
  }

  /** PBKDF2 against the stored tokens with the same last eight characters; undefined (not kept) when none has them. */
  private async verify(plaintext: string): Promise<Verification | undefined> {
    const candidates = await this.tokens.findByLastEight(plaintext.slice(-8));
    for (const candidate of candidates) {
      if (sameHash(await hashToken(plaintext, candidate.tokenSalt), candidate.tokenHash)) return { id: candidate.id };
    }
    return candidates.length === 0 ? undefined : { id: undefined };
  }

  /** Guards token management routes: only the user themselves or a site admin. */
  assertMayManage(viewer: AuthContext, owner: UserEntity): void {
    if (!viewer.isSelfOrAdmin(owner.id)) {
      throw new ForbiddenError('doer should be the site admin or be same as the contextUser');
    }
  }
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}

/** A token in the audit log: its owner and name, never any part of its value. */
function tokenTarget(owner: UserEntity, token: AccessTokenEntity) {
  return { type: 'token' as const, id: token.id, name: `${owner.name}/${token.name}` };
}
