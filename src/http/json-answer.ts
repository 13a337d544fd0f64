import * as http from 'node:http';
import type { NestApplicationOptions } from '@nestjs/common';
import { ExpressAdapter } from '@nestjs/platform-express';
import type { Express, Response } from 'express';
import { linkHeader, PagedList } from '../common/paging';

// Why: every JSON answer is encoded once, straight into bytes, by one writer (costs measured in docs/http-platform.md).

/**
 * Every JSON answer is written here (docs/api-conventions.md: `application/json;charset=utf-8`, one document and a
 * newline), and a PagedList adds its paging headers (docs/api-conventions.md). It replaces Express's `res.json` for the
 * application once, at start-up: handlers return objects, Nest hands them to `res.json`, and no per-request
 * interceptor is needed. Strings and buffers never come here: handlers that answer text or HTML set their
 * own type and send.
 */
const JSON_TYPE = 'application/json;charset=utf-8';

export function writeJsonAnswers(app: Express, rootUrl: string): void {
  const apiBase = `${rootUrl}api/v1`;
  (app.response as Response).json = function json(this: Response, value: unknown): Response {
    // An answer that comes after another was sent (API_REQUEST_TIMEOUT's 503) is dropped.
    if (this.headersSent) return this;
    let body = value;
    if (value instanceof PagedList) {
      this.setHeader('X-Total-Count', String(value.total));
      const request = this.req;
      const apiPath = request.path.replace(/^\/api\/v1/, '');
      const link = linkHeader(apiBase, apiPath, request.query as Record<string, unknown>, value.query.page, value.query.limit, value.total);
      if (link) this.setHeader('Link', link);
      body = value.body();
    }
    // Written as is: Express's send() would respell the type with a space ("application/json; charset=utf-8").
    this.setHeader('Content-Type', JSON_TYPE);
    if (this.statusCode === 204 || this.statusCode === 304) {
      this.end();
      return this;
    }
    // Encoded once, outside V8's heap: as a string, the text was copied twice more on the heap and kept alive
    // by writes the client had not taken yet (docs/http-platform.md).
    const bytes = jsonBytes(body);
    this.setHeader('Content-Length', bytes.length);
    this.end(bytes);
    return this;
  };
}

/**
 * `value` as JSON text and a newline, in UTF-8, written straight into one buffer. An array is written item by
 * item: its text is the items' texts joined by commas in brackets, so that no whole-page string is built and
 * copied on V8's heap (docs/http-platform.md).
 */
export function jsonBytes(value: unknown): Buffer {
  if (typeof value !== 'object' || value === null || !Object.isFrozen(value)) return encode(value);
  let bytes = encodings.get(value);
  if (!bytes) encodings.set(value, (bytes = encode(value)));
  return bytes;
}

/**
 * The encodings of frozen answers (pages of issues and pull requests asked again: src/database/recent-reads.ts
 * freezes them deeply, so they cannot change), kept as long as their answer is.
 */
const encodings = new WeakMap<object, Buffer>();

function encode(value: unknown): Buffer {
  const list = Array.isArray(value) && (value as { toJSON?: unknown }).toJSON === undefined;
  const texts = list ? Array.from(value as unknown[], itemText) : [JSON.stringify(value) ?? 'null'];
  const lengths = texts.map((text) => Buffer.byteLength(text, 'utf8'));
  const framing = list ? 2 + Math.max(0, texts.length - 1) : 0;
  const bytes = Buffer.allocUnsafe(lengths.reduce((sum, length) => sum + length, framing + 1));
  let at = 0;
  if (list) bytes[at++] = 0x5b; // [
  texts.forEach((text, index) => {
    if (index > 0) bytes[at++] = 0x2c; // ,
    at += bytes.write(text, at, lengths[index], 'utf8');
  });
  if (list) bytes[at++] = 0x5d; // ]
  bytes[at] = 0x0a;
  return bytes;
}

/** An array item's JSON text as JSON.stringify writes it inside the array (`null` for what it leaves out). */
function itemText(item: unknown, index: number): string {
  const value =
    item != null && typeof (item as { toJSON?: unknown }).toJSON === 'function' ? (item as { toJSON(key: string): unknown }).toJSON(String(index)) : item;
  return JSON.stringify(value) ?? 'null';
}

/**
 * Request and response classes whose instances are born with the Express application's prototypes
 * (`app.request`, `app.response`), for `http.createServer`. Express gives every request and response those
 * prototypes with `Object.setPrototypeOf` when it starts handling them; on an object that has them already
 * that is a no-op, while changing the prototype of each new object makes V8 keep every request's objects
 * through young-generation collections (docs/http-platform.md).
 */
export function expressMessageClasses(app: Express): { IncomingMessage: typeof http.IncomingMessage; ServerResponse: typeof http.ServerResponse } {
  function ExpressRequest(this: http.IncomingMessage, socket: unknown): void {
    (http.IncomingMessage as unknown as Function).call(this, socket);
  }
  ExpressRequest.prototype = app.request;
  function ExpressResponse(this: http.ServerResponse, request: unknown, options: unknown): void {
    (http.ServerResponse as unknown as Function).call(this, request, options);
  }
  ExpressResponse.prototype = app.response;
  return {
    IncomingMessage: ExpressRequest as unknown as typeof http.IncomingMessage,
    ServerResponse: ExpressResponse as unknown as typeof http.ServerResponse,
  };
}

/**
 * The HTTP adapter the application runs on: Express, with JSON answers written by `writeJsonAnswers`, and a
 * handler's boolean or number answered as JSON too (Nest's own adapter sends those as text). Its server
 * creates requests and responses with Express's prototypes already in place (`expressMessageClasses`).
 */
export class JsonAnswersAdapter extends ExpressAdapter {
  constructor(rootUrl: string) {
    super();
    writeJsonAnswers(this.getInstance<Express>(), rootUrl);
  }

  /** As Nest's (plain HTTP; HTTPS is not used: TLS ends at the gateway), with Express's message classes. */
  override initHttpServer(options: NestApplicationOptions): void {
    if (options?.httpsOptions) {
      super.initHttpServer(options);
      return;
    }
    const app = this.getInstance<Express>();
    this.setHttpServer(http.createServer(expressMessageClasses(app), app));
    if (options?.forceCloseConnections) (this as unknown as { trackOpenConnections(): void }).trackOpenConnections();
  }

  override reply(response: Response, body: unknown, statusCode?: number): unknown {
    if (typeof body !== 'boolean' && typeof body !== 'number') return super.reply(response, body, statusCode);
    if (statusCode) response.status(statusCode);
    return response.json(body);
  }
}
