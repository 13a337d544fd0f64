import type { IncomingMessage, ServerResponse } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import { Injectable, Logger } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { AuthContext } from '../auth/auth-context';
import { clientAddress, CredentialChain } from '../auth/credentials';
import { TooManyRequestsError, UnauthorizedError } from '../common/errors';
import type { RequestLog } from '../logging/request-log';
import { GitConfig, SiteConfig } from '../config/slices';
import { dependencyFailure } from '../common/dependency-errors';
import type { GitClient } from '../git/git-client';
import { GitBusyError, GitProcesses, isSafeGitProtocol, ServingProcess } from '../git/git-processes';
import { TransferWatch } from '../git/transfer-watch';
import { accountStateProblem, GitTarget, RepositoryGitAccess, ServedTarget } from '../repos/repository-git-access';
import { ARCHIVED_PUSH_HTTP } from '../access/access-policy';

// One cohesive thing, kept whole though long: git's smart HTTP protocol, served before Nest's routing.

type Service = 'upload-pack' | 'receive-pack';

interface GitRoute {
  owner: string;
  repo: string;
  /** `info/refs` (advertisement) or the RPC of a service. */
  kind: 'info-refs' | Service;
}

/** Answers the client as a failure git prints (`remote: <body>`): one line of text (docs/git-transports.md). */
class GitHttpRefusal extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Anvil"' };
const NO_CACHE = {
  Expires: 'Fri, 01 Jan 1980 00:00:00 GMT',
  Pragma: 'no-cache',
  'Cache-Control': 'no-cache, max-age=0, must-revalidate',
};
/** Seconds a client is told to wait when every git slot is taken. */
const RETRY_AFTER_SECONDS = '10';

/**
 * Smart HTTP (docs/git-transports.md): `info/refs`, `git-upload-pack` and `git-receive-pack` under ROOT_URL's path.
 * Mounted before the API's middleware, so that no JSON body parser, body limit or API auth touches these
 * requests; bodies and answers stream through git's pipes in both directions.
 */
@Injectable()
export class GitHttpHandler {
  private readonly logger = new Logger('GitHttp');
  private readonly basePath: string;

  constructor(
    private readonly gitConfig: GitConfig,
    private readonly siteConfig: SiteConfig,
    private readonly credentials: CredentialChain,
    private readonly access: RepositoryGitAccess,
    private readonly processes: GitProcesses,
  ) {
    this.basePath = new URL(siteConfig.rootUrl).pathname;
  }

  /**
   * The Express middleware; requests that are not git routes go on to the API. Git routes are logged by the
   * API's request log (one line per request, no headers, query tokens redacted).
   */
  middleware(requestLog: RequestLog): RequestHandler {
    return (request: Request, response: Response, next: NextFunction) => {
      const route = this.match(request.path);
      if (!route) return next();
      requestLog.track(request, response);
      this.serve(route, request, response).catch((error: unknown) => this.fail(response, request, error));
    };
  }

  private match(requestPath: string): GitRoute | null {
    if (!requestPath.startsWith(this.basePath)) return null;
    const match = /^([^/]+)\/([^/]+)\/(info\/refs|git-upload-pack|git-receive-pack)$/.exec(requestPath.slice(this.basePath.length));
    if (!match) return null;
    const [, owner, rawRepo, tail] = match;
    // One `.git` suffix, matched case-sensitively, is removed once (Forgejo's TrimSuffix).
    const repo = rawRepo.endsWith('.git') ? rawRepo.slice(0, -'.git'.length) : rawRepo;
    if (repo === '') return null;
    const kind = tail === 'info/refs' ? 'info-refs' : tail === 'git-upload-pack' ? 'upload-pack' : 'receive-pack';
    return { owner: safeDecode(owner), repo: safeDecode(repo), kind };
  }

  /** The decision order of docs/git-transports.md; the first failing step answers. */
  private async serve(route: GitRoute, request: Request, response: Response): Promise<void> {
    // 1. Method, then credentials that are present but wrong.
    const allowed = route.kind === 'info-refs' ? ['GET', 'HEAD'] : ['POST'];
    if (!allowed.includes(request.method)) throw new GitHttpRefusal(405, 'Method Not Allowed', { Allow: allowed.join(', ') });
    const auth = await this.authenticate(request);
    // 2. Account state.
    if (auth.user) {
      const problem = accountStateProblem(auth.user, this.siteConfig.rootUrl);
      if (problem) throw new GitHttpRefusal(403, problem);
    }
    // 3. Dumb HTTP.
    const service = route.kind === 'info-refs' ? advertisedService(request) : route.kind;
    // 4. The repository.
    const target = await this.access.find(route.owner, route.repo);
    // 5.-11. The decision (a public pull needs no more; git-access-decision.ts).
    const asMaintainer = await this.authorize(auth, service, target);
    // The decision leaves only existing, readable repositories.
    const served: ServedTarget = { owner: target.owner!, repo: target.repo!, pusherId: auth.id ?? 0, asMaintainer };
    const client: GitClient = { address: clientAddress(request), userId: auth.id };
    if (route.kind === 'info-refs') return this.advertise(service, served, client, request, response);
    // 12. Content type and encoding of the RPC.
    const input = this.requestBody(service, request);
    return this.rpc(service, served, client, request, input, response);
  }

