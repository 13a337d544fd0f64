import type { IncomingMessage, ServerResponse } from 'node:http';
import { LRUCache } from 'lru-cache';

// Why: Express tries every route in turn; literal segments tell which ones a path can reach (docs/http-platform.md).

/** The layers of an Express application's router, in the order requests try them (Express 5; 4 as `_router`). */
export function routerStack(express: unknown): RouterLayer[] {
  const app = express as { router?: { stack: RouterLayer[] }; _router?: { stack: RouterLayer[] } } | undefined;
  return app?.router?.stack ?? app?._router?.stack ?? [];
}

/** The part of a router Layer (router 2.x, under Express 5) that Anvil reads: a route's path and methods. */
export interface RouterLayer {
  route?: { methods: Record<string, boolean> };
  rawPath?: unknown;
  match(path: string): unknown;
}

/** The router of an Express application: its layers and the function that runs a request through them. */
export interface AppRouter {
  stack: RouterLayer[];
  handle(request: IncomingMessage, response: ServerResponse, done: (error?: unknown) => void): void;
}

/** The application's router (Express 5; 4 as `_router`). */
export function appRouter(express: unknown): AppRouter | undefined {
  const app = express as { router?: AppRouter; _router?: AppRouter } | undefined;
  return app?.router ?? app?._router;
}

/** A route layer's fixed literal segments, set by `prefilterRoutes`. */
const FIXED = Symbol('fixed segments');

function fixedOf(layer: RouterLayer): (string | undefined)[] | undefined {
  return (layer as { [FIXED]?: (string | undefined)[] })[FIXED];
}

/** Whether a route layer has the literal-segment check of `prefilterRoutes`. */
export function isPrefiltered(layer: RouterLayer): boolean {
  return fixedOf(layer) !== undefined;
}

/** A segment made of these characters only is matched literally by path-to-regexp. */
const LITERAL_SEGMENT = /^[A-Za-z0-9._~-]+$/;
/** From a segment holding one of these on, a pattern may span or skip segments (wildcard, optional group). */
const SHIFTING_SEGMENT = /[*{}()\\]/;

/**
 * The literal segments of a route pattern that sit at a fixed index of the path (lower-cased), before any
 * wildcard or optional group; undefined at the indexes of parameters. Null when there is none to compare.
 */
export function fixedSegments(pattern: string): (string | undefined)[] | null {
  const fixed: (string | undefined)[] = [];
  for (const segment of pattern.split('/')) {
    if (SHIFTING_SEGMENT.test(segment)) break;
    fixed.push(LITERAL_SEGMENT.test(segment) ? segment.toLowerCase() : undefined);
  }
  return fixed.some((segment) => segment !== undefined) ? fixed : null;
}

/** The request path's segments, lower-cased: worked out once for all the routes a request is tried against. */
let lastPath: string | undefined;
let lastSegments: string[] = [];

function segmentsOf(path: string): string[] {
  if (path !== lastPath) {
    lastPath = path;
    lastSegments = path.toLowerCase().split('/');
  }
  return lastSegments;
}

/** Whether `path` has every fixed literal segment where the pattern has it (a necessary condition to match). */
export function mayMatch(fixed: readonly (string | undefined)[], path: string): boolean {
  return hasLiterals(fixed, segmentsOf(path));
}

function hasLiterals(fixed: readonly (string | undefined)[], segments: readonly string[]): boolean {
  for (let index = 0; index < fixed.length; index++) {
    const literal = fixed[index];
    if (literal !== undefined && segments[index] !== literal) return false;
  }
  return true;
}

/**
 * Express tries a request against every route in the order they were registered, running each route's regular
 * expression on the path until one matches: a request for a content route, registered last, ran some 140 of them
 * (docs/http-platform.md). Here each route first compares the literal segments its
 * pattern has at fixed places (`api`, `v1`, `repos`, `contents` in `/api/v1/repos/:owner/:repo/contents`) with the
 * request's, case-insensitively as Express matches, and runs its expression only when they agree: a necessary
 * condition, so what matches and in which order is unchanged. Applied once, after the routes are registered.
 */
