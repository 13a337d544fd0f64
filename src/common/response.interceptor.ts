import { CallHandler, ExecutionContext, Inject, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { APP_CONFIG, AppConfig } from '../config/config';
import { linkHeader, PagedList } from './paging';

/**
 * Writes every JSON answer the same way (behaviour 1.2: `application/json;charset=utf-8`, one document and
 * a newline) and, for lists, the paging headers (behaviour 1.9). Strings pass through untouched: handlers that
 * answer text or HTML set their own content type.
 */
@Injectable()
export class ResponseInterceptor implements NestInterceptor {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const request = context.switchToHttp().getRequest<Request>();
    const response = context.switchToHttp().getResponse<Response>();
    return next.handle().pipe(
      map((result: unknown) => {
        if (result === undefined || typeof result === 'string' || Buffer.isBuffer(result)) return result;
        let body: unknown = result;
        if (result instanceof PagedList) {
          response.setHeader('X-Total-Count', String(result.total));
          const apiPath = request.path.replace(/^\/api\/v1/, '');
          const link = linkHeader(`${this.config.rootUrl}api/v1`, apiPath, request.query as Record<string, unknown>, result.query.page, result.query.limit, result.total);
          if (link) response.setHeader('Link', link);
          body = result.body();
        }
        response.type('application/json;charset=utf-8');
        return `${JSON.stringify(body)}\n`;
      }),
    );
  }
}