  private async authenticate(request: Request): Promise<AuthContext> {
    try {
      return await this.credentials.authenticateGitRequest(request);
    } catch (error) {
      if (error instanceof UnauthorizedError) throw new GitHttpRefusal(401, error.message, CHALLENGE);
      if (error instanceof TooManyRequestsError) {
        throw new GitHttpRefusal(429, 'Too many failed sign-ins, try again later.', { 'Retry-After': String(error.retryAfterSeconds) });
      }
      throw error;
    }
  }

  /**
   * The decision of every git door (git-access-decision.ts), in the words of git over HTTP (docs/git-transports.md);
   * true for a push admitted as a maintainer's of a pull request's head branch, which pre-receive judges by ref.
   */
  private async authorize(auth: AuthContext, service: Service, target: GitTarget): Promise<boolean> {
    const operation = service === 'upload-pack' ? 'pull' : 'push';
    const decision = await this.access.decide(auth, target, operation, 'http', operation === 'push');
    if (decision.allowed) return decision.asMaintainer === true;
    switch (decision.refusal) {
      case 'sign-in':
        throw new GitHttpRefusal(401, 'Unauthorized', CHALLENGE);
      case 'scope': {
        const level = operation === 'pull' ? 'read' : 'write';
        throw new GitHttpRefusal(403, `token does not have at least one of required scope(s): [${level}:repository]`);
      }
      case 'not-found':
      case 'deploy-key-not-authorized':
        throw new GitHttpRefusal(404, 'Repository not found');
      case 'public-only':
        throw new GitHttpRefusal(403, 'token scope is limited to public repos');
      case 'mirror':
        throw new GitHttpRefusal(403, 'mirror repository is read-only');
      case 'not-writer':
        throw new GitHttpRefusal(403, `User '${auth.user!.name}' is not allowed to push to '${target.owner!.name}/${target.repo!.name}'.`);
      case 'archived':
        throw new GitHttpRefusal(403, ARCHIVED_PUSH_HTTP);
    }
  }

