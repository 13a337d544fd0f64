import { BeforeApplicationShutdown, Injectable, Logger } from '@nestjs/common';
import { GitConfig, MirrorConfig } from '../config/slices';
import { MirrorSyncProcedure, SyncOutcome } from './mirror-sync.procedure';

interface MirrorState {
  phase: 'queued' | 'running';
  /** A request arrived while it ran: exactly one more run follows (not one per request). */
  again: boolean;
  /** When the earliest request this run serves arrived, in milliseconds (see MirrorSyncProcedure.run). */
  requestedAt: number;
  /** When the request that set `again` arrived. */
  againAt: number;
}

/** How long a request waits before claiming again a mirror another process is syncing. */
const BUSY_RETRY_MS = 5_000;

/**
 * The syncs of this process (docs/mirrors.md): at most one per mirror, at most MIRROR_MAX_CONCURRENCY at
 * once, first come first served. A request for a queued mirror is absorbed by it; one for a running mirror
 * queues exactly one more run. Across processes the claim in the database decides (MirrorSyncProcedure).
 */
@Injectable()
export class MirrorRunner implements BeforeApplicationShutdown {
  private readonly logger = new Logger('MirrorRunner');
  private readonly states = new Map<number, MirrorState>();
  private readonly pending: number[] = [];
  private readonly retries = new Set<NodeJS.Timeout>();
  private readonly abort = new AbortController();
  private active = 0;
  private stopping = false;
  private idleWaiters: (() => void)[] = [];
  /** The highest number of syncs that ran at once (reported by the benchmark). */
  peakActive = 0;
  /** Observers of finished syncs (tests and the benchmark wait on these instead of sleeping). */
  private readonly listeners = new Set<(repoId: number, outcome: SyncOutcome) => void>();

  constructor(
    private readonly gitConfig: GitConfig,
    private readonly mirrorConfig: MirrorConfig,
    private readonly procedure: MirrorSyncProcedure,
  ) {}

  /** `requestedAt`: when the request arrived, for one retried after another process's claim. */
  request(repoId: number, requestedAt = Date.now()): void {
    if (this.stopping) return;
    const state = this.states.get(repoId);
    if (state?.phase === 'running') {
      if (!state.again) state.againAt = Date.now();
      state.again = true;
      return;
    }
    if (state) return;
    this.states.set(repoId, { phase: 'queued', again: false, requestedAt, againAt: 0 });
    this.pending.push(repoId);
    this.pump();
  }

  /** Mirrors queued or running here. */
  knownIds(): number[] {
    return [...this.states.keys()];
  }

  get activeCount(): number {
    return this.active;
  }

  onSynced(listener: (repoId: number, outcome: SyncOutcome) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Resolves once nothing is queued or running. */
  whenIdle(): Promise<void> {
    if (this.states.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Shutdown: nothing new starts; running syncs may finish for GIT_DRAIN_TIMEOUT, then their fetches are
   * stopped (an atomic fetch that is stopped changes no ref).
   */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopping = true;
    for (const timer of this.retries) clearTimeout(timer);
    for (const repoId of this.pending.splice(0)) this.states.delete(repoId);
    if (this.active === 0) return;
    this.logger.log(`waiting for ${this.active} mirror sync(s) to finish`);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), this.gitConfig.drainTimeoutMs);
    });
    if ((await Promise.race([this.whenIdle(), timeout])) === 'timeout') {
      this.logger.warn(`stopping ${this.active} mirror sync(s) still running at shutdown`);
      this.abort.abort();
      await this.whenIdle();
    }
    clearTimeout(timer);
  }

  private pump(): void {
    while (this.active < this.mirrorConfig.maxConcurrency && this.pending.length > 0) {
      const repoId = this.pending.shift()!;
      this.active += 1;
      this.peakActive = Math.max(this.peakActive, this.active);
      void this.runOne(repoId);
    }
  }

  private async runOne(repoId: number): Promise<void> {
    const state = this.states.get(repoId)!;
    state.phase = 'running';
    let outcome: SyncOutcome;
    try {
      outcome = await this.procedure.run(repoId, this.abort.signal, state.requestedAt);
    } catch (error) {
      this.logger.error(`mirror sync of repository ${repoId} failed: ${(error as Error).message}`);
      outcome = 'failed';
    }
    this.active -= 1;
    if (outcome === 'busy' && !this.stopping) {
      // Another process holds the claim: this request is served after its run.
      this.states.delete(repoId);
      const timer = setTimeout(() => {
        this.retries.delete(timer);
        this.request(repoId, state.requestedAt);
      }, BUSY_RETRY_MS);
      timer.unref();
      this.retries.add(timer);
    } else if (state.again && !this.stopping) {
      state.phase = 'queued';
      state.again = false;
      state.requestedAt = state.againAt;
      this.pending.push(repoId);
    } else {
      this.states.delete(repoId);
    }
    for (const listener of this.listeners) listener(repoId, outcome);
    this.pump();
    if (this.states.size === 0) for (const resolve of this.idleWaiters.splice(0)) resolve();
  }
}
