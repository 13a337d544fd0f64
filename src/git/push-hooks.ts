import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { StorageConfig } from '../config/slices';

/** Who pushes where: what the hooks of one receive-pack act on. */
export interface PushContext {
  repositoryId: number;
  pusherId: number;
  /** The SSH key used, when the push came over SSH. */
  keyId?: number;
}

/** One line git gives a pre-receive / post-receive hook: `<old> <new> <ref>`. */
export interface RefUpdate {
  oldId: string;
  newId: string;
  ref: string;
}

/** A refusal of pre-receive: git prints `remote: Anvil: <message>` and declines the whole push. */
export class PushRefused extends Error {}

/**
 * What a push may add, decided before receive-pack reads its pack: `maxInputBytes` becomes
 * `receive.maxInputSize`, and `release` gives the claim behind it back once the process has exited.
 */
export interface PushAllowance {
  maxInputBytes: number;
  release(): Promise<void>;
}

/** What a push does to Anvil's records; the repositories module provides it. */
export interface PushHandler {
  /** Before receive-pack starts: the most the push may add (the owner's remaining quota), or null for no cap. */
  allowance(push: PushContext): Promise<PushAllowance | null>;
  /**
   * Throws PushRefused to decline the whole push. `objects` are git's quarantine variables: run with them, git
   * sees the objects the push brought, which stay out of the repository until pre-receive accepts them.
   */
  preReceive(push: PushContext, updates: RefUpdate[], objects: Record<string, string>): Promise<void>;
  postReceive(push: PushContext, updates: RefUpdate[]): Promise<void>;
}

/** Largest list of ref lines a hook may send (a push of some 100 000 refs). */
const MAX_HOOK_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The hooks Anvil owns (docs/git-transports.md). `DATA_DIR/hooks` holds a pre-receive and a post-receive script,
 * rewritten at every start; receive-pack runs with `core.hooksPath` pointing there, so hooks inside repository
 * directories never run. Each script is a small node program that posts its ref lines to this server's internal
 * endpoint on loopback. Why a callback rather than a script that opens the database: the rules and effects stay
 * in the running server (one code path for HTTP and SSH, one connection pool, SQLite's single writer, no second
 * start-up per push), and post-receive finishes its updates before git answers the client.
 *
 * The endpoint listens on 127.0.0.1 at a free port. A push is known by a random 256-bit token that exists only
 * while its receive-pack runs and reaches the hook through the environment of that process alone; a request
 * without a live token is refused, so nothing else on the machine can act as a push.
 */
@Injectable()
export class PushHooks implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('PushHooks');
  private readonly pushes = new Map<string, PushContext>();
  private handler: PushHandler | null = null;
  private server: http.Server | null = null;
  private url = '';
  readonly hooksDir: string;

  constructor(storageConfig: StorageConfig) {
    this.hooksDir = path.join(storageConfig.dataDir, 'hooks');
  }

  async onModuleInit(): Promise<void> {
    this.installScripts();
    const server = http.createServer((request, response) => void this.serve(request, response));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** The repositories module registers what pushes do. */
  handle(handler: PushHandler): void {
    this.handler = handler;
  }

  /** What the push about to start may add (PushHandler.allowance); null when nothing caps it. */
  allowance(push: PushContext): Promise<PushAllowance | null> {
    return this.handler ? this.handler.allowance(push) : Promise.resolve(null);
  }

  /**
   * Registers a push about to run; the returned variables go into receive-pack's environment, and `end`
   * forgets the push once the process has exited.
   */
  begin(push: PushContext): { env: Record<string, string>; end(): void } {
    const token = randomBytes(32).toString('hex');
    this.pushes.set(token, push);
    return {
      env: { ANVIL_HOOK_URL: this.url, ANVIL_PUSH_TOKEN: token },
      end: () => this.pushes.delete(token),
    };
  }

  private installScripts(): void {
    fs.mkdirSync(this.hooksDir, { recursive: true });
    const program = path.join(this.hooksDir, 'anvil-hook.js');
    fs.writeFileSync(program, fs.readFileSync(HOOK_PROGRAM_FILE), { mode: 0o644 });
    for (const name of ['pre-receive', 'post-receive']) {
      // git runs under soft memory and CPU limits (git-budget.ts) that node, which reserves a large address
      // space at start, would not start under: the hook lifts them for itself (the hard limits allow it).
      const script = `#!/bin/sh\nulimit -S -v unlimited 2>/dev/null\nulimit -S -t unlimited 2>/dev/null\nexec ${shellQuote(process.execPath)} ${shellQuote(program)} ${name}\n`;
      const file = path.join(this.hooksDir, name);
      fs.writeFileSync(file, script, { mode: 0o755 });
      fs.chmodSync(file, 0o755);
    }
  }

  private async serve(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const answer = (status: number, message = '') => {
      response.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8' });
      response.end(message);
    };
    const hook = request.url === '/pre-receive' ? 'pre' : request.url === '/post-receive' ? 'post' : null;
    const push = this.findPush(request.headers['x-anvil-push']);
    if (request.method !== 'POST' || hook === null || !push || !this.handler) {
      request.resume();
      return answer(403, 'internal error: unknown push');
    }
    let body: string;
    try {
      body = await readText(request, MAX_HOOK_BODY_BYTES);
    } catch {
      return answer(400, 'internal error: unreadable ref updates');
    }
    const updates = parseRefUpdates(body);
    try {
      if (hook === 'pre') await this.handler.preReceive(push, updates, quarantineOf(request.headers));
      else await this.handler.postReceive(push, updates);
      answer(200);
    } catch (error) {
      if (error instanceof PushRefused) return answer(403, error.message);
      this.logger.error(`${hook}-receive failed for repository ${push.repositoryId}: ${(error as Error).stack ?? error}`);
      answer(500, 'internal error');
    }
  }

  private findPush(header: string | string[] | undefined): PushContext | undefined {
    if (typeof header !== 'string' || !/^[0-9a-f]{64}$/.test(header)) return undefined;
    return this.pushes.get(header);
  }
}

/** The quarantine variables a pre-receive hook forwarded (checked by the handler before use). */
const QUARANTINE_VARIABLES = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'];

function quarantineOf(headers: http.IncomingHttpHeaders): Record<string, string> {
  const objects: Record<string, string> = {};
  for (const name of QUARANTINE_VARIABLES) {
    const value = headers[`x-anvil-${name.toLowerCase().replace(/_/g, '-')}`];
    if (typeof value === 'string' && value !== '') objects[name] = decodeURIComponent(value);
  }
  return objects;
}

export function parseRefUpdates(text: string): RefUpdate[] {
  const updates: RefUpdate[] = [];
  for (const line of text.split('\n')) {
    const [oldId, newId, ref] = line.trim().split(' ');
    if (oldId && newId && ref) updates.push({ oldId, newId, ref });
  }
  return updates;
}

/** The all-zero object id: a creation (as old value) or a deletion (as new value). */
export function isZeroId(id: string): boolean {
  return /^0+$/.test(id);
}

function readText(request: http.IncomingMessage, limit: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        request.destroy();
        reject(new Error('too large'));
      } else chunks.push(chunk);
    });
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The hook program (plain CommonJS, run by the server's own node), copied into the hooks directory at start. */
const HOOK_PROGRAM_FILE = path.join(__dirname, 'push-hook.worker.js');