export function prefilterRoutes(stack: RouterLayer[]): void {
  for (const layer of stack) {
    if (!layer.route || typeof layer.rawPath !== 'string' || isPrefiltered(layer)) continue;
    const fixed = fixedSegments(layer.rawPath);
    if (!fixed) continue;
    const match = layer.match.bind(layer);
    layer.match = (path: string) => (typeof path === 'string' && !mayMatch(fixed, path) ? false : match(path));
    (layer as { [FIXED]?: (string | undefined)[] })[FIXED] = fixed;
  }
}

/**
 * The prefilter still visits every layer before the one that matches: for `GET /repos/{o}/{r}/pulls`, some two
 * hundred, a tenth of the thread's time under load. Here the router runs each request through only the layers
 * its path can reach: every middleware, and the routes whose fixed literal segments the path has. As the
 * prefilter's check is a necessary condition, the layers left out could not have matched, so what runs and in
 * which order is unchanged (OPTIONS' `Allow` list included: it is made of layers that matched).
 *
 * Paths that agree on the segments any route has a literal for (at the places it has them) reach the same layers,
 * so the lists are kept by that shape (`/api/v1/repos/*` + `/*` + `/pulls`), a bounded number of them. A URL that
 * the router would not take up to its `?` as it stands (parseurl's fast path) runs through every layer. Applied
 * once, after `prefilterRoutes`; layers added later make the lists be worked out again.
 */
export function indexRoutes(router: AppRouter, capacity = 512): void {
  const handle = router.handle;
  let index: RouteIndex | null = null;
  router.handle = function handleIndexed(request, response, done) {
    const path = plainPathname(request.url);
    if (path === null) return handle.call(router, request, response, done);
    if (index === null || !index.covers(router.stack)) index = new RouteIndex(router, capacity);
    return handle.call(index.viewFor(path), request, response, done);
  };
}

class RouteIndex {
  /** At each segment index, the literals routes have there. */
  private readonly literalsAt: Set<string>[] = [];
  /** The router seen through a shorter stack, by path shape. */
  private readonly views: LRUCache<string, AppRouter>;
  private readonly size: number;
  private readonly last: RouterLayer | undefined;

  constructor(
    private readonly router: AppRouter,
    capacity: number,
  ) {
    this.views = new LRUCache({ max: capacity });
    this.size = router.stack.length;
    this.last = router.stack[this.size - 1];
    for (const layer of router.stack) {
      fixedOf(layer)?.forEach((literal, at) => {
        if (literal !== undefined) (this.literalsAt[at] ??= new Set()).add(literal);
      });
    }
  }

  covers(stack: RouterLayer[]): boolean {
    return stack.length === this.size && stack[this.size - 1] === this.last;
  }

  viewFor(path: string): AppRouter {
    const segments = segmentsOf(path);
    let shape = '';
    for (let at = 0; at < this.literalsAt.length; at++) {
      const segment = segments[at];
      // NUL: a segment no route has a literal for here; SOH: no segment at all.
      shape += segment === undefined ? '\u0001/' : this.literalsAt[at]?.has(segment) ? `${segment}/` : '\u0000/';
    }
    let view = this.views.get(shape);
    if (!view) {
      const stack = this.router.stack.filter((layer) => {
        const fixed = fixedOf(layer);
        return fixed === undefined || hasLiterals(fixed, segments);
      });
      view = Object.create(this.router, { stack: { value: stack } }) as AppRouter;
      this.views.set(shape, view);
    }
    return view;
  }
}

/**
 * The pathname the router matches, when it is the URL up to its `?`: parseurl's fast path, which any other
 * character below sends to Node's URL parser. Null otherwise.
 */
function plainPathname(url: string | undefined): string | null {
  if (typeof url !== 'string' || url.charCodeAt(0) !== 0x2f) return null;
  let end = -1;
  for (let at = 1; at < url.length; at++) {
    switch (url.charCodeAt(at)) {
      case 0x3f:
        if (end < 0) end = at;
        break;
      case 0x09:
      case 0x0a:
      case 0x0c:
      case 0x0d:
      case 0x20:
      case 0x23:
      case 0xa0:
      case 0xfeff:
        return null;
    }
  }
  return end < 0 ? url : url.slice(0, end);
}
