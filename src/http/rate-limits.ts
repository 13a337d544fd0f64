import { createHash } from 'node:crypto';
import { applyDecorators, CanActivate, ExecutionContext, Inject, Injectable, Logger, OnModuleDestroy, Optional, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { RateLimitConfig } from '../config/slices';
import { GuardedBeforeBody } from './body-guard';
import { clientIp } from './client-address';
import { ApiErrors } from '../common/openapi';
import { KeyedLock } from '../common/keyed-lock';
import { RateLimitStore } from './rate-limit.store';
import { ServiceUnavailableError } from '../common/dependency-errors';
import { TooManyRequestsError } from '../common/errors';

export type RateLimitName = Exclude<keyof RateLimitConfig, 'windowMs' | 'store'>;

/**
 * Builds the limiter of one name. RATE_LIMIT_STORE chooses between this process's memory and the database
 * (shared by every instance on it); a deployment wanting another shared store (rate-limiter-flexible's Redis
 * or Postgres limiters) can still provide a factory under this token, which wins over the setting.
 */
export const RATE_LIMITER_FACTORY = Symbol('RATE_LIMITER_FACTORY');
export type RateLimiterFactory = (name: RateLimitName, points: number, durationSeconds: number) => RateLimiterAbstract;

const inMemory: RateLimiterFactory = (name, points, duration) => new RateLimiterMemory({ keyPrefix: name, points, duration });

/** How often expired counts are deleted from the database store. */
const CLEAR_EXPIRED_EVERY_MS = 10 * 60_000;

/** Keys longer than this (a user name from a form, say) are hashed: the database column holds 255 characters. */
const MAX_PLAIN_KEY_LENGTH = 128;

/**
 * A count the database refused for a reason that goes away when tried again: a deadlock or lock wait on one
 * server, a certification conflict on a Galera cluster (also 1213), a busy SQLite file.
 */
const RETRYABLE_CODES = new Set(['ER_LOCK_DEADLOCK', 'ER_LOCK_WAIT_TIMEOUT', 'SQLITE_BUSY', 'SQLITE_LOCKED']);
const RETRYABLE_ERRNOS = new Set([1213, 1205]);
const STORE_ATTEMPTS = 8;

export function isRetryableStoreError(error: unknown): boolean {
  const e = error as { code?: string; errno?: number } | null;
  return !!e && ((e.code !== undefined && RETRYABLE_CODES.has(e.code)) || (e.errno !== undefined && RETRYABLE_ERRNOS.has(e.errno)));
}

/** The project's rate limits (SECURITY.md): RATE_LIMIT_* settings, one window, a 429 with Retry-After. */
@Injectable()
export class RateLimits implements OnModuleDestroy {
  private readonly limiters = new Map<RateLimitName, RateLimiterAbstract>();
  private readonly sweeper?: NodeJS.Timeout;
  private readonly logger = new Logger('RateLimits');
  /**
   * A key's counts leave this process one at a time: concurrent upserts of one row then only meet those of
   * other instances, and a burst on one key (a Galera cluster aborts all but one writer of a row at commit)
   * does not spend every request's retries on its own siblings.
   */
  private readonly oneAtATime = new KeyedLock();

  constructor(rateLimitConfig: RateLimitConfig, @Optional() store?: RateLimitStore, @Optional() @Inject(RATE_LIMITER_FACTORY) factory?: RateLimiterFactory) {
    const { windowMs, store: storeName, ...limits } = rateLimitConfig;
    const duration = Math.max(1, Math.ceil(windowMs / 1000));
    const inDatabase = storeName === 'database' && store !== undefined && factory === undefined;
    const build: RateLimiterFactory = factory ?? (inDatabase ? (name, points, seconds) => store.limiter(name, points, seconds) : inMemory);
    for (const [name, points] of Object.entries(limits) as [RateLimitName, number][]) {
      if (points > 0) this.limiters.set(name, build(name, points, duration));
    }
    if (inDatabase) {
      this.sweeper = setInterval(
        () => void store.clearExpired(Date.now()).catch((error: Error) => this.logger.warn(`expired rate limit counts not cleared: ${error.message}`)),
        CLEAR_EXPIRED_EVERY_MS,
      );
      this.sweeper.unref();
    }
  }

  onModuleDestroy(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  /** Counts one event for `key`; a 429 once the window's allowance is spent. */
  async consume(name: RateLimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    if (!limiter) return;
    try {
      await this.stored(name, key, (stored) => limiter.consume(stored));
    } catch (error) {
      if (error instanceof RateLimiterRes) throw tooMany(error);
      throw error;
    }
  }

  /**
   * Counts one attempt for `key` before the work it stands for (a 429 when the allowance is spent, so the work
   * is never started) and answers how to give the count back when the attempt turns out to have been no
   * fault of the caller's (a right password, a full queue). Concurrent attempts are counted one by one by the
   * store, so no more than the allowance ever start.
   */
  async reserve(name: RateLimitName, key: string): Promise<() => Promise<void>> {
    const limiter = this.limiters.get(name);
    if (!limiter) return () => Promise.resolve();
    const giveBack = () => this.stored(name, key, (stored) => limiter.reward(stored, 1)).then(() => undefined);
    try {
      await this.stored(name, key, (stored) => limiter.consume(stored));
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      // A refused attempt did no work: its count is given back, or a burst of refusals would keep the key
      // over its allowance (and refuse the right credentials with it) long after the attempts stopped.
      await giveBack().catch(() => undefined);
      throw tooMany(error);
    }
    return giveBack;
  }

  /** A 429 if `key` has already spent its allowance; counts nothing. */
  async check(name: RateLimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    const state = limiter ? await this.stored(name, key, (stored) => limiter.get(stored)) : null;
    if (limiter && state && state.consumedPoints >= limiter.points) throw tooMany(state);
  }

  async reset(name: RateLimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    if (limiter) await this.stored(name, key, (stored) => limiter.delete(stored));
  }

  /**
   * One call to the store, after this process's earlier calls for the same key: tried again when the database
   * aborted it for a transient reason (an upsert that lost a deadlock or a Galera certification, 1213), so that
   * no count is lost; a failure that remains is logged and answered 503, never taken for "allowed". A 429
   * (RateLimiterRes) passes through.
   */
  private stored<T>(name: RateLimitName, key: string, call: (storedKey: string) => Promise<T>): Promise<T> {
    const storedKey = storeKey(key);
    return this.oneAtATime.run(`${name}\0${storedKey}`, () => this.tried(name, () => call(storedKey)));
  }

  private async tried<T>(name: RateLimitName, call: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await call();
      } catch (error) {
        if (error instanceof RateLimiterRes) throw error;
        if (isRetryableStoreError(error) && attempt < STORE_ATTEMPTS) {
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 5 * 2 ** attempt));
          continue;
        }
        this.logger.error(`rate limit ${name}: the store failed after ${attempt} attempt(s): ${error instanceof Error ? error.message : String(error)}`);
        throw new ServiceUnavailableError('the rate limit store is unavailable, try again later', 5);
      }
    }
  }
}

function storeKey(key: string): string {
  return key.length <= MAX_PLAIN_KEY_LENGTH ? key : `sha256:${createHash('sha256').update(key).digest('hex')}`;
}

function tooMany(state: RateLimiterRes): TooManyRequestsError {
  return new TooManyRequestsError('too many requests, try again later', Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
}

/** Who a request counts against: the signed-in user, else the client address. */
export function rateLimitKey(request: Request): string {
  return request.auth?.user ? `user:${request.auth.user.id}` : `ip:${clientIp(request)}`;
}

const RATE_LIMIT = 'anvil:rate-limit';

/** Counts each call of the route against the named limit, after the auth guard has identified the caller. */
export function RateLimit(name: RateLimitName) {
  return applyDecorators(SetMetadata(RATE_LIMIT, name), GuardedBeforeBody(RateLimitGuard), ApiErrors(429));
}

@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limits: RateLimits,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const name = this.reflector.get<RateLimitName | undefined>(RATE_LIMIT, context.getHandler());
    if (name) await this.limits.consume(name, rateLimitKey(context.switchToHttp().getRequest<Request>()));
    return true;
  }
}
