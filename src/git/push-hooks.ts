import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as path from 'node:path';
import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { StorageConfig } from '../config/slices';
import { LifecycleEvents } from '../events/lifecycle-events';

/** Who pushes where: what the hooks of one receive-pack act on. */
export interface PushContext {
  repositoryId: number;
  pusherId: number;
  /** The SSH key used, when the push came over SSH. */
  keyId?: number;
  /** Set when the server itself publishes a pull request's merge: the rules of merging apply, not of pushing. */
  pullRequestId?: number;
  /** Pushed with a deploy key (then `pusherId` is the repository's owner, whom the key acts for). */
  deployKey?: boolean;
  /**
   * The pusher does not write the code and was let in as a maintainer of a pull request's head branch: pre-receive
   * judges each ref by that rule (src/access/maintainer-pushes.ts).
   */
  asMaintainer?: boolean;
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

/** Where the hooks look for bash (docs/git-transports.md: without it they post with curl). */
const BASH_PATHS = ['/bin/bash', '/usr/bin/bash'];

/** Largest list of ref lines a hook may send (a push of some 100 000 refs). */
const MAX_HOOK_BODY_BYTES = 16 * 1024 * 1024;

/**
 * The hooks Anvil owns (docs/git-transports.md). `DATA_DIR/hooks` holds a pre-receive and a post-receive script,
 * rewritten at every start; receive-pack runs with `core.hooksPath` pointing there, so hooks inside repository
 * directories never run. Each script is a few lines of shell that post git's quarantine variables and ref lines to
 * this server's internal endpoint on loopback with curl (a node program when curl is missing: a node start costs a
 * push some 150 ms, curl a few). Why a callback rather than a script that opens the database: the rules and
 * effects stay in the running server (one code path for HTTP and SSH, one connection pool, SQLite's single writer,
 * no second start-up per push), and post-receive finishes its updates before git answers the client.
 *
 * The endpoint listens on 127.0.0.1 at a free port. A push is known by a random 256-bit token that exists only
 * while its receive-pack runs and reaches the hook through the environment of that process alone; a request
 * without a live token is refused, so nothing else on the machine can act as a push.
 */
@Injectable()
export class PushHooks implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger('PushHooks');
  private readonly pushes = new Map<string, PushContext>();
  /** Called once no push runs here (afterPushes). */
  private readonly whenNoPush = new Set<() => void>();
  private server: http.Server | null = null;
  private url = '';
  private port = 0;
  readonly hooksDir: string;

