import type { Request } from 'express';

// Why: a client still writing a body the server refused must read the answer, not an EPIPE.

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
