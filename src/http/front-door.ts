import type { NextFunction, Request, RequestHandler, Response } from 'express';
import cors from 'cors';
import type { RequestLog } from '../logging/request-log';
import { corsOptions } from './cors';

// Why: the request log, security headers and CORS are one middleware registered once, not three.

/** Headers every answer carries (docs/api-conventions.md), set in one call each. */
const SECURITY_HEADERS: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['X-Frame-Options', 'SAMEORIGIN'],
  ['Cache-Control', 'max-age=0, private, must-revalidate, no-transform'],
  ['Access-Control-Expose-Headers', 'X-Total-Count, Link'],
];

/**
 * The API's global concerns, in one middleware registered once, in this order: the request log (one timestamp
 * and one listener), the security headers, then CORS — only for a request that has an `Origin` (a browser's
 * cross-origin call) or is a preflight, so that other callers pay nothing for it. An allowed origin's
 * answer carries CORS_EXPOSED_HEADERS instead of the default list.
 */
export function frontDoor(options: { requestLog: RequestLog; corsAllowedOrigins: readonly string[] }): RequestHandler {
  const { requestLog } = options;
  const corsHandler = cors(corsOptions(options.corsAllowedOrigins));
  return (request: Request, response: Response, next: NextFunction) => {
    requestLog.track(request, response);
    for (const [name, value] of SECURITY_HEADERS) response.setHeader(name, value);
    if (request.headers.origin !== undefined || request.method === 'OPTIONS') corsHandler(request, response, next);
    else next();
  };
}
