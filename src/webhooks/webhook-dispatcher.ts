import * as fs from 'node:fs';
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { processToken } from '../common/process-identity';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { SecretBox } from '../mirrors/secret-box';
import { DeliveryLoop } from './webhook-delivery-loop';
import type { DeliveryThreadData } from './webhook-delivery.thread';
import { WebhookSender } from './webhook-sender';
import { WebhookStore } from './webhook.store';

/** The delivery thread's entry, beside this file (compiled to .js, or run from the sources by the tests). */
const THREAD_FILE = path.join(__dirname, `webhook-delivery.thread${path.extname(__filename)}`);
/** After a delivery thread ended on its own (it could not connect, or it died), the next start waits this long. */
const RESTART_DELAY_MS = 5000;
/** How long a stopping thread may take to finish what it has in flight before it is terminated. */
const STOP_WAIT_MS = 5000;

type ThreadMessage = { type: 'ready' } | { type: 'log'; level: 'log' | 'error' | 'warn' | 'debug' | 'verbose'; context: string; message: string };

/**
 * Delivers the outbox from a thread of its own (webhook-delivery.thread.ts): reading queues, claiming,
 * sending and recording outcomes is a few statements and a request per delivery, a hundred deliveries for
 * one push to a repository with a hundred hooks, and on the server's thread all of it would wait in line
 * with requests and pushes. The thread has its own database connection and runs at WEBHOOK_SENDER_NICE.
 * The server's side writes the outbox (in the change's transaction) and wakes the thread after the commit.
 *
 * The thread starts once there is a hook (a server without hooks never starts it) and again on the next wake
 * after it died; it holds leases under this process's name, so a thread started again takes its
 * predecessor's queues at once. An in-memory SQLite database cannot be shared with another connection: there
 * the loop runs on the server's thread.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  /** This process in lease and claim columns, for every thread it starts. */
  private readonly token = processToken();
  private thread: Worker | null = null;
  private local: DeliveryLoop | null = null;
  private starting: Promise<void> | null = null;
  private notBefore = 0;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly store: WebhookStore,
    private readonly transactions: Transactions,
    private readonly sender: WebhookSender,
    private readonly box: SecretBox,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.database.type === 'sqlite' && this.config.database.file === ':memory:') {
      this.local = new DeliveryLoop(this.config.webhooks, this.store, this.transactions, this.sender, this.box, this.token);
      this.local.start();
      return;
    }
    // Until the thread runs, a hook made by another instance (or deliveries it left) is found at the next poll.
    if (this.config.webhooks.pollMs > 0) {
      this.timer = setInterval(() => {
        if (!this.thread) void this.startWhenHooked();
      }, this.config.webhooks.pollMs);
      this.timer.unref();
    }
    void this.startWhenHooked();
  }

  /** Work was queued (committed): the delivery thread looks for it now. */
  wake(): void {
    if (this.stopped) return;
    if (this.local) this.local.wake();
    else if (this.thread) this.thread.postMessage({ type: 'wake' });
    else void this.startWhenHooked();
  }

  /** The delivery thread's id while it runs; null before a hook exists, and after it died until it starts again. */
  get threadId(): number | null {
    return this.thread?.threadId ?? null;
  }

  /** Stops delivering: the thread finishes what is in flight (briefly) and closes its connection. */
  async onApplicationShutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.local?.stop();
    const thread = this.thread;
    this.thread = null;
    if (!thread) return;
    const exited = new Promise<void>((resolve) => thread.once('exit', () => resolve()));
    thread.postMessage({ type: 'stop' });
    const timer = setTimeout(() => void thread.terminate(), STOP_WAIT_MS);
    await exited;
    clearTimeout(timer);
  }

  private async startWhenHooked(): Promise<void> {
    try {
      if (await this.store.anyHook()) await this.startThread();
    } catch (error) {
      this.logger.error(`webhook delivery: cannot look for hooks: ${(error as Error).message}`);
    }
  }

  private startThread(): Promise<void> {
    if (this.thread || this.stopped || Date.now() < this.notBefore) return Promise.resolve();
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async spawn(): Promise<void> {
    // The thread lowers its own priority, and a thread inherits its creator's: libuv's pool of threads (file
    // system calls, address lookups) is made at its first use, and must not be made by the delivery thread.
    await fs.promises.access(this.config.dataDir).catch(() => undefined);
    if (this.stopped) return;
    const data: DeliveryThreadData = {
      config: {
        database: this.config.database,
        databaseTimeouts: this.config.databaseTimeouts,
        webhooks: this.config.webhooks,
        dataDir: this.config.dataDir,
        secretKey: this.config.secretKey,
        faultKillAt: this.config.faultKillAt,
      },
      token: this.token,
    };
    const thread = startThread(THREAD_FILE, data);
    this.thread = thread;
    await new Promise<void>((resolve) => {
      thread.on('message', (message: ThreadMessage) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'log') this.relay(message);
      });
      thread.on('error', (error) => this.logger.error(`webhook delivery thread failed: ${error.message}`));
      thread.on('exit', (code) => {
        if (this.thread === thread) this.thread = null;
        if (!this.stopped) {
          this.notBefore = Date.now() + RESTART_DELAY_MS;
          this.logger.error(`webhook delivery thread stopped (exit code ${code}); it starts again on the next event`);
        }
        resolve();
      });
    });
  }

  private relay(message: Extract<ThreadMessage, { type: 'log' }>): void {
    const logger = new Logger(message.context);
    if (message.level === 'error') logger.error(message.message);
    else logger[message.level](message.message);
  }
}

/** A worker thread on `file`: compiled JavaScript as it is, TypeScript (the tests, from the sources) through ts-node. */
function startThread(file: string, workerData: unknown): Worker {
  if (file.endsWith('.js')) return new Worker(file, { workerData });
  const project = path.resolve(__dirname, '../../tsconfig.json');
  const boot = `require('ts-node').register({ transpileOnly: true, project: ${JSON.stringify(project)} }); require(${JSON.stringify(file)});`;
  return new Worker(boot, { eval: true, workerData });
}
