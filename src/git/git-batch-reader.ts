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
  /** For a request of several objects (`contentsOf`): how many, and the answers so far, in order. */
  count?: number;
  answers?: (BatchObject | null)[];
  timer: NodeJS.Timeout;
  resolve(answer: BatchObject | null | (BatchObject | null)[]): void;
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
  /** What git wrote and was not consumed yet: the first chunk from `start` on, then the others whole. */
  private readonly chunks: Buffer[] = [];
  private start = 0;
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

  /**
   * The objects `names` name with their bytes (null where there is none), in order: one request with one time
   * limit, written at once and followed by `flush`, so that git starts answering while later requests are still
   * being written. For walks over many objects, where a promise and a timer per object would cost more than git's
   * own reading.
   */
  contentsOf(names: string[]): Promise<(BatchObject | null)[]> {
    if (names.length === 0) return Promise.resolve([]);
    if (!names.every(isBatchName)) return Promise.reject(new GitError(['cat-file'], null, '', 'not an object name git can read in batch mode'));
    return this.enqueue('contents', names.map((name) => `contents ${name}\n`).join('') + 'flush\n', names.length) as Promise<(BatchObject | null)[]>;
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
    return this.enqueue(kind, `${kind} ${name}\n`) as Promise<BatchObject | null>;
  }

  /** Writes `lines` (the requests of one pending answer: one object, or `count` of them) and waits for it. */
  private enqueue(kind: 'info' | 'contents', lines: string, count?: number): Promise<BatchObject | null | (BatchObject | null)[]> {
    if (!this.usable) return Promise.reject(new ReaderStoppedError('the batch reader has stopped'));
    this.lastUsed = this.now();
    return new Promise((resolve, reject) => {
      const args = ['cat-file', '--batch-command', kind];
      const timer = setTimeout(() => {
        // A late answer would desynchronise every later one: the process goes, with all that is in flight.
        this.fail(new GitTimeoutError(args, this.timeoutMs));
        this.kill();
      }, this.timeoutMs);
      this.queue.push({ args, kind, timer, resolve, reject, count, answers: count === undefined ? undefined : [] });
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
      this.child.stdin.write(lines);
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
        const line = this.takeLine();
        if (line === undefined) return;
        const header = parseHeader(line);
        if (header === null || head.kind === 'info') {
          this.answer(head, header);
          continue;
        }
        head.header = header;
      }
      // The contents, then one line feed.
      const object = head.header;
      if (this.buffered < object.size + 1) return;
      object.content = this.take(object.size + 1, object.size);
      head.header = undefined;
      this.answer(head, object);
    }
    if (this.buffered > 0) throw new GitError(['cat-file'], null, '', 'git cat-file answered more than was asked');
  }

  /** One object of `head` answered: `head` is settled when that was its last. */
  private answer(head: Pending, object: BatchObject | null): void {
    if (head.answers === undefined) return this.settle(object);
    head.answers.push(object);
    if (head.answers.length === head.count) this.settle(head.answers);
  }

  private settle(answer: BatchObject | null | (BatchObject | null)[]): void {
    const head = this.queue.shift();
    if (!head) return;
    clearTimeout(head.timer);
    this.lastUsed = this.now();
    head.resolve(answer);
    if (this.retired && this.queue.length === 0) this.kill();
  }

  private fail(error: Error): void {
    for (const pending of this.queue.splice(0)) {
      clearTimeout(pending.timer);
      pending.reject(error);
    }
  }

  /** The next line (without its line feed), when all of it has arrived. */
  private takeLine(): string | undefined {
    const first = this.chunks[0];
    if (first === undefined) return undefined;
    // Header lines are ASCII (a name git reports missing is only tested for its ending).
    const newline = first.indexOf(0x0a, this.start);
    if (newline >= 0) {
      const line = first.toString('latin1', this.start, newline);
      this.consume(newline + 1 - this.start);
      return line;
    }
    let offset = first.length - this.start;
    for (const chunk of this.chunks.slice(1)) {
      const index = chunk.indexOf(0x0a);
      if (index >= 0) return this.take(offset + index + 1, offset + index).toString('latin1');
      offset += chunk.length;
    }
    return undefined;
  }

  /** Removes the first `count` bytes of what was received (count <= buffered) and returns the first `keep`. */
  private take(count: number, keep = count): Buffer {
    const first = this.chunks[0];
    if (first.length - this.start >= count) {
      const bytes = first.subarray(this.start, this.start + keep);
      this.consume(count);
      return bytes;
    }
    const whole = Buffer.allocUnsafe(count);
    let copied = 0;
    while (copied < count) {
      const chunk = this.chunks[0];
      const length = Math.min(chunk.length - this.start, count - copied);
      chunk.copy(whole, copied, this.start, this.start + length);
      copied += length;
      this.consume(length);
    }
    return whole.subarray(0, keep);
  }

  /** Drops `count` bytes of the first chunk (at most what is left of it). */
  private consume(count: number): void {
    this.start += count;
    this.buffered -= count;
    if (this.start === this.chunks[0].length) {
      this.chunks.shift();
      this.start = 0;
    }
  }
}

/** `<oid> <type> <size>`, or null for `<name> missing` / `<name> ambiguous`. */
function parseHeader(line: string): BatchObject | null {
  if (line.endsWith(' missing') || line.endsWith(' ambiguous')) return null;
  const match = /^([0-9a-f]{40}|[0-9a-f]{64}) ([a-z]+) (\d+)$/.exec(line);
  if (!match) throw new GitError(['cat-file'], null, line, 'git cat-file answered an unexpected line');
  return { oid: match[1], type: match[2], size: Number(match[3]) };
}
