import * as fs from 'node:fs';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { formatAddress } from '../config/net-address';
import { Logger } from '@nestjs/common';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { createApp } from '../bootstrap';
import type { AppConfig } from '../config/config';
import type { DatabaseConfig } from '../config/slices';
import { armFaultPoints } from '../common/fault-points';
import { ProcessLiveness } from '../integrity/process-liveness';
import { Reconciliation } from '../integrity/reconciliation.service';
import { SshServer } from '../ssh/ssh-server';
import { fitToDescriptorLimit } from './descriptor-limit';
import { PACKAGE_VERSION } from './package-version';
import { Readiness } from './readiness';

/** The server cannot start; the message is one line that says why and what to check. */
export class StartupError extends Error {
  constructor(
    message: string,
    options?: { cause?: unknown },
    /** Not one of the failures this module words (port, DATA_DIR, database): its cause's stack is worth printing. */
    readonly unforeseen = false,
  ) {
    super(message, options);
    this.name = 'StartupError';
  }
}

/** Where to report start-up and shutdown; the application logger unless a test listens. */
export interface ServerReporter {
  info(line: string): void;
}

export interface RunningServer {
  app: NestExpressApplication;
  /** `host:port` as bound. */
  httpAddress: string;
  /** Closes the server and everything it holds, reporting the start and the end. */
  stop(reason: string): Promise<void>;
}

/**
 * Starts Anvil as `npm start` runs it: a writable DATA_DIR, the database (migrated), the HTTP listener, then
 * one line saying where it listens. Every failure on the way is a StartupError with a one-line message. Start-up
 * holds the whole AppConfig: it builds the app from it and reports settings of every group.
 */
export async function serve(config: AppConfig, reporter?: ServerReporter): Promise<RunningServer> {
  assertWritableDataDir(config.dataDir);
  armFaultPoints(config.faultKillAt);
  const descriptorWarnings = fitToDescriptorLimit(config);
  let app: NestExpressApplication;
  let reconciled: { repaired: number };
  try {
    app = await createApp(config);
  } catch (error) {
    throw startupFailure(error, config);
  }
  if (descriptorWarnings.length > 0) new Logger('Anvil').warn(descriptorWarnings.join('; '));
  const report = reporter ?? appReporter();
  let httpAddress: string;
  try {
    // What a crash left half-made is repaired before the first request can see it; the sweep of repositories,
    // whose cost grows with their number, runs once the server answers.
    // Alive in the database first: what this process builds is then never taken for a dead one's.
    await app.get(ProcessLiveness).start();
    const report = await app.get(Reconciliation).leftovers({ fix: true });
    reconciled = { repaired: report.findings.length };
    httpAddress = await listen(app, config.port);
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
  const ssh = config.ssh.enabled ? (app.get(SshServer).listeningAddress() ?? undefined) : undefined;
  report.info(
    startupLine({
      version: PACKAGE_VERSION,
      http: httpAddress,
      ssh,
      rootUrl: config.rootUrl,
      dataDir: config.dataDir,
      database: config.database,
      ...reconciled,
    }),
  );
  const sweep = sweepInBackground(app.get(Reconciliation), report, app.getHttpServer() as Server);
  let stopping: Promise<void> | undefined;
  return {
    app,
    httpAddress,
    stop: (reason) => {
      stopping ??= (async () => {
        // Readiness answers 503 at once; the listener stays open SHUTDOWN_DELAY longer, so that a gateway's
        // health check sees it and sends new requests elsewhere before connections are refused.
        app.get(Readiness).drain();
        if (config.http.shutdownDelayMs > 0) {
          report.info(`shutting down (${reason}): not ready, still serving for ${config.http.shutdownDelayMs} ms`);
          await new Promise((resolve) => setTimeout(resolve, config.http.shutdownDelayMs).unref());
        }
        report.info(`shutting down (${reason}): no new connections, finishing requests in flight`);
        await sweep.stop();
        // The listener closes before the modules do: a request that came in while the database pool and the git
        // launcher were being closed would find them gone and fail with a 500.
        await stopAccepting(app.getHttpServer() as Server, config.http.apiRequestTimeoutMs, config.http.shutdownGraceMs);
        await app.close();
        report.info('shutdown complete');
      })();
      return stopping;
    },
  };
}

export interface StartupFacts {
  version: string;
  http: string;
  ssh?: string;
  rootUrl: string;
  dataDir: string;
  database: DatabaseConfig;
  /** Findings the start-up reconciliation repaired (what a crash had left half-made). */
  repaired?: number;
}

/** The one start-up line: where Anvil listens and where it keeps its data (never a password). */
export function startupLine(facts: StartupFacts): string {
  const listening = [`HTTP on ${facts.http}`, ...(facts.ssh ? [`SSH on ${facts.ssh}`] : [])].join(', ');
  const repaired = facts.repaired === undefined ? '' : `; reconciliation repaired ${facts.repaired}`;
  return `Anvil ${facts.version} listening: ${listening}; ROOT_URL ${facts.rootUrl}; data directory ${facts.dataDir}; database ${describeDatabase(facts.database)}${repaired}`;
}

export function describeDatabase(database: DatabaseConfig): string {
  return database.type === 'sqlite'
    ? `SQLite ${database.file}`
    : `MySQL ${database.socketPath ?? database.hosts.map((host) => `${host.host}:${host.port}`).join(',')}/${database.database}`;
}

/**
 * The start's share of the repository sweep, after the server listens: throttled (reconciliation.service.ts), and
 * resting longer while `server` takes requests; reported in one line when it ends, stopped between two repositories
 * by a shutdown. A failure (the database gone meanwhile) is logged; the next start continues from the cursor.
 */
function sweepInBackground(reconciliation: Reconciliation, report: ServerReporter, server: Server): { stop(): Promise<void> } {
  const stopper = new AbortController();
  const serving = requestsArriving(server);
  const done = reconciliation
    .sweep({ fix: true, throttled: true, signal: stopper.signal, serving })
    .then(
      (swept) => report.info(`reconciliation sweep checked ${swept.swept} repositories, repaired ${swept.findings.length}`),
      (error: unknown) => new Logger('Reconciliation').error(`reconciliation sweep stopped: ${(error as Error).message}`),
    )
    .finally(serving.stop);
  return {
    stop: () => {
      stopper.abort();
      return done;
    },
  };
}

/** Whether `server` took a request since the previous call: one counter raised per request, while the sweep runs. */
function requestsArriving(server: Server): (() => boolean) & { stop(): void } {
  let arrived = 0;
  let seen = 0;
  const count = () => (arrived += 1);
  server.on('request', count);
  const serving = () => {
    const busy = arrived !== seen;
    seen = arrived;
    return busy;
  };
  return Object.assign(serving, { stop: () => void server.off('request', count) });
}

async function listen(app: NestExpressApplication, port: number): Promise<string> {
  try {
    await app.listen(port);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new StartupError(`port ${port} is already in use: stop the other server or set PORT`, { cause: error });
    if (code === 'EACCES') throw new StartupError(`no permission to listen on port ${port}: use a port above 1023 or set PORT`, { cause: error });
    throw new StartupError(`cannot listen on port ${port}: ${(error as Error).message}`, { cause: error });
  }
  return formatAddress(app.getHttpServer().address() as AddressInfo);
}

/** DATA_DIR must exist (it is created) and take new files, or nothing else can work. */
export function assertWritableDataDir(dataDir: string): void {
  try {
    fs.mkdirSync(dataDir, { recursive: true });
    const probe = path.join(dataDir, `.write-test-${process.pid}`);
    fs.writeFileSync(probe, '');
    fs.rmSync(probe);
  } catch (error) {
    throw new StartupError(`DATA_DIR ${dataDir} is not a writable directory: ${shortReason(error)}`, { cause: error });
  }
}

/** A failure of createApp in words: the database is the usual suspect. */
export function startupFailure(error: unknown, config: AppConfig): Error {
  if (error instanceof StartupError) return error;
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  // The HTTP port is bound later (listen): a port in use this early is the SSH server's.
  if (code === 'EADDRINUSE') {
    const port = (error as { port?: number }).port ?? config.ssh.listenPort;
    return new StartupError(`SSH port ${port} is already in use: stop the other server, set SSH_LISTEN_PORT, or SSH_ENABLED=false`, { cause: error });
  }
  // A socket in DATABASE_URL that is not there, or not ours to open, is as unreachable as a refused port.
  const socket = config.database.type === 'mysql' ? config.database.socketPath : undefined;
  const missingSocket = socket !== undefined && (code === 'ENOENT' || code === 'EACCES') && (error as { address?: string }).address === socket;
  if (
    missingSocket ||
    (code &&
      /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ER_ACCESS_DENIED_ERROR|ER_BAD_DB_ERROR|ER_DBACCESS_DENIED_ERROR|SQLITE_CANTOPEN|ECONNRESET|PROTOCOL_CONNECTION_LOST)$/.test(
        code,
      ))
  ) {
    return new StartupError(`cannot reach the database (${describeDatabase(config.database)}): ${shortReason(error)}`, { cause: error });
  }
  return new StartupError(`start-up failed: ${shortReason(error)}`, { cause: error }, true);
}

