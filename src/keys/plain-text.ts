import type { Response } from 'express';

/**
 * Sends `text/plain;charset=utf-8` byte for byte. Returning a string would let Express rewrite the
 * content type to `text/plain; charset=utf-8`.
 */
export function sendPlainText(response: Response, text: string): void {
  const body = Buffer.from(text, 'utf8');
  response.status(200);
  response.setHeader('Content-Type', 'text/plain;charset=utf-8');
  response.setHeader('Content-Length', String(body.length));
  response.end(body);
}