  /** The request must be `application/x-git-<svc>-request`; gzip bodies are inflated on the way to git. */
  private requestBody(service: Service, request: Request): Readable {
    const contentType = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
    if (contentType !== `application/x-git-${service}-request`) throw new GitHttpRefusal(415, 'Unsupported Media Type');
    const encoding = (request.headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return request;
    if (encoding === 'gzip' || encoding === 'x-gzip') return request.pipe(createGunzip());
    throw new GitHttpRefusal(415, 'Unsupported Media Type');
  }

  private async advertise(service: Service, target: ServedTarget, client: GitClient, request: Request, response: Response): Promise<void> {
    const headers = { 'Content-Type': `application/x-git-${service}-advertisement`, ...NO_CACHE };
    if (request.method === 'HEAD') {
      response.status(200).set(headers).end();
      return;
    }
    const git = await this.start(service, target, client, request, response, { advertiseRefs: true });
    response.status(200).set(headers);
    const header = `# service=git-${service}\n`;
    response.write(`${(header.length + 4).toString(16).padStart(4, '0')}${header}0000`);
    this.pipeOut(git, request, response);
    git.child.stdin.end();
  }

  private async rpc(service: Service, target: ServedTarget, client: GitClient, request: Request, input: Readable, response: Response): Promise<void> {
    // A fetch's request (wants and haves) is small: it is read whole before git starts, so that a client that
    // sends it slowly, or never finishes it, waits without holding a git slot. A push's pack streams through.
    const buffered = service === 'upload-pack' ? await this.readNegotiation(input, request) : null;
    const git = await this.start(service, target, client, request, response, {});
    response.status(200).set({ 'Content-Type': `application/x-git-${service}-result`, ...NO_CACHE });
    const rest = buffered ? buffered.rest : input;
    if (rest && rest !== request) {
      rest.on('error', () => {
        // A corrupt gzip stream: nothing reached the client yet, since git waits for the whole request.
        git.kill();
        if (!response.headersSent) this.reply(response, request, 400, 'Bad Request');
        else response.destroy();
      });
    }
    if (buffered && !buffered.rest) git.child.stdin.end(buffered.head);
    else {
      if (buffered) git.child.stdin.write(buffered.head);
      git.feed(rest!);
    }
    this.pipeOut(git, request, response);
  }

  /**
   * Reads an upload-pack request into memory, up to GIT_REQUEST_BODY_MAX_SIZE, within GIT_REQUEST_BODY_TIMEOUT
   * and at no less than the minimum transfer rate (408 otherwise; a corrupt gzip stream is 400). A larger body
   * (a negotiation with hundreds of thousands of haves) is not refused: what was read goes first, the rest
   * streams to git as a push does.
   */
  private readNegotiation(input: Readable, request: Request): Promise<{ head: Buffer; rest: Readable | null }> {
    const git = this.gitConfig;
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        watch.stop();
        input.off('data', onData);
        input.off('end', onEnd);
        input.off('error', onError);
        request.off('close', onClose);
        action();
      };
      const tooSlow = () =>
        finish(() => {
          input.pause();
          reject(new GitHttpRefusal(408, 'Request Timeout: the request body came too slowly', { Connection: 'close' }));
        });
      const deadline = setTimeout(tooSlow, git.requestBodyTimeoutMs);
      deadline.unref();
      const watch = new TransferWatch({ minRate: git.minTransferRate, windowMs: git.transferWindowMs, waitingOnPeer: () => true, onStall: tooSlow });
      const onData = (chunk: Buffer) => {
        chunks.push(chunk);
        size += chunk.length;
        watch.count(chunk.length);
        if (size > git.requestBodyMaxBytes) {
          finish(() => {
            input.pause();
            resolve({ head: Buffer.concat(chunks), rest: input });
          });
        }
      };
      const onEnd = () => finish(() => resolve({ head: Buffer.concat(chunks), rest: null }));
      const onError = () => finish(() => reject(new GitHttpRefusal(400, 'Bad Request')));
      // The client went away before its request was complete: there is nobody to answer.
      const onClose = () => !request.complete && finish(() => reject(new GitHttpRefusal(400, 'Bad Request')));
      input.on('data', onData);
      input.on('end', onEnd);
      input.on('error', onError);
      request.on('close', onClose);
    });
  }

  private async start(
    service: Service,
    target: ServedTarget,
    client: GitClient,
    request: Request,
    response: Response,
    options: { advertiseRefs?: boolean },
  ): Promise<ServingProcess> {
    const protocol = request.header('git-protocol');
    // A request waits for a slot while its client stays connected (GitProcesses).
    const connection = new AbortController();
    const gone = () => connection.abort();
    response.once('close', gone);
    try {
      return await this.processes.start({
        service,
        dir: this.access.directory(target),
        statelessRpc: true,
        advertiseRefs: options.advertiseRefs,
        protocol: protocol !== undefined && isSafeGitProtocol(protocol) ? protocol : undefined,
        push:
          service === 'receive-pack'
            ? { repositoryId: target.repo.id, pusherId: target.pusherId, ...(target.asMaintainer ? { asMaintainer: true } : {}) }
            : undefined,
        client,
        connection: connection.signal,
      });
    } catch (error) {
      if (error instanceof GitBusyError) {
        throw new GitHttpRefusal(503, `Service Unavailable: ${error.message}`, { 'Retry-After': RETRY_AFTER_SECONDS });
      }
      throw error;
    } finally {
      response.off('close', gone);
    }
  }

  /** git's output goes to the client as it comes; a client that goes away stops git. */
  private pipeOut(git: ServingProcess, request: Request, response: Response): void {
    const stderr: Buffer[] = [];
    let stderrBytes = 0;
    git.child.stderr.on('data', (chunk: Buffer) => {
      if (stderrBytes < 16 * 1024) stderr.push(chunk);
      stderrBytes += chunk.length;
    });
    git.deliver(response);
    response.on('close', () => {
      if (!response.writableFinished) git.kill();
    });
    void git.exited.then((code) => {
      if (code === null) {
        // Killed (idle limit, shutdown): the client must see a broken exchange, not a complete answer.
        response.destroy();
        return;
      }
      if (code !== 0) {
        this.logger.warn(`git on ${request.path} exited ${code}: ${Buffer.concat(stderr).toString('utf8').trim().slice(0, 500)}`);
        if (!response.headersSent) return this.reply(response, request, 500, 'Internal Server Error');
      }
      response.end();
    });
  }

  private fail(response: Response, request: Request, error: unknown): void {
    if (error instanceof GitHttpRefusal) return this.reply(response, request, error.status, error.message, error.headers);
    // The database, the disk or the machine's descriptors failed: 503 or 507 in the service's words, not a 500.
    const failure = dependencyFailure(error);
    if (failure && !response.headersSent) {
      this.logger.warn(`git request ${request.method} ${request.path} answered ${failure.status}: ${(error as Error).message}`);
      const retryAfter = (failure as { retryAfterSeconds?: number }).retryAfterSeconds;
      return this.reply(response, request, failure.status, failure.message, retryAfter === undefined ? {} : { 'Retry-After': String(retryAfter) });
    }
    this.logger.error(`git request ${request.method} ${request.path} failed: ${(error as Error).stack ?? error}`);
    if (!response.headersSent) this.reply(response, request, 500, 'Internal Server Error');
    else response.destroy();
  }

  private reply(response: Response, request: Request, status: number, text: string, headers: Record<string, string> = {}): void {
    // Whatever the client still sends is read and dropped, so the connection is not left stuck.
    request.resume();
    response.status(status).set({ 'Content-Type': 'text/plain; charset=utf-8', ...NO_CACHE, ...headers });
    response.end(request.method === 'HEAD' ? undefined : text);
  }
}

function advertisedService(request: Request): Service {
  const service = request.query.service;
  if (service === 'git-upload-pack') return 'upload-pack';
  if (service === 'git-receive-pack') return 'receive-pack';
  throw new GitHttpRefusal(403, 'Dumb HTTP protocol is not supported');
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
