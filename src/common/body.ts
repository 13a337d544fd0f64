import {
  ArgumentMetadata,
  Body as NestBody,
  CanActivate,
  createParamDecorator,
  ExecutionContext,
  Inject,
  Injectable,
  PipeTransform,
  SetMetadata,
} from '@nestjs/common';
import { GUARDS_METADATA, ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import Busboy from 'busboy';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { Request } from 'express';
import getRawBody from 'raw-body';
import { APP_CONFIG, AppConfig } from '../config/config';
import { BadRequestError, DomainError, InvalidInputError, PayloadTooLargeError } from './errors';
import { fieldSpecs, FieldType } from './fields';

/**
 * A request body as decoded by BodyGuard. Decoding problems are kept, not thrown, so that each route's
 * checks run in the order docs/check-order.md gives (scope → sign-in → body): only a handler that binds the body
 * (`@Body()`) meets them, through BodyPipe.
 */
export class DecodedBody {
  constructor(
    readonly value: Record<string, unknown>,
    readonly fromForm: boolean,
    readonly error?: DomainError,
  ) {}
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Caps on a decoded body's shape, applied before any handler sees it (SECURITY.md). */
export const BODY_CAPS = { fields: 1000, depth: 32 } as const;

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
 * `AsyncResource.bind`s per request, which cost a body route a fifth of its throughput under load.
 */
@Injectable()
export class BodyGuard implements CanActivate {
  private readonly readings = new WeakMap<Function, BodyReading | null>();

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

/** A refused request's unread body up to this size is read and thrown away before the connection is reused. */
const DISCARD_MAX_BYTES = 1024 * 1024;
/** ... and must have arrived within this long after the answer, or the connection is closed. */
const DISCARD_TIMEOUT_MS = 10_000;

/**
 * What to do with the body of a request answered without reading it. A small body that was never touched
 * and not held back by `Expect: 100-continue` is read and discarded after the answer, up to DISCARD_MAX_BYTES
 * and DISCARD_TIMEOUT_MS: a client still sending it (fetch, gitea-js) then reads the status instead of
 * failing to write into a closed connection (EPIPE). Anything else is not read: the connection closes after
 * the answer.
 */
export function settleUnreadBody(request: Request, response: { setHeader(name: string, value: string): unknown }): void {
  if (!bodyLeftUnread(request)) return;
  const declared = request.headers['content-length'] === undefined ? undefined : Number(request.headers['content-length']);
  const heldBack = String(request.headers.expect ?? '').toLowerCase() === '100-continue';
  const small = declared === undefined || (Number.isFinite(declared) && declared <= DISCARD_MAX_BYTES);
  if (heldBack || !small || request.readableFlowing !== null) {
    response.setHeader('Connection', 'close');
    return;
  }
  let seen = 0;
  const cut = () => request.socket?.destroy();
  const timer = setTimeout(cut, DISCARD_TIMEOUT_MS);
  timer.unref();
  request.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > DISCARD_MAX_BYTES) cut();
  });
  request.once('end', () => clearTimeout(timer));
  request.once('close', () => clearTimeout(timer));
  request.on('error', () => clearTimeout(timer));
  request.resume();
}

/** True while bytes of the request body may still be on the wire, unread. */
export function bodyLeftUnread(request: Request): boolean {
  if (request.complete || request.readableEnded) return false;
  const length = Number(request.headers['content-length'] ?? 0);
  return length > 0 || request.headers['transfer-encoding'] !== undefined;
}

async function decode(request: Request): Promise<DecodedBody> {
  const contentType = (request.headers['content-type'] ?? '').toLowerCase();
  const raw = request.rawBody ?? Buffer.alloc(0);
  if (contentType === '') {
    if (request.method === 'POST' || request.method === 'PUT') {
      return new DecodedBody({}, false, new InvalidInputError('Empty Content-Type'));
    }
    return new DecodedBody({}, false);
  }
  if (contentType.includes('json')) return decodeJson(raw.toString('utf8'));
  if (contentType.startsWith('application/x-www-form-urlencoded')) {
    const text = raw.toString('utf8');
    if (countOf(text, '&') >= BODY_CAPS.fields) return tooManyFields(true);
    return new DecodedBody(formFields(new URLSearchParams(text)), true);
  }
  if (contentType.startsWith('multipart/form-data')) {
    try {
      return new DecodedBody(await multipartFields(request.headers, raw), true);
    } catch (error) {
      if (error instanceof TooManyFieldsError) return tooManyFields(true);
      return new DecodedBody({}, true, new BadRequestError('malformed multipart body'));
    }
  }
  return new DecodedBody({}, false, new InvalidInputError('Unsupported Content-Type'));
}

