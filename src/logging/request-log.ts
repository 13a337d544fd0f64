import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { isSecretParameter } from '../common/secret-parameters';
import { clientIp } from '../http/client-address';

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

type LoggedRequest = IncomingMessage & { originalUrl?: string; clientIp?: string };

/**
 * What one request's line says: method, path (secrets redacted), the client's address (behind trusted proxies,
 * the forwarded one), status, duration. Never a header.
 */
export function requestLine(request: LoggedRequest, response: ServerResponse, durationMs: number) {
  return {
    req: { method: request.method, path: loggablePath(request.originalUrl ?? request.url), remote: clientIp(request) },
    res: { status: response.statusCode },
    duration_ms: Math.round(durationMs),
  };
}

/**
 * One structured line per request, API and git routes alike. A request costs one timestamp and one listener;
 * the line (a single object) is built only when its level is enabled, so a dropped line costs nothing more.
 * Answers of 5xx are logged at `error`, requests the client gave up on at `warn`, the rest at `info`.
 */
export class RequestLog {
  constructor(private readonly log: Logger) {}

  track(request: LoggedRequest, response: ServerResponse): void {
    const started = performance.now();
    response.once('close', () => this.finish(request, response, started));
  }

  private finish(request: LoggedRequest, response: ServerResponse, started: number): void {
    if (response.statusCode >= 500) {
      if (this.log.isLevelEnabled('error')) this.log.error(requestLine(request, response, performance.now() - started), 'request failed');
    } else if (!response.writableFinished) {
      if (this.log.isLevelEnabled('warn')) this.log.warn(requestLine(request, response, performance.now() - started), 'request aborted');
    } else if (this.log.isLevelEnabled('info')) {
      this.log.info(requestLine(request, response, performance.now() - started), 'request completed');
    }
  }
}
