import { Injectable, Logger } from '@nestjs/common';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import { CredentialChain, GIT_CREDENTIALS_REFUSED } from '../auth/credentials';
import { sendBlob } from '../blobs/blob-download';
import { BlobStorage } from '../blobs/blob-storage';
import { dependencyFailure } from '../common/dependency-errors';
import { BadRequestError, DomainError, NotFoundError, PayloadTooLargeError, TooManyRequestsError, UnauthorizedError } from '../common/errors';
import { GitConfig, LfsConfig, SiteConfig } from '../config/slices';
import { declaredLength } from '../http/upload-body';
import type { RequestLog } from '../logging/request-log';
import { lfsKey } from './lfs-content';
import { LfsOperation, LfsService, LfsTarget } from './lfs.service';
import { LFS_MEDIA_TYPE } from './lfs.wire';
import { LfsTokens } from './lfs-tokens';
import { LfsLocksService, LockExistsError } from './lfs-locks.service';

// The Git LFS API under `{owner}/{repo}[.git]/info/lfs`, served before Nest's routing as git's smart HTTP is:
// its bodies (objects of any size) stream to the store, and its answers are the LFS protocol's, not the API's.

type LfsRoute =
  | { kind: 'batch' | 'verify' | 'locks' | 'locks-verify' | 'not-found'; owner: string; repo: string }
  | { kind: 'unlock'; owner: string; repo: string; id: string }
  | { kind: 'object'; owner: string; repo: string; oid: string; size?: string };

const CHALLENGE = { 'WWW-Authenticate': 'Basic realm="Anvil"' };
/** A batch of LFS_MAX_BATCH_SIZE objects takes well under this many bytes per object. */
const JSON_BYTES_PER_OBJECT = 512;
const JSON_MIN_BYTES = 64 * 1024;

@Injectable()
export class LfsHttpHandler {
  private readonly logger = new Logger('Lfs');
  private readonly basePath: string;

  constructor(
    private readonly lfsConfig: LfsConfig,
    private readonly gitConfig: GitConfig,
    siteConfig: SiteConfig,
    private readonly credentials: CredentialChain,
    private readonly lfs: LfsService,
    private readonly blobs: BlobStorage,
    private readonly tokens: LfsTokens,
    private readonly locks: LfsLocksService,
  ) {
    this.basePath = new URL(siteConfig.rootUrl).pathname;
  }

  /** The Express middleware; requests that are not LFS routes (or all, when LFS_START_SERVER is off) go on. */
  middleware(requestLog: RequestLog): RequestHandler {
    return (request: Request, response: Response, next: NextFunction) => {
      const route = this.lfsConfig.startServer ? this.match(request.path) : null;
      if (!route) return next();
      requestLog.track(request, response);
      this.serve(route, request, response).catch((error: unknown) => this.fail(response, request, error));
    };
  }

  private match(requestPath: string): LfsRoute | null {
    if (!requestPath.startsWith(this.basePath)) return null;
    const match = /^([^/]+)\/([^/]+)\/info\/lfs(\/.*)?$/i.exec(requestPath.slice(this.basePath.length));
    if (!match) return null;
    const [, rawOwner, rawRepo, tail = ''] = match;
    const repo = rawRepo.endsWith('.git') ? rawRepo.slice(0, -'.git'.length) : rawRepo;
    if (repo === '') return null;
    const owner = safeDecode(rawOwner);
    const name = safeDecode(repo);
    const lower = tail.toLowerCase();
    if (lower === '/objects/batch') return { kind: 'batch', owner, repo: name };
    if (lower === '/verify') return { kind: 'verify', owner, repo: name };
    if (lower === '/locks' || lower === '/locks/') return { kind: 'locks', owner, repo: name };
    if (lower === '/locks/verify') return { kind: 'locks-verify', owner, repo: name };
    const unlock = /^\/locks\/([^/]+)\/unlock$/i.exec(tail);
    if (unlock) return { kind: 'unlock', owner, repo: name, id: safeDecode(unlock[1]) };
    const object = /^\/objects\/([^/]+)(?:\/([^/]+))?$/i.exec(tail);
    if (object) return { kind: 'object', owner, repo: name, oid: safeDecode(object[1]), size: object[2] === undefined ? undefined : safeDecode(object[2]) };
    return { kind: 'not-found', owner, repo: name };
  }