function decodeJson(text: string): DecodedBody {
  if (text.trim() === '') return new DecodedBody({}, false);
  let value: unknown;
  try {
    // Keys that could reach an object's prototype are dropped while parsing.
    value = JSON.parse(text, (key, item: unknown) => (key === '__proto__' || key === 'constructor' ? undefined : item));
  } catch (error) {
    return new DecodedBody({}, false, new BadRequestError(`invalid JSON body: ${(error as Error).message}`));
  }
  if (value === null) return new DecodedBody({}, false);
  if (typeof value !== 'object' || Array.isArray(value)) {
    return new DecodedBody({}, false, new InvalidInputError('[Body]: must be a JSON object'));
  }
  const shape = measure(value);
  if (shape.depth > BODY_CAPS.depth) {
    return new DecodedBody({}, false, new BadRequestError(`invalid JSON body: nested deeper than ${BODY_CAPS.depth} levels`));
  }
  if (shape.values > BODY_CAPS.fields) return tooManyFields(false);
  return new DecodedBody(value as Record<string, unknown>, false);
}

/** Depth and number of values of a parsed JSON document, walked without recursion. */
function measure(root: unknown): { depth: number; values: number } {
  let depth = 0;
  let values = 0;
  const stack: [unknown, number][] = [[root, 1]];
  while (stack.length > 0) {
    const [value, level] = stack.pop()!;
    values++;
    depth = Math.max(depth, level);
    if (depth > BODY_CAPS.depth || values > BODY_CAPS.fields) break;
    if (value !== null && typeof value === 'object') {
      for (const item of Object.values(value)) stack.push([item, level + 1]);
    }
  }
  return { depth, values };
}

function tooManyFields(fromForm: boolean): DecodedBody {
  return new DecodedBody({}, fromForm, new PayloadTooLargeError(`request body has more than ${BODY_CAPS.fields} fields`));
}

function countOf(text: string, character: string): number {
  let count = 0;
  for (let at = text.indexOf(character); at >= 0; at = text.indexOf(character, at + 1)) count++;
  return count;
}

class TooManyFieldsError extends Error {}

function formFields(params: Iterable<[string, string]>): Record<string, string[]> {
  const fields: Record<string, string[]> = Object.create(null) as Record<string, string[]>;
  for (const [key, value] of params) {
    if (key === '__proto__' || key === 'constructor') continue;
    (fields[key] ??= []).push(value);
  }
  return fields;
}

function multipartFields(headers: Request['headers'], raw: Buffer): Promise<Record<string, string[]>> {
  return new Promise((resolve, reject) => {
    const entries: [string, string][] = [];
    const parser = Busboy({ headers, limits: { fields: BODY_CAPS.fields, files: BODY_CAPS.fields } });
    parser.on('field', (name, value) => entries.push([name, value]));
    parser.on('fieldsLimit', () => reject(new TooManyFieldsError()));
    parser.on('file', (_name, stream) => stream.resume());
    parser.on('close', () => resolve(formFields(entries)));
    parser.on('error', reject);
    parser.end(raw);
  });
}

/** Form fields arrive as strings: give each the type its field declares. */
function coerceForm(target: Function, fields: Record<string, unknown>): Record<string, unknown> {
  const specs = fieldSpecs(target);
  const value: Record<string, unknown> = {};
  for (const [key, values] of Object.entries(fields)) {
    const list = values as string[];
    value[key] = coerce(specs.get(key)?.type ?? 'string', list);
  }
  return value;
}

function coerce(type: FieldType, values: string[]): unknown {
  const last = values[values.length - 1];
  switch (type) {
    case 'boolean':
      return ['true', '1', 'on', 'yes'].includes(last.toLowerCase()) ? true : ['false', '0', 'off', 'no', ''].includes(last.toLowerCase()) ? false : last;
    case 'integer':
      return /^-?\d+$/.test(last) ? Number(last) : last;
    case 'strings':
      return values.flatMap((item) => item.split(',')).map((item) => item.trim()).filter((item) => item !== '');
    default:
      return last;
  }
}

/**
 * Binds `@Body() option: SomeOption`: raises the kept decoding error, then validates the option class's
 * fields and reports the first failure as a 422.
 */
@Injectable()
export class BodyPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body' || !(value instanceof DecodedBody)) return value;
    if (value.error) throw value.error;
    const target = metadata.metatype;
    if (!target || target === Object) return value.value;
    return validateOption(target, value.fromForm ? coerceForm(target, value.value) : value.value);
  }
}

/** Builds an option object from plain data and applies its field rules; the first failure is a 422. */
export function validateOption<T extends object>(target: new () => T, plain: Record<string, unknown>): T;
export function validateOption(target: Function, plain: Record<string, unknown>): object;
export function validateOption(target: Function, plain: Record<string, unknown>): object {
  const option = plainToInstance(target as new () => object, plain) as object;
  const errors = validateSync(option, { stopAtFirstError: true, forbidUnknownValues: false });
  if (errors.length > 0) {
    const first = errors[0];
    throw new InvalidInputError(Object.values(first.constraints ?? {})[0] ?? `[${first.property}]: invalid`);
  }
  return option;
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

/** What `@Body() option: T` does, run later: reading, decoding errors (400/413/422), then the option's field rules (422). */
export async function bindOption<T extends object>(body: LazyBody, target: new () => T): Promise<T> {
  return new BodyPipe().transform(await body.read(), { type: 'body', metatype: target }) as T;
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
