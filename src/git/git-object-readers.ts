import { Injectable, OnApplicationShutdown } from '@nestjs/common';
import { GitConfig } from '../config/slices';
import { BATCH_READER_ARGS, BatchReader } from './git-batch-reader';
import { GitCommand } from './git-command';
import { GitProcesses } from './git-processes';

/** How long an unused reader stays; reaped after that (and sooner when a slot is wanted). */
export const READER_IDLE_MS = 60_000;
/** Readers of one repository: a second one starts when the first has requests waiting. */
export const READERS_PER_REPOSITORY = 2;
/** An idle reader gives its slot to a waiting command only after this long unused (no stop-start churn). */
export const RECLAIM_AFTER_MS = 1_000;
/** The time limit of each request, as for any git command (git-command.ts). */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * A small pool of long-lived `git cat-file --batch-command` processes (git-batch-reader.ts), at most
 * READERS_PER_REPOSITORY per repository and half of GIT_MAX_PROCESSES in all, each holding one slot of the
 * process cap for as long as it runs. The least recently used give way when the pool is full; idle ones are
 * stopped after READER_IDLE_MS, or when a clone, push or other git command would have to wait for a slot and
 * they have been unused for RECLAIM_AFTER_MS (half the cap at least is always left to commands).
 * A reader that died is replaced on the next request. Callers must not hold a slot while they ask for a reader
 * (a reader may itself wait for one).
 */
@Injectable()
export class GitObjectReaders implements OnApplicationShutdown {
  /** Readers by repository directory. */
  private readonly readers = new Map<string, BatchReader[]>();
  private starting = 0;
  /** Readers being started, by repository directory. */
  private readonly startingFor = new Map<string, Promise<BatchReader>[]>();
  private closed = false;
  private readonly reaper: NodeJS.Timeout;
  /** The pool's clock; tests replace it. */
  now: () => number = Date.now;

  constructor(
    private readonly gitConfig: GitConfig,
    private readonly git: GitCommand,
    private readonly processes: GitProcesses,
  ) {
    processes.onSlotWanted(() => this.stopLeastRecentlyUsedIdle(undefined, RECLAIM_AFTER_MS));
    this.reaper = setInterval(() => this.reapIdle(), READER_IDLE_MS / 2);
    this.reaper.unref();
  }

  /** Readers allowed at once. */
  get capacity(): number {
    return Math.max(1, Math.floor(this.gitConfig.maxProcesses / 2));
  }

  /** Readers running now. */
  get runningCount(): number {
    let count = 0;
    for (const list of this.readers.values()) count += list.length;
    return count;
  }

  /** A reader of the repository at `dir`: a running one, or a new one (GitBusyError when no slot frees in time). */
  async reader(dir: string): Promise<BatchReader> {
    const usable = (this.readers.get(dir) ?? []).filter((reader) => reader.usable);
    const least = usable.reduce<BatchReader | undefined>((best, reader) => (!best || reader.pendingCount < best.pendingCount ? reader : best), undefined);
    if (least && least.pendingCount === 0) return least;
    // Callers arriving together share the readers being started rather than each starting one.
    const starting = this.startingFor.get(dir) ?? [];
    const full = this.runningCount + this.starting >= this.capacity;
    const mayStart = usable.length + starting.length < READERS_PER_REPOSITORY && (!full || this.stopLeastRecentlyUsedIdle(dir));
    if (!mayStart) {
      if (least) return least;
      if (starting.length > 0) return starting[0];
      // Every reader is busy with other repositories: the least busy of them makes way once it is done.
      if (full) this.retireLeastBusy(dir);
    }
    const started = this.start(dir);
    this.startingFor.set(dir, [...starting, started]);
    const done = () => {
      const rest = (this.startingFor.get(dir) ?? []).filter((other) => other !== started);
      if (rest.length > 0) this.startingFor.set(dir, rest);
      else this.startingFor.delete(dir);
    };
    started.then(done, done);
    return started;
  }

  /** Stops the readers unused for READER_IDLE_MS; answers how many. */
  reapIdle(now = this.now()): number {
    let stopped = 0;
    for (const list of this.readers.values()) {
      for (const reader of list) {
        if (reader.usable && reader.pendingCount === 0 && now - reader.lastUsedAt >= READER_IDLE_MS) {
          reader.kill();
          stopped++;
        }
      }
    }
    return stopped;
  }

  /** Stops every reader of one repository (deleted, renamed, or replaced on disk). */
  forget(dir: string): void {
    for (const reader of this.readers.get(dir) ?? []) reader.retire();
  }

  onApplicationShutdown(): void {
    this.closed = true;
    clearInterval(this.reaper);
    for (const list of this.readers.values()) for (const reader of list) reader.kill();
  }

  private async start(dir: string): Promise<BatchReader> {
    this.starting++;
    let release: () => void;
    try {
      release = await this.processes.reserveSlot();
    } finally {
      this.starting--;
    }
    if (this.closed) {
      release();
      throw new Error('the server is shutting down');
    }
    let reader: BatchReader;
    try {
      reader = new BatchReader(await this.git.startSession([...BATCH_READER_ARGS], { gitDir: dir }), REQUEST_TIMEOUT_MS, () => this.now());
    } catch (error) {
      release();
      throw error;
    }
    const list = this.readers.get(dir) ?? [];
    list.push(reader);
    this.readers.set(dir, list);
    // The server began shutting down while git started: this reader was not among those stopped.
    if (this.closed) reader.kill();
    void reader.exited.then(() => {
      release();
      const remaining = (this.readers.get(dir) ?? []).filter((other) => other !== reader);
      if (remaining.length > 0) this.readers.set(dir, remaining);
      else this.readers.delete(dir);
    });
    return reader;
  }

  /** Stops the idle reader used longest ago (not one of `keep`'s, unused for `idleFor`); false when there is none. */
  private stopLeastRecentlyUsedIdle(keep?: string, idleFor = 0): boolean {
    let oldest: BatchReader | undefined;
    const now = this.now();
    for (const [dir, list] of this.readers) {
      if (dir === keep) continue;
      for (const reader of list) {
        if (!reader.usable || reader.pendingCount > 0 || now - reader.lastUsedAt < idleFor) continue;
        if (!oldest || reader.lastUsedAt < oldest.lastUsedAt) oldest = reader;
      }
    }
    oldest?.kill();
    return oldest !== undefined;
  }

  /** Every reader is busy: the least busy of another repository stops once its requests are answered. */
  private retireLeastBusy(keep: string): void {
    let least: BatchReader | undefined;
    for (const [dir, list] of this.readers) {
      if (dir === keep) continue;
      for (const reader of list) if (reader.usable && (!least || reader.pendingCount < least.pendingCount)) least = reader;
    }
    least?.retire();
  }
}
