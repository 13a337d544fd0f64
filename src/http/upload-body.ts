import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';
import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import Busboy from 'busboy';
import { BadRequestError, PayloadTooLargeError } from '../common/errors';

// Why: uploads stream to disk after every check, never buffered, and reach services as a typed source.

/** The file of an upload request, not yet read: its bytes flow only when the caller pipes `stream`. */
export interface UploadSource {
  stream: Readable;
  /** The multipart part's file name; '' for a raw body. */
  filename: string;
}

/**
 * Refuses a request whose declared length is over `maxBytes` before a byte is read; a body without a length
 * (chunked) is counted while it streams (BlobStorage.receive).
 */
export function assertDeclaredLength(request: IncomingMessage, maxBytes: number): void {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD_ALLOWANCE(request)) {
    throw new PayloadTooLargeError('the file is larger than the allowed size');
  }
}

/** The body's declared length (Content-Length), or undefined for a chunked body. */
export function declaredLength(request: IncomingMessage): number | undefined {
  const declared = Number(request.headers['content-length']);
  return request.headers['content-length'] !== undefined && Number.isFinite(declared) && declared >= 0 ? declared : undefined;
}

/** A multipart body carries headers and boundaries around the file; allow for them in the early check. */
function MULTIPART_OVERHEAD_ALLOWANCE(request: IncomingMessage): number {
  return isMultipart(request) ? 64 * 1024 : 0;
}

export function isMultipart(request: IncomingMessage): boolean {
  return (request.headers['content-type'] ?? '').toLowerCase().startsWith('multipart/form-data');
}

/** The raw request body as the upload; a body cut off before its end makes the stream fail. */
export function rawUpload(request: IncomingMessage): UploadSource {
  acceptBody(request);
  return { stream: request, filename: '' };
}

/**
 * Upload requests that sent `Expect: 100-continue` (curl does for bodies over 1 MiB) are told to send the
 * body only here, once every check has passed; a refused upload gets its final answer instead, and the
 * client never sends the bytes (see `expectContinueOnlyForTrustedUploads`).
 */
function acceptBody(request: IncomingMessage): void {
  const response = (request as IncomingMessage & { res?: ServerResponse }).res;
  if (String(request.headers.expect ?? '').toLowerCase() === '100-continue' && response && !response.headersSent) response.writeContinue();
}

/** POST …/releases/{id}/assets and PUT /api/packages/…: the routes whose handlers accept the body themselves. */
export function isStreamedUpload(request: IncomingMessage): boolean {
  const url = request.url ?? '';
  if (request.method === 'POST') return /^\/api\/v1\/repos\/[^/]+\/[^/]+\/releases\/[^/]+\/assets(\?|$)/.test(url);
  return request.method === 'PUT' && url.startsWith('/api/packages/');
}

/**
 * Node answers `Expect: 100-continue` at once by default, before routing and auth; this makes it do so only
 * for requests that are not streamed uploads, whose handlers answer it after their checks (acceptBody).
 */
export function expectContinueOnlyForTrustedUploads(server: Server): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    if (!isStreamedUpload(request)) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** A multipart body read up to its file part: the text fields before it, and the file (null when there is none). */
export interface MultipartUpload {
  file: UploadSource | null;
  /** Text fields that came before the file part (all of them when there is no file part). */
  fields: Record<string, string>;
}

/**
 * The part named `field` of a multipart body, streamed (busboy), with the text fields sent before it (curl -F
 * sends them in the order given); other file parts are skipped. Without that part, the whole body has been read
 * when this resolves (`file` is null). A body cut off while the part streams fails the part's stream.
 */
export function multipartUpload(request: IncomingMessage, field: string): Promise<MultipartUpload> {
  return new Promise((resolve, reject) => {
    let parser: Busboy.Busboy;
    try {
      parser = Busboy({ headers: request.headers, limits: { files: 1, fields: 20, fieldSize: 64 * 1024 } });
    } catch {
      return reject(new BadRequestError('malformed multipart body'));
    }
    const fields: Record<string, string> = {};
    let current: PassThrough | null = null;
    const fail = (error: Error) => {
      if (current) current.destroy(error);
      else reject(new BadRequestError('malformed multipart body'));
    };
    parser.on('field', (name, value) => {
      if (!current) fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      if (name !== field || current) return stream.resume();
      // A PassThrough we own, so that an abort of the request reaches the consumer as an error.
      current = new PassThrough();
      stream.on('error', (error) => current!.destroy(error));
      stream.pipe(current);
      resolve({ file: { stream: current, filename: info.filename ?? '' }, fields });
    });
    parser.on('error', (error: Error) => fail(error));
    parser.on('close', () => {
      if (!current) resolve({ file: null, fields });
    });
    request.on('close', () => {
      if (!request.complete) fail(new Error('the request was cut off'));
    });
    acceptBody(request);
    request.pipe(parser);
  });
}

/**
 * A streamed upload as a service receives it: what the request declares, and its body read only when the service
 * asks (after its lookups, permission and quota checks), never the raw request.
 */
export class IncomingUpload {
  constructor(private readonly request: IncomingMessage) {}

  /** The declared length (Content-Length), or undefined for a chunked body. */
  get declaredLength(): number | undefined {
    return declaredLength(this.request);
  }

  get isMultipart(): boolean {
    return isMultipart(this.request);
  }

  /** 413 before a byte is read when the declared length is over `maxBytes`. */
  assertDeclaredLength(maxBytes: number): void {
    assertDeclaredLength(this.request, maxBytes);
  }

  /** The whole body as the file. */
  raw(): UploadSource {
    return rawUpload(this.request);
  }

  /** The multipart part named `field`, with the text fields sent before it. */
  multipart(field: string): Promise<MultipartUpload> {
    return multipartUpload(this.request, field);
  }
}

/** Binds the request's body as an IncomingUpload, for the routes whose handlers accept the body themselves. */
export const Upload = createParamDecorator(
  (_data: unknown, context: ExecutionContext): IncomingUpload => new IncomingUpload(context.switchToHttp().getRequest<IncomingMessage>()),
);
