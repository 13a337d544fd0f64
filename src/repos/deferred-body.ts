import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';
import { BodyPipe, DecodedBody } from '../common/body';

/**
 * The decoded body, not yet checked: for routes whose order puts body errors after lookups and permission
 * checks (PATCH /repos/{owner}/{repo}, POST /orgs/{org}/repos — behaviour 1.6, 10.5). Check it with
 * `bindOption` where the order says.
 */
export const DeferredBody = createParamDecorator((_data: unknown, context: ExecutionContext): DecodedBody => {
  const body = context.switchToHttp().getRequest<Request>().body as unknown;
  return body instanceof DecodedBody ? body : new DecodedBody({}, false);
});

/** What `@Body() option: T` does, run later: decoding errors (400/422), then the option's field rules (422). */
export function bindOption<T extends object>(body: DecodedBody, target: new () => T): T {
  return new BodyPipe().transform(body, { type: 'body', metatype: target }) as T;
}
