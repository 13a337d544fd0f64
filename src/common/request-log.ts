import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import type { AppConfig } from '../config/config';

const SECRET_QUERY_KEYS = /([?&](?:token|access_token)=)[^&]*/gi;

/** A path safe to log: query-string tokens are replaced, so no credential ever reaches a log. */
export function loggablePath(url: string | undefined): string {
  return (url ?? '').replace(SECRET_QUERY_KEYS, '$1[redacted]');
}

/** One structured line per request: method, path, status, duration. Headers (and so credentials) are never logged. */
export function requestLogOptions(config: AppConfig): Params {
  return {
    // Express 5 route syntax for "every path" (nestjs-pino's default '*' is the legacy spelling).
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      level: config.logLevel,
      quietReqLogger: true,
      customSuccessMessage: () => 'request completed',
      customErrorMessage: () => 'request failed',
      customAttributeKeys: { responseTime: 'duration_ms' },
      serializers: {
        req: (request: IncomingMessage & { originalUrl?: string }) => ({
          method: request.method,
          path: loggablePath(request.originalUrl ?? request.url),
        }),
        res: (response: ServerResponse) => ({ status: response.statusCode }),
        err: (error: Error) => ({ type: error.name, message: error.message }),
      },
    },
  };
}
