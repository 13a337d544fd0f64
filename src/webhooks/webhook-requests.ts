import * as path from 'node:path';
import { Worker } from 'node:worker_threads';

/** The worker script, beside this module (in src/ under ts-jest, in dist/src/webhooks once built). */
const WORKER_FILE = path.join(__dirname, 'webhook-request.worker.js');
/**
 * The nice value of the requests' thread: deliveries get the CPU that requests and git leave (a thread at 10
 * weighs about a tenth of one at 0), and still some of it on a machine that is never idle.
 */
const NICENESS = 10;

/** One request, to the address already checked against the host policy. */
export interface WireRequest {
  url: string;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body: Buffer | null;
  address: string;
  family: 4 | 6;
  timeoutMs: number;
  bodyLimit: number;
}

/** The answer (status, first `bodyLimit` bytes, Retry-After), or why there was none. */
export type WireAnswer = { status: number; body: string; retryAfter?: string } | { error: string };

interface Pending {
  resolve(answer: WireAnswer): void;
}

/**
 * Sends webhook requests from a thread of lower CPU priority (webhook-request.worker.js), started on first
 * use and again after it died; the thread keeps the process alive only while answers are awaited.
 */
export class WebhookRequests {
  private worker: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  constructor(private readonly maxSockets: number) {}

  send(request: WireRequest): Promise<WireAnswer> {
    const worker = this.ensureWorker();
    const id = this.nextId++;
    return new Promise<WireAnswer>((resolve) => {
      this.pending.set(id, { resolve });
      if (this.pending.size === 1) worker.ref();
      worker.postMessage({ id, ...request });
    });
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = null;
    if (worker) await worker.terminate();
    this.fail('the server is shutting down');
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_FILE, { workerData: { niceness: NICENESS, maxSockets: this.maxSockets } });
    worker.unref();
    worker.on('message', (message: { id: number } & WireAnswer) => {
      const pending = this.pending.get(message.id);
      if (!pending) return;
      this.pending.delete(message.id);
      if (this.pending.size === 0) worker.unref();
      const { id: _id, ...answer } = message;
      pending.resolve(answer as WireAnswer);
    });
    const gone = (reason: string) => {
      if (this.worker !== worker) return;
      this.worker = null;
      this.fail(reason);
    };
    worker.on('error', (error) => gone(`the request thread failed: ${error.message}`));
    worker.on('exit', (code) => gone(`the request thread exited (${code})`));
    this.worker = worker;
    return worker;
  }

  /** Answers every request in flight with an error (a retryable failure: they are sent again). */
  private fail(reason: string): void {
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.resolve({ error: reason });
  }
}
