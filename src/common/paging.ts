import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { ApiQuery } from '@nestjs/swagger';
import { applyDecorators } from '@nestjs/common';
import type { Request } from 'express';
import { isSecretParameter } from './secret-parameters';

/** One page of a list, as every store and service speaks it (docs/api-conventions.md). */
export interface PageQuery {
  page: number;
  limit: number;
  offset: number;
}

export interface Page<T> {
  items: T[];
  total: number;
}

export interface PagingLimits {
  defaultLimit: number;
  maxLimit: number;
}

/** A missing, zero, negative or non-numeric page means 1; the same limit means the default; above max is cut. */
export function pageQuery(query: { page?: unknown; limit?: unknown }, limits: PagingLimits): PageQuery {
  const page = positiveInteger(query.page) ?? 1;
  const limit = Math.min(positiveInteger(query.limit) ?? limits.defaultLimit, limits.maxLimit);
  return { page, limit, offset: (page - 1) * limit };
}

function positiveInteger(value: unknown): number | undefined {
  if (typeof value !== 'string' || !/^\+?\d+$/.test(value.trim())) return undefined;
  const parsed = Number(value.trim());
  return Number.isSafeInteger(parsed) && parsed > 0 ? parsed : undefined;
}

/**
 * What a list handler returns: the response interceptor writes `X-Total-Count` and `Link` from it and sends
 * the items (or the envelope built around them).
 */
export class PagedList<T> {
  constructor(
    readonly items: T[],
    readonly total: number,
    readonly query: PageQuery,
    readonly envelope?: (items: T[]) => unknown,
  ) {}

  body(): unknown {
    return this.envelope ? this.envelope(this.items) : this.items;
  }
}

export function pagedList<E, W>(page: Page<E>, query: PageQuery, toWire: (item: E) => W, envelope?: (items: W[]) => unknown): PagedList<W> {
  return new PagedList(page.items.map(toWire), page.total, query, envelope);
}

/** A page whose items are already wire shapes, sent as they are (the same array: a kept page's encoding is reused). */
export function pagedWires<W>(page: Page<W>, query: PageQuery): PagedList<W> {
  return new PagedList(page.items, page.total, query);
}

/**
 * The `Link` header: next, last, first, prev, each only when it applies, joined by "," with no space; the
 * query keys re-encoded in sorted order with `page` replaced. A single page has no header.
 */
export function linkHeader(apiBase: string, path: string, query: Record<string, unknown>, page: number, limit: number, total: number): string | undefined {
  const lastPage = Math.max(1, Math.ceil(total / limit));
  if (lastPage <= 1) return undefined;
  const url = (target: number) => {
    const params = new URLSearchParams();
    const entries: [string, string][] = [];
    for (const [key, value] of Object.entries(query)) {
      // Credentials in the query (deprecated `token`, `access_token`, …) are never echoed into a header.
      if (key === 'page' || isSecretParameter(key)) continue;
      for (const item of Array.isArray(value) ? value : [value]) entries.push([key, String(item)]);
    }
    entries.push(['page', String(target)]);
    entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [key, value] of entries) params.append(key, value);
    return `<${apiBase}${path}?${params.toString()}>`;
  };
  const links: string[] = [];
  if (page < lastPage) links.push(`${url(page + 1)}; rel="next"`, `${url(lastPage)}; rel="last"`);
  if (page > 1) links.push(`${url(1)}; rel="first"`, `${url(page - 1)}; rel="prev"`);
  return links.length > 0 ? links.join(',') : undefined;
}

/** Express app setting under which bootstrap stores the configured paging limits. */
export const PAGING_LIMITS = 'anvil.paging-limits';

/** Binds `page` and `limit` from the query string into a PageQuery. */
export const Paging = createParamDecorator((_data: unknown, context: ExecutionContext): PageQuery => {
  const request = context.switchToHttp().getRequest<Request>();
  const limits = request.app.get(PAGING_LIMITS) as PagingLimits;
  return pageQuery(request.query as Record<string, unknown>, limits);
});

/** OpenAPI documentation of the paging parameters and headers. */
export function ApiPaging(): MethodDecorator {
  return applyDecorators(
    ApiQuery({ name: 'page', required: false, type: Number, description: 'page number of results to return (1-based)' }),
    ApiQuery({ name: 'limit', required: false, type: Number, description: 'page size of results' }),
  );
}
