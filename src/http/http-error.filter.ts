import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { Request, Response } from 'express';
import { SiteConfig } from '../config/slices';
import { settleUnreadBody } from './unread-body';
import { dependencyFailure } from '../common/dependency-errors';
import { DomainError, MethodNotAllowedError, NotFoundError, SearchError } from '../common/errors';
import { RouteTable } from './route-table';

/**
 * The one place where errors become HTTP answers (docs/api-conventions.md): every 404 has an empty body; everything
 * else is `{message, url}` (plus the error's extra fields); a 500 hides its cause from all but site admins. A failing
 * dependency (a full disk, a database that does not answer, no descriptors left) is a 507 or a 503 in the service's
 * words, its cause in the log only.
 */
@Catch()
export class HttpErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('HttpErrorFilter');

  constructor(
    private readonly siteConfig: SiteConfig,
    private readonly routes: RouteTable,
  ) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    if (response.headersSent) {
      this.logger.error(`error after the response started: ${describe(exception)}`);
      return;
    }
    // A refused request's body is thrown away (a small one, so its sender reads the answer) or left unread.
    settleUnreadBody(request, response);
    const error = this.toDomainError(exception, request);
    if (error && (error.status === 503 || error.status === 507) && !(exception instanceof DomainError)) {
      // The cause goes to the log only: the answer says what failed in the service's words.
      this.logger.warn(`${request.method} ${request.path} answered ${error.status}: ${describe(exception)}`);
    }
    if (error instanceof NotFoundError) {
      response.status(404).end();
      return;
    }
    if (error && 'retryAfterSeconds' in error && typeof error.retryAfterSeconds === 'number') {
      response.setHeader('Retry-After', String(error.retryAfterSeconds));
    }
    if (error instanceof SearchError) {
      if (error.status === 500) this.logger.error(`repository search failed: ${describe(error.cause ?? error)}`);
      this.sendJson(response, error.status, { ok: false, error: error.message });
      return;
    }
    if (error) {
      this.sendJson(response, error.status, { message: error.message, url: this.swaggerUrl(), ...error.extraFields() });
      return;
    }
    this.logger.error(`unhandled error on ${request.method} ${request.path}: ${describe(exception)}`);
    const message = request.auth?.isAdmin ? (exception instanceof Error ? exception.message : String(exception)) : '';
    this.sendJson(response, 500, { message, url: this.swaggerUrl() });
  }

  private toDomainError(exception: unknown, request: Request): DomainError | undefined {
    if (exception instanceof DomainError) return exception;
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      if (status === 404) {
        return this.routes.allowsOtherMethod(request.method, request.path) ? new MethodNotAllowedError() : new NotFoundError();
      }
      if (status < 500)
        return new (class extends DomainError {
          readonly status = status;
        })(httpMessage(exception));
    }
    return dependencyFailure(exception);
  }

  private swaggerUrl(): string {
    return `${this.siteConfig.rootUrl}api/swagger`;
  }

  private sendJson(response: Response, status: number, body: unknown): void {
    // http/json-answer.ts writes it, as every other JSON answer.
    response.status(status).json(body);
  }
}

function httpMessage(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  return Array.isArray(message) ? String(message[0]) : String(message ?? exception.message);
}

function describe(exception: unknown): string {
  return exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
}
