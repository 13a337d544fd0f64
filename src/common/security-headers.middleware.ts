import { Injectable, NestMiddleware } from '@nestjs/common';
import type { NextFunction, Request, Response } from 'express';

/** Headers every answer carries (behaviour 1.2). */
@Injectable()
export class SecurityHeadersMiddleware implements NestMiddleware {
  use(_request: Request, response: Response, next: NextFunction): void {
    response.setHeader('X-Content-Type-Options', 'nosniff');
    response.setHeader('X-Frame-Options', 'SAMEORIGIN');
    response.setHeader('Cache-Control', 'max-age=0, private, must-revalidate, no-transform');
    // CORS (common/cors.ts, earlier in the chain) may have set a longer list for an allowed origin.
    if (!response.hasHeader('Access-Control-Expose-Headers')) response.setHeader('Access-Control-Expose-Headers', 'X-Total-Count, Link');
    // Express spells the JSON type "application/json; charset=utf-8"; the spec (and Forgejo) has no space.
    const setHeader = response.setHeader.bind(response);
    response.setHeader = (name: string, value: number | string | readonly string[]) =>
      setHeader(name, name.toLowerCase() === 'content-type' && value === 'application/json; charset=utf-8' ? 'application/json;charset=utf-8' : value);
    next();
  }
}
