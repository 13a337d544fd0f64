import { Worker } from 'node:worker_threads';
import { threadCpuMs } from './thread-cpu';

export interface RenderPoolOptions {
  /**
   * The worker script: an ES module that posts `{ready: true, threadId?}` once loaded, then answers `{id, html}` or
   * `{id, error}` to each `{id, text, options}`.
   */
  workerFile: string;
  /** Number of workers, started when jobs wait for them. */
  size: number;
  /**
   * Longest a job may run on a worker, unless the job says otherwise; the worker is then ended and replaced.
   * Counted in the worker thread's CPU time when the worker reports its thread id (Linux), else wall-clock time.
   */
  timeoutMs: number;
  /** Longest a job may wait for a busy worker; time spent while workers start does not count. */
  queueTimeoutMs: number;
  /** Jobs allowed to wait; more are refused at once. */
  maxQueued: number;
  /** V8 heap limits of each worker: a document that needs more fails alone. */
  resourceLimits?: { maxOldGenerationSizeMb?: number; maxYoungGenerationSizeMb?: number };
}

/** The rendered HTML would exceed the output cap; the worker checked before handing it over. */
export class RenderOutputTooLarge extends Error {
  constructor() {
    super('the rendered document is too large');
    this.name = 'RenderOutputTooLarge';
  }
}

/** A render that failed, timed out or could not be queued; the HTTP layer answers 500. */
export class RenderFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RenderFailure';
  }
}

interface Job {
  id: number;
  payload: Record<string, unknown>;
  timeoutMs: number;
  resolve(html: string): void;
  reject(error: Error): void;
  queueTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  /** Loaded and listening; a job's time starts only then, so start-up never counts against it. */
  ready: boolean;
  /** The worker's OS thread, when it reported one: jobs are then budgeted in its CPU time. */
  threadId?: number;
  job?: Job;
  timer?: NodeJS.Timeout;
}

type WorkerMessage = { ready: true; threadId?: number } | { id: number; html?: string; error?: string };

/** How often a running job's CPU time is looked at. */
const CPU_CHECK_MS = 50;
/** A job budgeted in CPU time still ends after this many times its budget in wall-clock time. */
const WALL_CLOCK_CEILING = 10;

/**
 * A small pool of worker threads that render documents off the main thread, so a large or hostile document
 * never holds up other requests. A job that runs too long, or a worker that dies (out of memory, crash),
 * fails that job alone: the worker is ended and a fresh one takes its place. A worker that cannot even start
 * fails the waiting jobs instead of being restarted in a loop.
 */
