import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Response } from 'express';

// Why: long work done for a request stops when its client has gone.

/**
 * A signal that fires when the client's connection closes before its answer was sent: long work done for the
 * request (a migration's clone, its wait for a turn) stops rather than outlive the caller.
 */
export const ClientGone = createParamDecorator((_data: unknown, context: ExecutionContext): AbortSignal => {
  const response = context.switchToHttp().getResponse<Response>();
  const controller = new AbortController();
  response.once('close', () => {
    if (!response.writableFinished) controller.abort();
  });
  return controller.signal;
});
