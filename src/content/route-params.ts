import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/**
 * A `*name` wildcard of the route (branch names, tag names and file paths contain slashes), joined back into
 * one string; Express hands wildcards over as arrays of decoded segments.
 */
export const WildcardParam = createParamDecorator((name: string, context: ExecutionContext): string => {
  const value = (context.switchToHttp().getRequest<Request>().params as Record<string, unknown>)[name];
  if (Array.isArray(value)) return value.join('/');
  return typeof value === 'string' ? value : '';
});