export class RenderPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(private readonly options: RenderPoolOptions) {}

  /** For metrics: workers started, workers rendering, jobs waiting. */
  stats(): { workers: number; busy: number; queued: number } {
    return { workers: this.slots.length, busy: this.slots.filter((slot) => slot.job !== undefined).length, queued: this.queue.length };
  }

  render(text: string, renderOptions: unknown, timeoutMs = this.options.timeoutMs, maxOutputLength?: number): Promise<string> {
    if (this.closed) return Promise.reject(new RenderFailure('the markdown renderer is shut down'));
    if (this.queue.length >= this.options.maxQueued) {
      return Promise.reject(new RenderFailure('the markdown renderer is busy'));
    }
    return new Promise<string>((resolve, reject) => {
      const job: Job = { id: this.nextId++, payload: { text, options: renderOptions, maxOutputLength }, timeoutMs, resolve, reject };
      this.startQueueTimer(job);
      this.queue.push(job);
      this.dispatch();
    });
  }

  /**
   * A job waits at most queueTimeoutMs for a busy worker. While a worker is still starting, the wait is for
   * start-up, which a loaded machine can stretch arbitrarily; the timer starts again instead (a worker that
   * cannot start fails the waiting jobs itself).
   */
  private startQueueTimer(job: Job): void {
    job.queueTimer = setTimeout(() => {
      if (this.slots.some((slot) => !slot.ready)) return this.startQueueTimer(job);
      this.unqueue(job);
      job.reject(new RenderFailure('the markdown renderer is busy'));
    }, this.options.queueTimeoutMs);
    job.queueTimer.unref();
  }

  /** Ends every worker and fails the jobs still waiting or running. */
  async close(): Promise<void> {
    this.closed = true;
    this.failQueued(new RenderFailure('the markdown renderer is shut down'));
    const slots = this.slots.splice(0);
    for (const slot of slots) this.fail(slot, new RenderFailure('the markdown renderer is shut down'));
    await Promise.all(slots.map((slot) => slot.worker.terminate()));
  }

  /** Hands waiting jobs to idle workers, and starts workers for the jobs still waiting. */
  private dispatch(): void {
    if (this.closed) return;
    for (let slot = this.idle(); slot && this.queue.length > 0; slot = this.idle()) {
      const job = this.queue.shift()!;
      clearTimeout(job.queueTimer);
      this.run(slot, job);
    }
    const starting = this.slots.filter((slot) => !slot.ready).length;
    const wanted = Math.min(this.queue.length - starting, this.options.size - this.slots.length);
    for (let count = 0; count < wanted; count++) this.spawn();
  }

  private idle(): Slot | undefined {
    return this.slots.find((slot) => slot.ready && slot.job === undefined);
  }

  private run(slot: Slot, job: Job): void {
    slot.job = job;
    const overBudget = () => {
      this.fail(slot, new RenderFailure(`markdown rendering took longer than ${job.timeoutMs} ms`));
      this.drop(slot);
    };
    const cpuAtStart = slot.threadId === undefined ? undefined : threadCpuMs(slot.threadId);
    if (cpuAtStart === undefined) {
      slot.timer = setTimeout(overBudget, job.timeoutMs);
    } else {
      // CPU time, so that a loaded machine does not fail jobs that would pass on an idle one; a wall-clock
      // ceiling still ends a job whose thread gets almost no CPU at all.
      const deadline = Date.now() + job.timeoutMs * WALL_CLOCK_CEILING;
      slot.timer = setInterval(
        () => {
          const used = (threadCpuMs(slot.threadId!) ?? Number.POSITIVE_INFINITY) - cpuAtStart;
          if (used >= job.timeoutMs || Date.now() >= deadline) overBudget();
        },
        Math.min(CPU_CHECK_MS, job.timeoutMs),
      );
    }
    slot.timer.unref();
    // The worker holds the event loop only while it has work.
    slot.worker.ref();
    slot.worker.postMessage({ id: job.id, ...job.payload });
  }

  private spawn(): void {
    const worker = new Worker(this.options.workerFile, { resourceLimits: this.options.resourceLimits });
    const slot: Slot = { worker, ready: false };
    worker.unref();
    worker.on('message', (message: WorkerMessage) => {
      if ('ready' in message) {
        slot.ready = true;
        slot.threadId = message.threadId;
        this.dispatch();
        return;
      }
      const job = slot.job;
      if (!job || job.id !== message.id) return;
      this.finish(slot);
      if (message.error === 'OUTPUT_TOO_LARGE') job.reject(new RenderOutputTooLarge());
      else if (message.error !== undefined) job.reject(new RenderFailure(`markdown rendering failed: ${message.error}`));
      else job.resolve(message.html ?? '');
      this.dispatch();
    });
    worker.on('error', (error) => this.lost(slot, `markdown rendering failed: ${error.message}`));
    worker.on('exit', () => this.lost(slot, 'the markdown renderer stopped'));
    this.slots.push(slot);
  }

  /** A worker failed or ended by itself. */
  private lost(slot: Slot, reason: string): void {
    if (!this.slots.includes(slot)) return;
    if (slot.ready) {
      this.fail(slot, new RenderFailure(reason));
      this.drop(slot);
    } else {
      this.remove(slot);
      void slot.worker.terminate();
      this.failQueued(new RenderFailure(`the markdown renderer could not start: ${reason}`));
    }
  }

  private finish(slot: Slot): void {
    clearInterval(slot.timer);
    slot.timer = undefined;
    slot.job = undefined;
    slot.worker.unref();
  }

  private fail(slot: Slot, error: Error): void {
    const job = slot.job;
    this.finish(slot);
    job?.reject(error);
  }

  /** Ends a worker that timed out or died; waiting jobs get a fresh one. */
  private drop(slot: Slot): void {
    if (!this.remove(slot)) return;
    void slot.worker.terminate();
    this.dispatch();
  }

  private remove(slot: Slot): boolean {
    const index = this.slots.indexOf(slot);
    if (index < 0) return false;
    this.slots.splice(index, 1);
    return true;
  }

  private unqueue(job: Job): void {
    const index = this.queue.indexOf(job);
    if (index >= 0) this.queue.splice(index, 1);
  }

  private failQueued(error: Error): void {
    for (const job of this.queue.splice(0)) {
      clearTimeout(job.queueTimer);
      job.reject(error);
    }
  }
}
