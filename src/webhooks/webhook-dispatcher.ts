import { ChildProcess, fork } from 'node:child_process';
import * as path from 'node:path';
import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { processToken } from '../common/process-identity';
import { APP_CONFIG, AppConfig } from '../config/config';
import { Transactions } from '../database/transactions';
import { SecretBox } from '../secrets/secret-box';
import { DeliveryLoop } from './webhook-delivery-loop';
import type { DeliveryProcessData } from './webhook-delivery.process';
import { WebhookSender } from './webhook-sender';
import { WebhookStore } from './webhook.store';

/** The delivery process's entry, beside this file (compiled to .js, or run from the sources by the tests). */
const PROCESS_FILE = path.join(__dirname, `webhook-delivery.process${path.extname(__filename)}`);
/** After a delivery process ended on its own (it could not connect, or it died), the next start waits this long. */
const RESTART_DELAY_MS = 5000;
/** How long a stopping process may take to finish what it has in flight before it is killed. */
const STOP_WAIT_MS = 5000;

type ProcessMessage = { type: 'ready' } | { type: 'log'; level: 'log' | 'error' | 'warn' | 'debug' | 'verbose'; context: string; message: string };

/**
 * Delivers the outbox from a process of its own (webhook-delivery.process.ts): reading queues, claiming,
 * sending and recording outcomes is a few statements and a request per delivery, a hundred deliveries for
 * one push to a repository with a hundred hooks, and in the server all of it would take CPU from requests
 * and pushes. The process has its own database connection, and runs in a session of its own at
 * WEBHOOK_SENDER_NICE, its autogroup included (a thread of the server could only lower its share of the
 * server's). The server writes the outbox (in the change's transaction) and wakes the process after the commit.
 *
 * The process starts once there is a hook (a server without hooks never starts it) and again on the next wake
 * after it died; it holds leases under its own name, so a process started again sees that its predecessor is
 * gone and takes its queues at once. It ends when the server does, killed or not. An in-memory SQLite
 * database cannot be shared with another connection: there the loop runs in the server.
 */
@Injectable()
export class WebhookDispatcher implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger('Webhooks');
  private child: ChildProcess | null = null;
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
      this.local = new DeliveryLoop(this.config.webhooks, this.store, this.transactions, this.sender, this.box, processToken());
      this.local.start();
      return;
    }
    // Until the process runs, a hook made by another instance (or deliveries it left) is found at the next poll.
    if (this.config.webhooks.pollMs > 0) {
      this.timer = setInterval(() => {
        if (!this.child) void this.startWhenHooked();
      }, this.config.webhooks.pollMs);
      this.timer.unref();
    }
    void this.startWhenHooked();
  }

  /** Work was queued (committed): the delivery process looks for it now. */
  wake(): void {
    if (this.stopped) return;
    if (this.local) this.local.wake();
    else if (this.child?.connected) this.child.send({ type: 'wake' });
    else if (!this.child) void this.startWhenHooked();
  }

  /** The delivery process's pid while it runs; null before a hook exists, and after it died until it starts again. */
  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  /** Stops delivering: the process finishes what is in flight (briefly) and closes its connection. */
  async onApplicationShutdown(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.local?.stop();
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    if (child.connected) child.send({ type: 'stop' });
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_WAIT_MS);
    await exited;
    clearTimeout(timer);
  }

  private async startWhenHooked(): Promise<void> {
    try {
      if (await this.store.anyHook()) await this.startChild();
    } catch (error) {
      this.logger.error(`webhook delivery: cannot look for hooks: ${(error as Error).message}`);
    }
  }

  private startChild(): Promise<void> {
    if (this.child || this.stopped || Date.now() < this.notBefore) return Promise.resolve();
    this.starting ??= this.spawn().finally(() => {
      this.starting = null;
    });
    return this.starting;
  }

  private async spawn(): Promise<void> {
    const data: DeliveryProcessData = {
      config: {
        database: this.config.database,
        databaseTimeouts: this.config.databaseTimeouts,
        webhooks: this.config.webhooks,
        dataDir: this.config.dataDir,
        secretKey: this.config.secretKey,
        faultKillAt: this.config.faultKillAt,
      },
    };
    let child: ChildProcess;
    try {
      child = startProcess(PROCESS_FILE);
    } catch (error) {
      // The kernel refused the process (no memory, too many processes): tried again on a later event.
      this.notBefore = Date.now() + RESTART_DELAY_MS;
      this.logger.error(`webhook delivery process could not start: ${(error as Error).message}; it starts again on the next event`);
      return;
    }
    this.child = child;
    await new Promise<void>((resolve) => {
      child.on('message', (message: ProcessMessage) => {
        if (message.type === 'ready') resolve();
        else if (message.type === 'log') this.relay(message);
      });
      let gone = false;
      const ended = (how: string) => {
        if (gone) return;
        gone = true;
        if (this.child === child) this.child = null;
        if (!this.stopped) {
          this.notBefore = Date.now() + RESTART_DELAY_MS;
          this.logger.error(`webhook delivery process ${how}; it starts again on the next event`);
        }
        resolve();
      };
      child.on('error', (error) => {
        // One that could not be started (no descriptors left, say) reports only this: no exit follows.
        if (child.pid === undefined) ended(`could not start: ${error.message}`);
        else this.logger.error(`webhook delivery process failed: ${error.message}`);
      });
      child.on('exit', (code, signal) => ended(`stopped (${signal ?? `exit code ${code}`})`));
      // The settings as this server resolved them, over the channel (never in the process's arguments).
      if (child.pid !== undefined) child.send({ type: 'start', data });
    });
  }

  private relay(message: Extract<ProcessMessage, { type: 'log' }>): void {
    const logger = new Logger(message.context);
    if (message.level === 'error') logger.error(message.message);
    else logger[message.level](message.message);
  }
}

/**
 * The delivery process on `file`, in a session of its own (see the class): compiled JavaScript as it is,
 * TypeScript (the tests, from the sources) through ts-node. Its output goes where the server's does.
 */
function startProcess(file: string): ChildProcess {
  const typescript = !file.endsWith('.js');
  const env = typescript ? { ...process.env, TS_NODE_PROJECT: path.resolve(__dirname, '../../tsconfig.json'), TS_NODE_TRANSPILE_ONLY: 'true' } : process.env;
  return fork(file, [], {
    detached: true,
    env,
    execArgv: typescript ? ['--require', 'ts-node/register'] : [],
    // Structured clone, as for a thread: numbers such as Infinity arrive as they were.
    serialization: 'advanced',
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
}