  private async serve(route: LfsRoute, request: Request, response: Response): Promise<void> {
    switch (route.kind) {
      case 'batch': {
        allow(request, ['POST']);
        assertAcceptsLfs(request);
        const body = await this.readJson(request, Math.max(JSON_MIN_BYTES, this.lfsConfig.maxBatchSize * JSON_BYTES_PER_OBJECT));
        const operation = body.operation;
        if (operation !== 'upload' && operation !== 'download') throw new BadRequestError('Bad Request');
        if (!Array.isArray(body.objects)) throw new BadRequestError('Bad Request');
        const target = await this.open(request, route, operation);
        return this.json(response, 200, await this.lfs.batch(target, operation, body.objects, actionHeader(request)));
      }
      case 'verify': {
        allow(request, ['POST']);
        assertAcceptsLfs(request);
        const body = await this.readJson(request, JSON_MIN_BYTES);
        await this.lfs.verify(await this.open(request, route, 'upload'), body);
        return this.json(response, 200, { message: 'OK' });
      }
      case 'object':
        if (route.size !== undefined) {
          allow(request, ['PUT']);
          this.lfs.assertPointer(route.oid, route.size);
          const target = await this.open(request, route, 'upload');
          await this.lfs.upload(target, route.oid, route.size, { stream: request, declaredLength: declaredLength(request) });
          return this.json(response, 200, { message: 'OK' });
        }
        allow(request, ['GET', 'HEAD']);
        return this.download(request, response, await this.open(request, route, 'download'), route.oid);
      case 'locks':
        allow(request, ['GET', 'POST']);
        assertAcceptsLfs(request);
        if (request.method === 'GET') {
          const target = await this.open(request, route, 'download');
          return this.json(response, 200, await this.locks.list(target, stringQuery(request, ['id', 'path', 'cursor', 'limit'])));
        } else {
          const body = await this.readJson(request, JSON_MIN_BYTES);
          const target = await this.open(request, route, 'upload');
          return this.json(response, 201, { lock: await this.locks.create(target, body) });
        }
      case 'locks-verify': {
        allow(request, ['POST']);
        assertAcceptsLfs(request);
        const body = await this.readJson(request, JSON_MIN_BYTES);
        return this.json(response, 200, await this.locks.verify(await this.open(request, route, 'upload'), body));
      }
      case 'unlock': {
        allow(request, ['POST']);
        assertAcceptsLfs(request);
        const body = await this.readJson(request, JSON_MIN_BYTES);
        return this.json(response, 200, { lock: await this.locks.unlock(await this.open(request, route, 'upload'), route.id, body) });
      }
      case 'not-found':
        throw new NotFoundError('Not Found');
    }
  }

  private async download(request: Request, response: Response, target: LfsTarget, oid: string): Promise<void> {
    const content = await this.lfs.download(target, oid);
    try {
      response.setHeader('Access-Control-Expose-Headers', 'Content-Range, Content-Disposition');
      await sendBlob(this.blobs, request, response, { key: lfsKey(oid), size: content.size, name: oid, opened: content });
    } finally {
      await content.close();
    }
  }

