import { GitError, GitTimeoutError } from './git-command';
import type { GitChildProcess } from './spawn-git';

/** An object as `git cat-file --batch-command` describes it; `content` only for `contents` requests. */
export interface BatchObject {
  oid: string;
  type: string;
  size: number;
  content?: Buffer;
}

interface Pending {
  args: string[];
  kind: 'info' | 'contents';
  header?: BatchObject;
  timer: NodeJS.Timeout;
  resolve(object: BatchObject | null): void;
  reject(error: Error): void;
}

/**
 * The reader stopped (killed as idle, replaced, crashed) before it answered: nothing is wrong with the request,
 * which a new reader can answer (GitObjects asks again once).
 */
export class ReaderStoppedError extends GitError {
  constructor(message: string, exitCode: number | null = null) {
    super(['cat-file', '--batch-command'], exitCode, '', message);
    this.name = 'ReaderStoppedError';
  }
}

/**
 * How a reader's git is started. With `--buffer`, git keeps its answers until it reads `flush`, which the reader
 * writes after the requests of each turn of the event loop: the answers to one turn's requests come back in one
 * write, not one write (and one wake-up of the server) each.
 */
export const BATCH_READER_ARGS: readonly string[] = ['cat-file', '--batch-command', '--buffer'];

/** Object names are written one per line: no line breaks or other control characters, never empty. */
function isBatchName(name: string): boolean {
  return name !== '' && !/[\x00-\x1f\x7f]/.test(name);
}

/**
 * One long-lived `git cat-file --batch-command` for one repository: requests are written to its standard input
 * in order and its answers read back in the same order, so several callers can have requests in flight at once
 * (git answers them one after the other). Every request has the time limit of the git module: when an answer is
 * late, the process is killed and everything in flight fails with GitTimeoutError. A process that exits (killed,
 * crashed) fails what is in flight with GitError; its owner (GitObjectReaders) starts a new one for later requests.
 */
export class BatchReader {
  /** Settles once the process has exited, whatever the reason. */
  readonly exited: Promise<void>;
  private readonly queue: Pending[] = [];
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private retired = false;
  private corked = false;
  private lastUsed: number;

  constructor(
    private readonly child: GitChildProcess,
    private readonly timeoutMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lastUsed = now();
    child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    // A batch process writes to stderr only on errors; drained so that it can never block on a full pipe.
    child.stderr.on('data', () => undefined);
    child.stdin.on('error', () => undefined);
    this.exited = new Promise((resolve) => {
      child.on('error', () => {
        this.ended = true;
        this.fail(new ReaderStoppedError('git cat-file could not be started'));
        resolve();
      });
      child.on('close', (code: number | null) => {
        this.ended = true;
        this.fail(new ReaderStoppedError(`git cat-file --batch-command exited (${code ?? 'killed'})`, code));
        resolve();
      });
    });
  }

  /** Still able to answer: running and not retired. */
  get usable(): boolean {
    return !this.ended && !this.retired;
  }

  /** Requests written and not answered yet. */
  get pendingCount(): number {
    return this.queue.length;
  }

  /** When the last request was made or answered (the pool's clock). */
  get lastUsedAt(): number {
    return this.lastUsed;
  }

  /** The type, id and size of the object `name` names, or null when there is none. */
  info(name: string): Promise<BatchObject | null> {
    return this.request('info', name);
  }

  /** The object `name` names with its bytes, or null when there is none. Callers check its size first (`info`). */
  contents(name: string): Promise<BatchObject | null> {
    return this.request('contents', name);
  }

  /** Takes no more requests and stops once those in flight are answered. */
  retire(): void {
    this.retired = true;
    if (this.queue.length === 0) this.kill();
  }

  kill(): void {
    this.retired = true;
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }

