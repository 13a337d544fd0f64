import fc from 'fast-check';
import Router from 'router';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AppRouter, fixedSegments, indexRoutes, isPrefiltered, prefilterRoutes, RouterLayer } from './route-prefilter';

type TestLayer = RouterLayer;

/** A router 2.x (Express 5's) with one route per pattern; its layers, and a copy of them left as they were. */
function layersFor(patterns: string[]): { filtered: TestLayer[]; plain: TestLayer[] } {
  const build = () => {
    const router = new Router();
    for (const pattern of patterns) router.get(pattern, () => undefined);
    return (router as unknown as { stack: TestLayer[] }).stack;
  };
  const filtered = build();
  prefilterRoutes(filtered);
  return { filtered, plain: build() };
}

/** What a layer's match says, as a comparable value (params and matched path, or false). */
function outcome(layer: TestLayer, path: string): string {
  try {
    return JSON.stringify(layer.match(path) ?? null);
  } catch (error) {
    return `threw ${(error as Error).name}`;
  }
}

describe('route prefilter', () => {
  it('keeps the literal segments a pattern has at fixed places, up to a wildcard or an optional group', () => {
    expect(fixedSegments('/api/v1/repos/:owner/:repo/contents/*filepath')).toEqual([undefined, 'api', 'v1', 'repos', undefined, undefined, 'contents']);
    expect(fixedSegments('/api/v1/repos/:owner/:repo/raw/{*filepath}')).toEqual([undefined, 'api', 'v1', 'repos', undefined, undefined, 'raw']);
    expect(fixedSegments('/api/v1/Version')).toEqual([undefined, 'api', 'v1', 'version']);
    expect(fixedSegments('/api/v1/users{/:name}/keys')).toEqual([undefined, 'api', 'v1']);
    // Nothing literal at a fixed place: left to the regular expression alone.
    expect(fixedSegments('/:username.keys')).toBeNull();
    expect(fixedSegments('/*path')).toBeNull();
  });

  it('answers exactly as the route did for the paths Anvil routes see', () => {
    const patterns = [
      '/api/v1/version',
      '/api/v1/repos/search',
      '/api/v1/repos/:owner/:repo',
      '/api/v1/repos/:owner/:repo/contents',
      '/api/v1/repos/:owner/:repo/contents/*filepath',
      '/api/v1/repos/:owner/:repo/raw/{*filepath}',
      '/api/v1/users/:username/repos',
      '/:username.keys',
      '/api/healthz',
    ];
    const { filtered, plain } = layersFor(patterns);
    // Every pattern with a literal at a fixed place got the check; applying it again changes nothing.
    expect(filtered.map(isPrefiltered)).toEqual(patterns.map((pattern) => fixedSegments(pattern) !== null));
    const checked = filtered.map((layer) => layer.match);
    prefilterRoutes(filtered);
    expect(filtered.map((layer) => layer.match)).toEqual(checked);
    const paths = [
      '/api/v1/version',
      '/API/V1/VERSION',
      '/api/v1/version/',
      '/api/v1//version',
      '/api/v1/repos/search',
      '/api/v1/repos/o/r',
      '/api/v1/repos/o/r/contents',
      '/api/v1/repos/o/r/contents/',
      '/api/v1/repos/o/r/contents/a/b%20c.txt',
      '/api/v1/repos/o/r/CONTENTS/a',
      '/api/v1/repos/o%2Fx/r/raw/main/README.md',
      '/api/v1/repos/o/r/raw',
      '/api/v1/users/alice/repos',
      '/alice.keys',
      '/api/healthz',
      '/',
      '',
      '/api/v1/repos/%E0%A4%A/r',
    ];
    for (const path of paths) {
      for (let index = 0; index < patterns.length; index++) {
        expect([path, patterns[index], outcome(filtered[index], path)]).toEqual([path, patterns[index], outcome(plain[index], path)]);
      }
    }
  });

  it('never changes whether or how a route matches (random patterns and paths)', () => {
    const word = fc.constantFrom('api', 'v1', 'repos', 'Repos', 'contents', 'raw', 'a', 'b.c', 'x-y', '~u');
    const patternSegment = fc.oneof(word, fc.constantFrom(':owner', ':repo', ':name.keys', '*rest', '{*rest}', '{:opt}'));
    const pathSegment = fc.oneof(word, fc.constantFrom('', 'API', 'CONTENTS', 'a%20b', '%2F', 'o', 'r', 'README.md', 'b.C'));
    const patternOf = fc.array(patternSegment, { minLength: 1, maxLength: 6 }).map((segments) => {
      // A route pattern names each parameter once.
      let count = 0;
      return `/${segments.map((segment) => segment.replace(/(owner|repo|name|rest|opt)/, (name) => `${name}${count++}`)).join('/')}`;
    });
    const pathOf = fc.array(pathSegment, { minLength: 0, maxLength: 8 }).map((segments) => `/${segments.join('/')}`);
    fc.assert(
      fc.property(fc.array(patternOf, { minLength: 1, maxLength: 5 }), fc.array(pathOf, { minLength: 1, maxLength: 10 }), (patterns, paths) => {
        const { filtered, plain } = layersFor(patterns);
        for (const path of paths) {
          for (let index = 0; index < patterns.length; index++) {
            if (outcome(filtered[index], path) !== outcome(plain[index], path)) return false;
          }
        }
        return true;
      }),
      { numRuns: 500 },
    );
  });

  describe('route index', () => {
    /**
     * Two routers made alike from `layers` (`use:` a middleware that passes; else a GET route), the second with
     * the prefilter and the index; a request's trace is every handler it ran, in order, and how it ended.
     */
    function routersFor(layers: string[]): { plain: AppRouter; indexed: AppRouter } {
      const build = () => {
        const router = new Router() as unknown as AppRouter & { use(path: string, fn: unknown): void; get(path: string, fn: unknown): void };
        layers.forEach((layer, index) => {
          const trace = (request: { trace: string[] }, _response: unknown, next: (error?: unknown) => void) => {
            request.trace.push(`${index}`);
            next();
          };
          if (layer.startsWith('use:')) router.use(layer.slice(4), trace);
          else router.get(layer, trace);
        });
        return router;
      };
      const indexed = build();
      prefilterRoutes(indexed.stack);
      indexRoutes(indexed, 4);
      return { plain: build(), indexed };
    }

    function traceOf(router: AppRouter, method: string, url: string): string[] {
      const request = { method, url, trace: [] as string[] };
      router.handle(request as unknown as IncomingMessage, {} as ServerResponse, (error) => {
        request.trace.push(error ? `error ${(error as Error).name}` : 'done');
      });
      return request.trace;
    }

    it('runs a request through the same handlers, in the same order, as the whole stack', async () => {
      const layers = [
        'use:/',
        '/api/v1/version',
        '/api/v1/repos/search',
        'use:/api',
        '/api/v1/repos/:owner/:repo',
        '/api/v1/repos/:owner/:repo/pulls',
        '/api/v1/repos/:owner/:repo/contents/*filepath',
        '/:username.keys',
        'use:/metrics',
        '/api/v1/repos/:owner/:repo/pulls/:index',
      ];
      const { plain, indexed } = routersFor(layers);
      const urls = [
        '/api/v1/version',
        '/api/v1/repos/search?q=x',
        '/api/v1/repos/search/pulls',
        '/api/v1/repos/o/r/pulls?state=open',
        '/API/V1/REPOS/o/r/PULLS',
        '/api/v1/repos/o/r/pulls/7',
        '/api/v1/repos/o/r/contents/a/b',
        '/alice.keys',
        '/metrics',
        '/api/v1/repos/o/r#frag',
        '/api/v1/repos/o/r pulls',
        'api/v1/version',
        '/nowhere',
      ];
      const traces: string[][] = [];
      for (const url of urls) {
        for (const method of ['GET', 'HEAD', 'POST']) {
          const expected = traceOf(plain, method, url);
          // Routers end asynchronously (setImmediate): both traces are read once they have.
          const got = traceOf(indexed, method, url);
          await new Promise((resolve) => setImmediate(resolve));
          expect([method, url, got]).toEqual([method, url, expected]);
          traces.push(got);
        }
      }
      // The routes were reached: the comparison is not between two routers that match nothing.
      expect(traces.filter((trace) => trace.includes('5')).length).toBeGreaterThan(0);
      expect(traces.filter((trace) => trace.includes('9')).length).toBeGreaterThan(0);
    });

    it('never changes what runs (random stacks and paths, fewer shapes kept than asked)', async () => {
      const word = fc.constantFrom('api', 'v1', 'repos', 'Repos', 'pulls', 'raw', 'a', 'b.c');
      const patternSegment = fc.oneof(word, fc.constantFrom(':owner', ':repo', ':name.keys', '*rest', '{*rest}'));
      const pathSegment = fc.oneof(word, fc.constantFrom('', 'API', 'PULLS', 'a%20b', 'o', 'r', 'x?y=1'));
      const layerOf = fc.oneof(
        fc.array(patternSegment, { minLength: 1, maxLength: 5 }).map((segments) => {
          let count = 0;
          return `/${segments.map((segment) => segment.replace(/(owner|repo|name|rest)/, (name) => `${name}${count++}`)).join('/')}`;
        }),
        fc.constantFrom('use:/', 'use:/api', 'use:/api/v1/repos'),
      );
      const urlOf = fc.array(pathSegment, { minLength: 0, maxLength: 6 }).map((segments) => `/${segments.join('/')}`);
      await fc.assert(
        fc.asyncProperty(fc.array(layerOf, { minLength: 1, maxLength: 8 }), fc.array(urlOf, { minLength: 1, maxLength: 12 }), async (layers, urls) => {
          const { plain, indexed } = routersFor(layers);
          for (const url of urls) {
            const expected = traceOf(plain, 'GET', url);
            const got = traceOf(indexed, 'GET', url);
            await new Promise((resolve) => setImmediate(resolve));
            if (JSON.stringify(got) !== JSON.stringify(expected)) return false;
          }
          return true;
        }),
        { numRuns: 300 },
      );
    });

    it('works the lists out again when layers are added after it was applied', async () => {
      const { indexed } = routersFor(['/api/v1/version']);
      expect(traceOf(indexed, 'GET', '/api/v1/late')).toEqual([]);
      (indexed as unknown as { get(path: string, fn: unknown): void }).get('/api/v1/late', (request: { trace: string[] }) => request.trace.push('late'));
      expect(traceOf(indexed, 'GET', '/api/v1/late')).toEqual(['late']);
      await new Promise((resolve) => setImmediate(resolve));
    });
  });
});
