import { Body as NestBody, CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable, SetMetadata } from '@nestjs/common';
import { GUARDS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import type { Request } from 'express';
import getRawBody from 'raw-body';
import { APP_CONFIG, AppConfig } from '../config/config';
import { BadRequestError, PayloadTooLargeError } from '../common/errors';
import { decode, DecodedBody } from './body-decoding';

// Why: no body byte is read before the route is matched and its auth guard passed, and only routes that take one.

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export const READS_BODY = 'anvil:reads-body';

export interface BodyReading {
  /** Read only when the handler asks (DeferredBody): after the lookups and permission checks that precede it. */
  deferred?: boolean;
  /** Largest body accepted, in bytes (or from the configuration); the default is MAX_BODY_SIZE. */
  limit?: number | ((config: AppConfig) => number);
}

/**
 * A route that reads its body without `@Body()` (through `@Req()`, DeferredBody or its own decoding) says so
 * here; a `@Body()` parameter opts in by itself. Nothing else is ever read: no body byte is consumed before
 * the route is matched and its auth guard has passed.
 */
export function ReadsBody(reading: BodyReading = {}): MethodDecorator {
  return (target, key, descriptor) => {
    SetMetadata(READS_BODY, reading)(target, key, descriptor);
    withBodyGuard(descriptor.value as Function);
    return descriptor;
  };
}

/**
 * `@Body()` as Nest's, and the route gets BodyGuard: only routes that read a body have it. Use this one,
 * never Nest's (a test walks the routes).
 */
export function Body(): ParameterDecorator {
  return (target, key, index) => {
    NestBody()(target, key, index);
    withBodyGuard((target as Record<string | symbol, Function>)[key!]);
  };
}

/** BodyGuard goes last among the route's own guards, whatever order the decorators run in. */
function withBodyGuard(handler: Function): void {
  const guards = (Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as unknown[];
  if (!guards.includes(BodyGuard)) Reflect.defineMetadata(GUARDS_METADATA, [...guards, BodyGuard], handler);
}

/**
 * `@UseGuards(guard)` for a route's own guard that must run before its body is read (a rate limit): it goes
 * before BodyGuard when the route has one already, else last (and BodyGuard, added later, goes after it).
 */
export function GuardedBeforeBody(guard: Function): MethodDecorator {
  return (_target, _key, descriptor) => {
    const handler = descriptor.value as Function;
    const guards = ((Reflect.getMetadata(GUARDS_METADATA, handler) ?? []) as unknown[]).filter((item) => item !== guard);
    const at = guards.indexOf(BodyGuard);
    Reflect.defineMetadata(GUARDS_METADATA, at < 0 ? [...guards, guard] : [...guards.slice(0, at), guard, ...guards.slice(at)], handler);
    return descriptor;
  };
}

/**
 * Reads and decodes the body of routes that take one, as the route's last guard: after routing, the auth
 * guard and the route's own guards (a rate limit), within the route's size limit and the body-read time
 * budget. Decoding problems are kept in the DecodedBody, not thrown, so that each route's checks run in the
 * order docs/check-order.md gives. A guard, not an interceptor: Nest wraps every interceptor call in rxjs and two
 * `AsyncResource.bind`s per request (docs/http-platform.md).
 */
@Injectable()
export class BodyGuard implements CanActivate {
  private readonly readings = new WeakMap<Function, BodyReading | null>();

  // The whole AppConfig, not a slice: a route's body limit may be computed from any setting (ReadsBody's limit).
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    const reading = BODY_METHODS.has(request.method) ? this.readingOf(context.getClass(), context.getHandler()) : undefined;
    if (!reading) {
      request.body = new DecodedBody({}, false);
      return true;
    }
    const limit = typeof reading.limit === 'function' ? reading.limit(this.config) : (reading.limit ?? this.config.maxBodyBytes);
    let pending: Promise<DecodedBody> | undefined;
    const read = () => (pending ??= this.read(request, limit));
    if (reading.deferred) {
      request.body = new LazyBody(read);
      return true;
    }
    return read().then(() => true);
  }

  private readingOf(controller: Function, handler: Function): BodyReading | undefined {
    let reading = this.readings.get(handler);
    if (reading === undefined) this.readings.set(handler, (reading = bodyReading(controller, handler) ?? null));
    return reading ?? undefined;
  }

  private async read(request: Request, limit: number): Promise<DecodedBody> {
    const length = request.headers['content-length'];
    const timer = setTimeout(() => request.destroy(new BodyTimeoutError()), this.config.http.bodyTimeoutMs);
    try {
      request.rawBody = await getRawBody(request, { limit, length: request.headers['transfer-encoding'] ? undefined : length });
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') throw new PayloadTooLargeError(`request body is too large: the limit is ${limit} bytes`);
      throw new BadRequestError('could not read the request body');
    } finally {
      clearTimeout(timer);
    }
    const body = await decode(request);
    request.body = body;
    return body;
  }
}

/** A body not read yet: DeferredBody hands it to routes that check lookups and permissions first. */
export class LazyBody {
  constructor(readonly read: () => Promise<DecodedBody>) {}
}

class BodyTimeoutError extends Error {
  constructor() {
    super('request body not received in time');
  }
}

/** A route reads a body when it declares so (ReadsBody) or binds one (`@Body()`). */
export function readsBody(controller: Function, handler: Function): boolean {
  return bodyReading(controller, handler) !== undefined;
}

function bodyReading(controller: Function, handler: Function): BodyReading | undefined {
  const declared = Reflect.getMetadata(READS_BODY, handler) as BodyReading | undefined;
  if (declared) return declared;
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handler.name) ?? {}) as Record<string, unknown>;
  return Object.keys(args).some((key) => key.startsWith(`${RouteParamtypes.BODY}:`)) ? {} : undefined;
}

/**
 * The body, not yet read: for routes whose order puts body errors after lookups and permission checks
 * (PATCH /repos/{owner}/{repo}, POST /orgs/{org}/repos — docs/check-order.md). The route declares
 * `@ReadsBody({ deferred: true })`; `bindOption` reads and checks it where the order says, so a caller the
 * checks refuse never gets a byte of their body read.
 */
export const DeferredBody = createParamDecorator((_data: unknown, context: ExecutionContext): LazyBody => {
  const body = context.switchToHttp().getRequest<Request>().body as unknown;
  return body instanceof LazyBody ? body : new LazyBody(() => Promise.resolve(new DecodedBody({}, false)));
});
