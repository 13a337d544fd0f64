import { createHash } from 'node:crypto';
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
import { UserStore } from './user.store';

export interface NewAccessToken {
  token: AccessTokenEntity;
  /** The plaintext, shown exactly once. */
  plaintext: string;
}

/** How often a token's last-used time is written at most: a write per request would cost more than it tells. */
const TOUCH_INTERVAL_SECONDS = 60;

@Injectable()
export class AccessTokensService {
  /** sha256(token) → token id of tokens that verified recently, so that PBKDF2 runs once, not per request. */
  private readonly verified = new Map<string, number>();
  /**
   * sha256(token) of presented tokens that matched a stored last-eight but failed verification: without it,
   * a token ending in a known last-eight would cost one PBKDF2 per request (issue 12, suspicion 2).
   */
  private readonly rejected = new Set<string>();

  constructor(
    private readonly tokens: AccessTokenStore,
    private readonly users: UserStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
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
      return this.tokens.insert(tx, {
        uid: owner.id,
        name,
        tokenHash: hash,
        tokenSalt: salt,
        tokenLastEight: plaintext.slice(-8),
        scope: scopes.toStored(),
        createdUnix: now,
        updatedUnix: now,
      });
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
    });
  }

  /** Resolves a presented token to its row and owner; a token of the wrong shape simply does not exist. */
  async authenticate(plaintext: string): Promise<{ token: AccessTokenEntity; user: UserEntity }> {
    const token = TOKEN_PATTERN.test(plaintext) ? await this.findToken(plaintext) : null;
    const user = token ? await this.users.findById(token.uid) : null;
    if (!token || !user) throw new UnauthorizedError(TOKEN_FAILED);
    const now = this.clock.nowUnix();
    if (now - token.updatedUnix >= TOUCH_INTERVAL_SECONDS) await this.tokens.touch(token.id, now);
    return { token, user };
  }

  private async findToken(plaintext: string): Promise<AccessTokenEntity | null> {
    const cacheKey = digest(plaintext);
    if (this.rejected.has(cacheKey)) return null;
    const cachedId = this.verified.get(cacheKey);
    if (cachedId !== undefined) {
      const cached = await this.tokens.findById(cachedId);
      if (cached && cached.tokenLastEight === plaintext.slice(-8)) return cached;
      this.verified.delete(cacheKey);
    }
    const candidates = await this.tokens.findByLastEight(plaintext.slice(-8));
    for (const candidate of candidates) {
      if (sameHash(await hashToken(plaintext, candidate.tokenSalt), candidate.tokenHash)) {
        if (this.verified.size >= 10_000) this.verified.clear();
        this.verified.set(cacheKey, candidate.id);
        return candidate;
      }
    }
    if (candidates.length === 0) return null;
    if (this.rejected.size >= 10_000) this.rejected.clear();
    this.rejected.add(cacheKey);
    return null;
  }

  /** Guards token management routes: only the user themselves or a site admin (D18). */
  assertMayManage(viewer: AuthContext, owner: UserEntity): void {
    if (!viewer.isSelfOrAdmin(owner.id)) {
      throw new ForbiddenError('doer should be the site admin or be same as the contextUser');
    }
  }
}

function digest(value: string): string {
  return createHash('sha256').update(value).digest('hex');
}
