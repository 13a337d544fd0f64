import { applyDecorators, CanActivate, ExecutionContext, Inject, Injectable, Optional, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { Request } from 'express';
import { RateLimiterAbstract, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import { APP_CONFIG, AppConfig, RateLimitConfig } from '../config/config';
import { ApiErrors } from './openapi';
import { TooManyRequestsError } from './errors';

export type RateLimitName = Exclude<keyof RateLimitConfig, 'windowMs'>;

/**
 * Builds the limiter of one name. The default keeps counts in this process's memory; a deployment running
 * several instances provides a factory whose limiters share a store (rate-limiter-flexible's Redis, MySQL or
 * Postgres limiters) under this token.
 */
export const RATE_LIMITER_FACTORY = Symbol('RATE_LIMITER_FACTORY');
export type RateLimiterFactory = (name: RateLimitName, points: number, durationSeconds: number) => RateLimiterAbstract;

const inMemory: RateLimiterFactory = (name, points, duration) => new RateLimiterMemory({ keyPrefix: name, points, duration });

/** The project's rate limits (SECURITY.md): RATE_LIMIT_* settings, one window, a 429 with Retry-After. */
@Injectable()
export class RateLimits {
  private readonly limiters = new Map<RateLimitName, RateLimiterAbstract>();

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Optional() @Inject(RATE_LIMITER_FACTORY) factory?: RateLimiterFactory,
  ) {
    const { windowMs, ...limits } = config.rateLimits;
    const duration = Math.max(1, Math.ceil(windowMs / 1000));
    for (const [name, points] of Object.entries(limits) as [RateLimitName, number][]) {
      if (points > 0) this.limiters.set(name, (factory ?? inMemory)(name, points, duration));
    }
  }

  /** Counts one event for `key`; a 429 once the window's allowance is spent. */
  async consume(name: RateLimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    if (!limiter) return;
    try {
      await limiter.consume(key);
    } catch (error) {
      if (error instanceof RateLimiterRes) throw tooMany(error);
      throw error;
    }
  }

  /** A 429 if `key` has already spent its allowance; counts nothing. */
  async check(name: RateLimitName, key: string): Promise<void> {
    const limiter = this.limiters.get(name);
    const state = limiter ? await limiter.get(key) : null;
    if (limiter && state && state.consumedPoints >= limiter.points) throw tooMany(state);
  }

  async reset(name: RateLimitName, key: string): Promise<void> {
    await this.limiters.get(name)?.delete(key);
  }
}

function tooMany(state: RateLimiterRes): TooManyRequestsError {
  return new TooManyRequestsError('too many requests, try again later', Math.max(1, Math.ceil(state.msBeforeNext / 1000)));
}

/** Who a request counts against: the signed-in user, else the client address. */
export function rateLimitKey(request: Request): string {
  return request.auth?.user ? `user:${request.auth.user.id}` : `ip:${request.ip ?? request.socket.remoteAddress ?? ''}`;
}

const RATE_LIMIT = 'anvil:rate-limit';

/** Counts each call of the route against the named limit, after the auth guard has identified the caller. */
export function RateLimit(name: RateLimitName) {
  return applyDecorators(SetMetadata(RATE_LIMIT, name), UseGuards(RateLimitGuard), ApiErrors(429));
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
