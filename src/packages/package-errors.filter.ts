import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { settleUnreadBody } from '../http/unread-body';
import { DomainError } from '../common/errors';

/**
 * Errors of the package registry routes as Forgejo's package API gives them: plain text, and a Basic
 * challenge on 401 so that `curl --user` and package clients send their credentials.
 */
@Catch(DomainError)
export class PackageErrorsFilter implements ExceptionFilter {
  catch(error: DomainError, host: ArgumentsHost): void {
    const response = host.switchToHttp().getResponse<Response>();
    if (response.headersSent) return;
    settleUnreadBody(host.switchToHttp().getRequest<Request>(), response);
    if (error.status === 401) response.setHeader('WWW-Authenticate', 'Basic realm="Gitea Package API"');
    response.status(error.status).type('text/plain; charset=utf-8').send(error.message);
  }
}
