import type { IncomingMessage, ServerResponse } from 'node:http';
import { RequestMethod } from '@nestjs/common';
import type { Params } from 'nestjs-pino';
import pino from 'pino';
import type { AppConfig } from '../config/config';

/**
 * Query parameters never logged nor echoed (in Link headers), by their decoded, lower-cased name: `%74oken`
 * and `access%5Ftoken` are `token` and `access_token` to the query parser, so they are to this list too.
 */
export const SECRET_PARAMETERS = new Set(['token', 'access_token', 'password', 'passwd', 'secret', 'otp', 'client_secret', 'code', 'sudo']);

export function isSecretParameter(name: string): boolean {
  return SECRET_PARAMETERS.has(name.trim().toLowerCase());
}

/**
 * A path safe to log, rebuilt from the decoded query: the value of every secret parameter is replaced, and
 * a query that cannot be decoded is left out entirely.
 */
export function loggablePath(url: string | undefined): string {
  const text = url ?? '';
  const mark = text.indexOf('?');
  if (mark < 0) return text;
  let params: URLSearchParams;
  try {
    params = new URLSearchParams(text.slice(mark + 1));
  } catch {
    return `${text.slice(0, mark)}?[redacted]`;
  }
  const parts: string[] = [];
  for (const [key, value] of params) {
    parts.push(`${encodeURIComponent(key)}=${isSecretParameter(key) ? '[redacted]' : encodeURIComponent(value)}`);
  }
  return `${text.slice(0, mark)}?${parts.join('&')}`;
}

/** One open destination per LOG_FILE in a process: the API's and git's request loggers (and every app) share it. */
const destinations = new Map<string, pino.DestinationStream>();

function fileDestination(file: string): pino.DestinationStream {
  let destination = destinations.get(file);
  if (!destination) {
    destination = pino.destination({ dest: file, sync: true, append: true });
    destinations.set(file, destination);
  }
  return destination;
}

/** One structured line per request: method, path, status, duration. Headers (and so credentials) are never logged. */
export function requestLogOptions(config: AppConfig): Params {
  // LOG_FILE sends the log to a file (appended, written synchronously) instead of standard output.
  const stream = config.logFile ? fileDestination(config.logFile) : undefined;
  return {
    // Express 5 route syntax for "every path" (nestjs-pino's default '*' is the legacy spelling).
    forRoutes: [{ path: '{*path}', method: RequestMethod.ALL }],
    pinoHttp: {
      stream,
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
