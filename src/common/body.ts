import { ArgumentMetadata, createParamDecorator, ExecutionContext, Inject, Injectable, NestMiddleware, PipeTransform } from '@nestjs/common';
import Busboy from 'busboy';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import type { NextFunction, Request, Response } from 'express';
import getRawBody from 'raw-body';
import { APP_CONFIG, AppConfig } from '../config/config';
import { BadRequestError, DomainError, InvalidInputError, PayloadTooLargeError } from './errors';
import { fieldSpecs, FieldType } from './fields';

/**
 * A request body as decoded by BodyMiddleware. Decoding problems are kept, not thrown, so that each route's
 * checks run in the order behaviour 1.6 gives (scope → sign-in → body): only a handler that binds the body
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

@Injectable()
export class BodyMiddleware implements NestMiddleware {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  async use(request: Request, _response: Response, next: NextFunction): Promise<void> {
    if (!BODY_METHODS.has(request.method)) {
      request.body = new DecodedBody({}, false);
      return next();
    }
    try {
      request.rawBody = await getRawBody(request, { limit: this.config.maxBodyBytes });
    } catch (error) {
      const type = (error as { type?: string }).type;
      if (type === 'entity.too.large') return next(new PayloadTooLargeError('request body is too large'));
      return next(new BadRequestError('could not read the request body'));
    }
    request.body = await decode(request);
    next();
  }
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
    return new DecodedBody(formFields(new URLSearchParams(raw.toString('utf8'))), true);
  }
  if (contentType.startsWith('multipart/form-data')) {
    try {
      return new DecodedBody(await multipartFields(request.headers, raw), true);
    } catch {
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
  return new DecodedBody(value as Record<string, unknown>, false);
}

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
    const parser = Busboy({ headers });
    parser.on('field', (name, value) => entries.push([name, value]));
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
 * The decoded body, not yet checked: for routes whose order puts body errors after lookups and permission
 * checks (PATCH /repos/{owner}/{repo}, POST /orgs/{org}/repos — behaviour 1.6, 10.5). Check it with
 * `bindOption` where the order says.
 */
export const DeferredBody = createParamDecorator((_data: unknown, context: ExecutionContext): DecodedBody => {
  const body = context.switchToHttp().getRequest<Request>().body as unknown;
  return body instanceof DecodedBody ? body : new DecodedBody({}, false);
});

/** What `@Body() option: T` does, run later: decoding errors (400/422), then the option's field rules (422). */
export function bindOption<T extends object>(body: DecodedBody, target: new () => T): T {
  return new BodyPipe().transform(body, { type: 'body', metatype: target }) as T;
}