  constructor(
    storageConfig: StorageConfig,
    private readonly events: LifecycleEvents,
  ) {
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
    this.port = (server.address() as AddressInfo).port;
    this.url = `http://127.0.0.1:${this.port}/`;
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /**
   * What the push about to start may add (the `push.starting` subscriber: the owner's remaining quota); null
   * when nothing caps it.
   */
  async allowance(push: PushContext): Promise<PushAllowance | null> {
    const [allowance] = await this.events.emit('push.starting', push);
    return allowance ?? null;
  }

  /**
   * Registers a push about to run; the returned variables go into receive-pack's environment, and `end`
   * forgets the push once the process has exited.
   */
  begin(push: PushContext): { env: Record<string, string>; end(): void } {
    const token = randomBytes(32).toString('hex');
    this.pushes.set(token, push);
    return {
      env: { ANVIL_HOOK_URL: this.url, ANVIL_HOOK_PORT: String(this.port), ANVIL_PUSH_TOKEN: token },
      end: () => {
        this.pushes.delete(token);
        if (this.pushes.size > 0) return;
        const waiting = [...this.whenNoPush];
        this.whenNoPush.clear();
        for (const then of waiting) then();
      },
    };
  }

  /** Calls `then` once no receive-pack of this process runs (at once when none does); once per function. */
  afterPushes(then: () => void): void {
    if (this.pushes.size === 0) then();
    else this.whenNoPush.add(then);
  }

  private installScripts(): void {
    fs.mkdirSync(this.hooksDir, { recursive: true });
    const program = path.join(this.hooksDir, 'anvil-hook.js');
    const bash = BASH_PATHS.find((file) => fs.existsSync(file));
    fs.writeFileSync(program, fs.readFileSync(HOOK_PROGRAM_FILE), { mode: 0o644 });
    for (const name of ['pre-receive', 'post-receive']) {
      const file = path.join(this.hooksDir, name);
      fs.writeFileSync(file, hookScript(name, process.execPath, program, bash), { mode: 0o755 });
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
    // What pushes do is the `push.*` subscribers' (the repositories module's, src/events/subscribers.ts).
    if (request.method !== 'POST' || hook === null || !push || !this.events.heard('push.pre-receive')) {
      request.resume();
      return answer(403, 'internal error: unknown push');
    }
    let body: Buffer;
    try {
      body = await readBody(request, MAX_HOOK_BODY_BYTES);
    } catch {
      return answer(400, 'internal error: unreadable ref updates');
    }
    const message = parseHookBody(body);
    if (!message) return answer(400, 'internal error: unreadable ref updates');
    const updates = parseRefUpdates(message.refLines);
    try {
      // pre-receive throws PushRefused to decline the whole push. `objects` are git's quarantine variables: run
      // with them, git sees the objects the push brought, which stay out of the repository until it is accepted.
      await this.events.emit(hook === 'pre' ? 'push.pre-receive' : 'push.post-receive', { push, updates, objects: message.objects });
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

/** The quarantine variables a hook forwards (checked by the handler before use), in the order it sends them. */
const QUARANTINE_VARIABLES = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'] as const;

/**
 * What a hook posts: each quarantine variable's value ended by a NUL byte (which no environment value contains,
 * so any path passes byte for byte), then git's ref lines. Null when the three values are not there.
 */
export function parseHookBody(body: Buffer): { objects: Record<string, string>; refLines: string } | null {
  const objects: Record<string, string> = {};
  let offset = 0;
  for (const name of QUARANTINE_VARIABLES) {
    const end = body.indexOf(0, offset);
    if (end < 0) return null;
    const value = body.toString('utf8', offset, end);
    if (value !== '') objects[name] = value;
    offset = end + 1;
  }
  return { objects, refLines: body.toString('utf8', offset) };
}

/**
 * The pre-receive or post-receive script. Where bash is installed, bash itself speaks HTTP/1.0 to the push's
 * endpoint through its `/dev/tcp` redirection, so an ordinary push starts no process for its hooks beyond the
 * shell (a curl start alone costs a hook some 14 ms, a node start some 150). Elsewhere, or where bash lacks
 * network redirections, curl posts the body (parseHookBody), and without curl the node program does. Each prints
 * a refusal as `Anvil: <message>`. All first lift the soft memory and CPU limits git runs under (git-budget.ts),
 * which node, reserving a large address space at start, would not start under (the hard limits allow it).
 */
export function hookScript(name: string, node: string, program: string, bash?: string): string {
  const fallback = [
    'if ! command -v curl >/dev/null 2>&1; then',
    bash
      ? `  printf '%s\\n' "$refs" | ${shellQuote(node)} ${shellQuote(program)} ${name}; exit $?`
      : `  exec ${shellQuote(node)} ${shellQuote(program)} ${name}`,
    'fi',
    bash
      ? 'answer=$(printf \'%s\\000%s\\000%s\\000%s\\n\' "$GIT_OBJECT_DIRECTORY" "$GIT_ALTERNATE_OBJECT_DIRECTORIES" "$GIT_QUARANTINE_PATH" "$refs" |'
      : 'answer=$( { printf \'%s\\000%s\\000%s\\000\' "$GIT_OBJECT_DIRECTORY" "$GIT_ALTERNATE_OBJECT_DIRECTORIES" "$GIT_QUARANTINE_PATH"; cat; } |',
    // The token goes to curl through a here-document, never its arguments, which every local user can list.
    `  curl -s --fail-with-body --noproxy '*' -H 'Expect:' -H 'Content-Type: application/octet-stream' -H @/dev/fd/3 --data-binary @- "\${ANVIL_HOOK_URL}${name}" 3<<EOF`,
    'X-Anvil-Push: $ANVIL_PUSH_TOKEN',
    'EOF',
    ')',
    'status=$?',
    '[ "$status" -eq 0 ] && exit 0',
    '[ "$status" -eq 22 ] || answer="internal error: the server did not answer the hook"',
    'printf \'Anvil: %s\\n\' "${answer:-internal error}" >&2',
    'exit 1',
  ];
  const lines = [
    `#!${bash ?? '/bin/sh'}`,
    '# Written by Anvil at start-up; edits are lost.',
    'ulimit -S -v unlimited 2>/dev/null',
    'ulimit -S -t unlimited 2>/dev/null',
    'if [ -z "$ANVIL_HOOK_URL" ] || [ -z "$ANVIL_PUSH_TOKEN" ]; then',
    "  echo 'Anvil: this hook runs only for pushes served by Anvil' >&2",
    '  exit 1',
    'fi',
  ];
  if (!bash) return [...lines, ...fallback, ''].join('\n');
  return [
    ...lines,
    // Lengths in bytes. The builtin `read` takes a pipe a byte at a time: fine for the few lines of an ordinary
    // push; a longer list (a mirror's thousands of refs) is read whole by cat.
    'export LC_ALL=C',
    "IFS= read -r -d '' -N 65536 refs",
    '[ "${#refs}" -lt 65536 ] || refs+=$(cat)',
    'a=$GIT_OBJECT_DIRECTORY b=$GIT_ALTERNATE_OBJECT_DIRECTORIES c=$GIT_QUARANTINE_PATH',
    'if [ -n "$ANVIL_HOOK_PORT" ] && { exec 3<>"/dev/tcp/127.0.0.1/$ANVIL_HOOK_PORT"; } 2>/dev/null; then',
    // HTTP/1.0: the answer comes without chunks and ends when the server closes the connection.
    `  printf 'POST /${name} HTTP/1.0\\r\\nX-Anvil-Push: %s\\r\\nContent-Type: application/octet-stream\\r\\nContent-Length: %d\\r\\n\\r\\n%s\\000%s\\000%s\\000%s\\n' \\`,
    '    "$ANVIL_PUSH_TOKEN" $(( ${#a} + ${#b} + ${#c} + ${#refs} + 4 )) "$a" "$b" "$c" "$refs" >&3',
    "  IFS=' ' read -r _ status _ <&3",
    '  while IFS= read -r line <&3 && [ -n "${line%$\'\\r\'}" ]; do :; done',
    "  IFS= read -r -d '' answer <&3",
    '  [ "$status" = 200 ] && exit 0',
    '  [ -n "$status" ] || answer="internal error: the server did not answer the hook"',
    '  printf \'Anvil: %s\\n\' "${answer:-internal error}" >&2',
    '  exit 1',
    'fi',
    ...fallback,
    '',
  ].join('\n');
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

function readBody(request: http.IncomingMessage, limit: number): Promise<Buffer> {
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
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function shellQuote(text: string): string {
  return `'${text.replace(/'/g, `'\\''`)}'`;
}

/** The hook program (plain CommonJS, run by the server's own node), copied into the hooks directory at start. */
const HOOK_PROGRAM_FILE = path.join(__dirname, 'push-hook.worker.js');
