import { timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';

export interface MetricsSources {
  dataSource: DataSource;
  markdown: { stats(): { workers: number; busy: number; queued: number } };
}

/** The route template of a request (`/api/v1/repos/:owner/:repo`), never its raw path: labels stay few. */
function routeOf(request: Request): string {
  const route = (request as Request & { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' ? `${request.baseUrl}${route.path}` : 'unmatched';
}

/** mysql2's pool keeps its counts in private fields; read them defensively, as they may change. */
function mysqlPool(dataSource: DataSource): { total: number; idle: number; waiting: number } | undefined {
  const pool = (dataSource.driver as unknown as { pool?: Record<string, { length?: number } | undefined> }).pool;
  if (!pool) return undefined;
  const size = (name: string) => pool[name]?.length ?? 0;
  return { total: size('_allConnections'), idle: size('_freeConnections'), waiting: size('_connectionQueue') };
}

/**
 * Prometheus metrics (prom-client), one registry per application: HTTP requests by route template and status
 * (count and latency), requests in flight, the database pool, the markdown renderer's queue, and the process.
 */
export class AppMetrics {
  readonly registry = new Registry();
  private readonly requests = new Counter({
    name: 'anvil_http_requests_total',
    help: 'HTTP requests answered, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    registers: [this.registry],
  });
  private readonly latency = new Histogram({
    name: 'anvil_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method, route template and status',
    labelNames: ['method', 'route', 'status'],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  private readonly inFlight = new Gauge({
    name: 'anvil_http_requests_in_flight',
    help: 'HTTP requests being answered now',
    registers: [this.registry],
  });

  constructor(sources: MetricsSources) {
    collectDefaultMetrics({ register: this.registry });
    const { dataSource, markdown } = sources;
    new Gauge({
      name: 'anvil_database_connections',
      help: 'Database pool connections: total open, idle, and requests waiting for one (SQLite: one connection)',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const pool = dataSource.options.type === 'mysql' ? mysqlPool(dataSource) : { total: 1, idle: 1, waiting: 0 };
        if (!pool) return;
        this.set({ state: 'total' }, pool.total);
        this.set({ state: 'idle' }, pool.idle);
        this.set({ state: 'waiting' }, pool.waiting);
      },
    });
    new Gauge({
      name: 'anvil_markdown_render_pool',
      help: 'Markdown renderer: workers started, workers rendering, documents waiting',
      labelNames: ['state'],
      registers: [this.registry],
      collect() {
        const stats = markdown.stats();
        this.set({ state: 'workers' }, stats.workers);
        this.set({ state: 'busy' }, stats.busy);
        this.set({ state: 'queued' }, stats.queued);
      },
    });
  }

  /** Counts every request once it is answered (or abandoned), labelled by the route that served it. */
  requestCounter(): RequestHandler {
    return (request: Request, response: Response, next: NextFunction) => {
      const stop = this.latency.startTimer();
      this.inFlight.inc();
      response.once('close', () => {
        this.inFlight.dec();
        const labels = { method: request.method, route: routeOf(request), status: String(response.statusCode) };
        this.requests.inc(labels);
        stop(labels);
      });
      next();
    };
  }

  /**
   * GET /metrics. With a token (METRICS_TOKEN, as Forgejo's `[metrics] TOKEN`) only `Authorization: Bearer
   * <token>` may read; anything else is a 401.
   */
  endpoint(token: string | undefined): RequestHandler {
    const expected = token === undefined ? undefined : Buffer.from(`Bearer ${token}`);
    return (request: Request, response: Response, next: NextFunction) => {
      if ((request.method !== 'GET' && request.method !== 'HEAD') || request.path !== '/') return next();
      if (expected) {
        const given = Buffer.from(request.header('authorization') ?? '');
        if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
          response.status(401).setHeader('WWW-Authenticate', 'Bearer realm="metrics"');
          response.type('text/plain; charset=utf-8').send('unauthorized\n');
          return;
        }
      }
      this.registry.metrics().then(
        (text) => {
          response.setHeader('Cache-Control', 'no-store');
          response.type(this.registry.contentType).send(text);
        },
        (error: unknown) => next(error),
      );
    };
  }
}