function shortReason(error: unknown): string {
  // Not `instanceof Error`: errors from Node's own modules may come from another realm (as under jest).
  const message = (error as { message?: unknown } | undefined)?.message;
  const text = typeof message === 'string' ? message : String(error);
  return text.split('\n')[0].trim() || (error as NodeJS.ErrnoException)?.code || 'unknown error';
}

function appReporter(): ServerReporter {
  const logger = new Logger('Anvil');
  return { info: (line) => logger.log(line) };
}

/**
 * Stops accepting connections and lets the requests in flight finish. After the listener closes, a connection
 * already open may still carry a request: a client between two requests of one exchange (git's push sends its
 * pack on the connection that fetched the refs) would otherwise meet a reset. For `graceMs` such a request is
 * still served, with `Connection: close`; then each connection is closed as soon as it is idle (checked every
 * 50 ms), for at most `limitMs` (or the grace) in all; what is still open then is closed by the app's own close.
 */
function stopAccepting(server: Server, limitMs: number, graceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    if (!response.headersSent) response.setHeader('Connection', 'close');
  });
  return new Promise((resolve) => {
    let done = false;
    let idle: NodeJS.Timeout | undefined;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(grace);
      clearInterval(idle);
      clearTimeout(limit);
      resolve();
    };
    const grace = setTimeout(() => {
      server.closeIdleConnections();
      idle = setInterval(() => server.closeIdleConnections(), 50);
    }, graceMs);
    const limit = setTimeout(finish, Math.max(limitMs, graceMs, 1000));
    // Not server.close(): Node's HTTP server closes every idle connection at once there, before the grace.
    net.Server.prototype.close.call(server, () => finish());
  });
}