  /** A token from `git-lfs-authenticate` (a bearer JWT), else the credentials of git over HTTP. */
  private async open(request: Request, route: { owner: string; repo: string }, operation: LfsOperation): Promise<LfsTarget> {
    const bearer = /^(?:bearer|token)\s+([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i.exec(request.headers.authorization ?? '');
    if (bearer) {
      const claims = this.tokens.verify(bearer[1]);
      if (!claims) throw new UnauthorizedError(GIT_CREDENTIALS_REFUSED);
      return this.lfs.openWithToken(claims, route.owner, route.repo, operation);
    }
    return this.lfs.open(await this.credentials.authenticateGitRequest(request), route.owner, route.repo, operation);
  }

  /** A JSON object body of at most `maxBytes`, within the git body timeout; anything else is 400 (413 too large). */
  private readJson(request: Request, maxBytes: number): Promise<Record<string, unknown>> {
    const declared = declaredLength(request);
    if (declared !== undefined && declared > maxBytes) return Promise.reject(new PayloadTooLargeError('Request Entity Too Large'));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (action: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(deadline);
        request.off('data', onData);
        request.off('end', onEnd);
        request.off('error', onError);
        action();
      };
      const deadline = setTimeout(
        () => finish(() => reject(new BadRequestError('Request Timeout: the request body came too slowly'))),
        this.gitConfig.requestBodyTimeoutMs,
      );
      deadline.unref();
      const onData = (chunk: Buffer) => {
        size += chunk.length;
        if (size > maxBytes) return finish(() => reject(new PayloadTooLargeError('Request Entity Too Large')));
        chunks.push(chunk);
      };
      const onEnd = () =>
        finish(() => {
          try {
            const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
            if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
            resolve(parsed as Record<string, unknown>);
          } catch {
            reject(new BadRequestError('Bad Request'));
          }
        });
      const onError = () => finish(() => reject(new BadRequestError('Bad Request')));
      request.on('data', onData);
      request.on('end', onEnd);
      request.on('error', onError);
    });
  }

  private json(response: Response, status: number, body: unknown): void {
    response.status(status).set({ 'Content-Type': LFS_MEDIA_TYPE, 'Cache-Control': 'no-store' });
    response.end(JSON.stringify(body));
  }

  private fail(response: Response, request: Request, error: unknown): void {
    if (response.headersSent) {
      response.destroy();
      return;
    }
    // Whatever the client still sends is read and dropped, so that it reads the answer.
    request.resume();
    if (error instanceof DomainError) {
      const headers: Record<string, string> = error.status === 401 ? CHALLENGE : {};
      if (error instanceof TooManyRequestsError) headers['Retry-After'] = String(error.retryAfterSeconds);
      if (error instanceof MethodRefused) headers.Allow = error.allowed.join(', ');
      response.set(headers);
      if (error instanceof LockExistsError) return this.json(response, 409, { lock: error.lock, message: error.message });
      return this.json(response, error.status, { message: error.message });
    }
    const failure = dependencyFailure(error);
    if (failure) {
      this.logger.warn(`LFS request ${request.method} ${request.path} answered ${failure.status}: ${(error as Error).message}`);
      const retryAfter = (failure as { retryAfterSeconds?: number }).retryAfterSeconds;
      if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
      return this.json(response, failure.status, { message: failure.message });
    }
    this.logger.error(`LFS request ${request.method} ${request.path} failed: ${(error as Error).stack ?? error}`);
    this.json(response, 500, { message: 'Internal Server Error' });
  }
}

class MethodRefused extends DomainError {
  readonly status = 405;
  constructor(readonly allowed: string[]) {
    super('Method Not Allowed');
  }
}

function allow(request: Request, methods: string[]): void {
  if (!methods.includes(request.method)) throw new MethodRefused(methods);
}

/** The batch and verify routes answer only clients that accept the LFS media type (415 otherwise). */
function assertAcceptsLfs(request: Request): void {
  const accept = (request.headers.accept ?? '').split(',').map((part) => part.split(';')[0].trim().toLowerCase());
  if (!accept.includes(LFS_MEDIA_TYPE)) throw new UnsupportedMediaType();
}

class UnsupportedMediaType extends DomainError {
  readonly status = 415;
  constructor() {
    super('Unsupported Media Type');
  }
}

/** The headers an action needs to complete on its own: the caller's own credentials, when it sent any. */
function actionHeader(request: Request): Record<string, string> {
  const authorization = request.headers.authorization;
  return authorization ? { Authorization: authorization } : {};
}

/** The named query parameters that came as single strings. */
function stringQuery(request: Request, names: string[]): Record<string, string> {
  const found: Record<string, string> = {};
  for (const name of names) {
    const value = request.query[name];
    if (typeof value === 'string') found[name] = value;
  }
  return found;
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