  private request(kind: 'info' | 'contents', name: string): Promise<BatchObject | null> {
    if (!isBatchName(name)) return Promise.reject(new GitError(['cat-file'], null, '', 'not an object name git can read in batch mode'));
    if (!this.usable) return Promise.reject(new ReaderStoppedError('the batch reader has stopped'));
    this.lastUsed = this.now();
    return new Promise<BatchObject | null>((resolve, reject) => {
      const args = ['cat-file', '--batch-command', kind];
      const timer = setTimeout(() => {
        // A late answer would desynchronise every later one: the process goes, with all that is in flight.
        this.fail(new GitTimeoutError(args, this.timeoutMs));
        this.kill();
      }, this.timeoutMs);
      this.queue.push({ args, kind, timer, resolve, reject });
      // Requests made in the same tick (a ref's candidates, a tree and an entry, other requests' reads) go to git
      // in one write, ended by `flush`: git answers them all in one write (BATCH_READER_ARGS).
      if (!this.corked) {
        this.corked = true;
        this.child.stdin.cork();
        process.nextTick(() => {
          this.corked = false;
          this.child.stdin.write('flush\n');
          this.child.stdin.uncork();
        });
      }
      this.child.stdin.write(`${kind} ${name}\n`);
    });
  }

  private receive(chunk: Buffer): void {
    // What a killed process still wrote belongs to requests that have failed already.
    if (this.retired && this.queue.length === 0) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    try {
      this.drain();
    } catch (error) {
      this.fail(error as Error);
      this.kill();
    }
  }

  /** Settles every request whose whole answer has arrived, in order. */
  private drain(): void {
    while (this.queue.length > 0) {
      const head = this.queue[0];
      if (head.header === undefined) {
        const newline = this.newlineIndex();
        if (newline < 0) return;
        const header = parseHeader(this.take(newline + 1).toString('utf8', 0, newline));
        if (header === null || head.kind === 'info') {
          this.settle(header);
          continue;
        }
        head.header = header;
      }
      // The contents, then one line feed.
      if (this.buffered < head.header.size + 1) return;
      const body = this.take(head.header.size + 1);
      this.settle({ ...head.header, content: body.subarray(0, head.header.size) });
    }
    if (this.buffered > 0) throw new GitError(['cat-file'], null, '', 'git cat-file answered more than was asked');
  }

  private settle(object: BatchObject | null): void {
    const head = this.queue.shift();
    if (!head) return;
    clearTimeout(head.timer);
    this.lastUsed = this.now();
    head.resolve(object);
    if (this.retired && this.queue.length === 0) this.kill();
  }

  private fail(error: Error): void {
    for (const pending of this.queue.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
  }

  private newlineIndex(): number {
    let offset = 0;
    for (const chunk of this.chunks) {
      const index = chunk.indexOf(0x0a);
      if (index >= 0) return offset + index;
      offset += chunk.length;
    }
    return -1;
  }

  /** Removes the first `count` bytes of what was received (count <= buffered). */
  private take(count: number): Buffer {
    this.buffered -= count;
    const first = this.chunks[0];
    if (first.length >= count) {
      if (first.length === count) this.chunks.shift();
      else this.chunks[0] = first.subarray(count);
      return first.subarray(0, count);
    }
    const parts: Buffer[] = [];
    let needed = count;
    while (needed > 0) {
      const chunk = this.chunks[0];
      if (chunk.length <= needed) {
        parts.push(chunk);
        this.chunks.shift();
        needed -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, needed));
        this.chunks[0] = chunk.subarray(needed);
        needed = 0;
      }
    }
    return Buffer.concat(parts, count);
  }
}

/** `<oid> <type> <size>`, or null for `<name> missing` / `<name> ambiguous`. */
function parseHeader(line: string): BatchObject | null {
  if (line.endsWith(' missing') || line.endsWith(' ambiguous')) return null;
  const match = /^([0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) (\d+)$/.exec(line);
  if (!match) throw new GitError(['cat-file'], null, line, 'git cat-file answered an unexpected line');
  return { oid: match[1], type: match[2], size: Number(match[3]) };
}
