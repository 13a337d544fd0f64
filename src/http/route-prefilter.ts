// Why: Express tries every route's expression in turn; a literal-segment check first skips most (docs/http-platform.md).

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

/** Whether a route layer has the literal-segment check of `prefilterRoutes`. */
const PREFILTERED = Symbol('prefiltered');

export function isPrefiltered(layer: RouterLayer): boolean {
  return (layer as { [PREFILTERED]?: true })[PREFILTERED] === true;
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
  const segments = segmentsOf(path);
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
    (layer as { [PREFILTERED]?: true })[PREFILTERED] = true;
  }
}
