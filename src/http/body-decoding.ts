import Busboy from 'busboy';
import type { Request } from 'express';
import { BadRequestError, DomainError, InvalidInputError, PayloadTooLargeError } from '../common/errors';

// Why: JSON, form and multipart bodies become one plain object here, under caps, before any handler sees them.

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

/** Caps on a decoded body's shape, applied before any handler sees it (SECURITY.md). */
export const BODY_CAPS = { fields: 1000, depth: 32 } as const;

export async function decode(request: Request): Promise<DecodedBody> {
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
