import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { RESPONSE_PASSTHROUGH_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { Reflector } from '@nestjs/core';
import type { Request, Response } from 'express';
import { HttpConfig, SiteConfig } from '../config/slices';
import { DomainError } from '../common/errors';

// Why: a stuck API handler answers 503 in bounded time instead of holding the client and its connection.

/** 503: the handler did not answer within API_REQUEST_TIMEOUT. */
export class RequestTimedOutError extends DomainError {
  readonly status = 503;
  constructor() {
    super('the request took too long to answer; try again later');
  }
}

const NO_REQUEST_TIMEOUT = 'anvil:no-request-timeout';
const STARTED = Symbol('anvil:request-started');

/** Authentication marks when its database lookups began: the route's timer then has what is left of the limit. */
export function markRequestStart(request: Request): void {
  (request as Request & { [STARTED]?: number })[STARTED] = performance.now();
}

/**
 * A route that takes as long as its transfer (a streamed upload) or has a longer limit of its own (a migration's
 * clone, 600 s), which API_REQUEST_TIMEOUT must not cut short.
 */
export function NoRequestTimeout() {
  return SetMetadata(NO_REQUEST_TIMEOUT, true);
}

/**
 * API_REQUEST_TIMEOUT (SECURITY.md): an /api/v1 route whose handler has not answered in time gets a 503 with the
 * standard error body, and its connection is free for the next request. It covers JSON routes only: git (served
 * before Nest), routes outside /api/v1 (uploads of packages and downloads of attachments), handlers that write the
 * response themselves (`@Res()` without passthrough: downloads, archives, raw files) and routes marked
 * `@NoRequestTimeout()` (streamed uploads, migrations) take as long as their transfer or their own limit. What the handler had started
 * may still finish after the 503 (its result is dropped): like a gateway's timeout, the answer says "unknown",
 * not "undone". A guard, not an interceptor: it arms one timer when the route is chosen and the caller let through,
 * and adds no per-request wrapper around the handler; a late answer is dropped (http/json-answer.ts).
 */
@Injectable()
export class ApiRequestTimeout implements CanActivate {
  private readonly applies = new WeakMap<object, boolean>();

  constructor(
    private readonly httpConfig: HttpConfig,
    private readonly siteConfig: SiteConfig,
    private readonly reflector: Reflector,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const limit = this.httpConfig.apiRequestTimeoutMs;
    if (limit <= 0 || context.getType() !== 'http') return true;
    const http = context.switchToHttp();
    const request = http.getRequest<Request>();
    if (!request.path.startsWith('/api/v1/') || !this.appliesTo(context)) return true;
    const response = http.getResponse<Response>();
    const started = (request as Request & { [STARTED]?: number })[STARTED];
    const left = started === undefined ? limit : Math.max(0, limit - (performance.now() - started));
    const timer = setTimeout(() => this.expire(response), left);
    response.once('close', () => clearTimeout(timer));
    return true;
  }

  /** The standard error body (docs/api-conventions.md), unless the answer has begun. */
  private expire(response: Response): void {
    if (response.headersSent) return;
    const error = new RequestTimedOutError();
    response.status(error.status).json({ message: error.message, url: `${this.siteConfig.rootUrl}api/swagger` });
  }

  private appliesTo(context: ExecutionContext): boolean {
    const handler = context.getHandler();
    let applies = this.applies.get(handler);
    if (applies === undefined) {
      const controller = context.getClass();
      const parameters = Object.keys((Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, unknown>);
      const ownsResponse =
        parameters.some((key) => key.startsWith(`${RouteParamtypes.RESPONSE}:`) || key.startsWith(`${RouteParamtypes.NEXT}:`)) &&
        !Reflect.getMetadata(RESPONSE_PASSTHROUGH_METADATA, controller, handler.name);
      applies = !ownsResponse && !this.reflector.get<boolean | undefined>(NO_REQUEST_TIMEOUT, handler);
      this.applies.set(handler, applies);
    }
    return applies;
  }
}
