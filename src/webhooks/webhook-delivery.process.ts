/*
 * The process that delivers webhooks (started by webhook-dispatcher.ts): the delivery loop on a database
 * connection of its own. It reads the outbox, claims, sends (through the sending thread,
 * webhook-send.worker.js) and records outcomes; the server only writes the outbox and wakes it. It runs in a
 * session of its own at WEBHOOK_SENDER_NICE (see `lowerPriority`; on SQLite only its sending thread), and ends
 * when the server goes away.
 *
 * In:  { type: 'start', data: DeliveryProcessData } (first), { type: 'wake' } (work was queued), { type: 'stop' }
 * Out: { type: 'ready' }, { type: 'log', level, context, message }; after a stop the process ends
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import { Logger, LoggerService } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { armFaultPoints } from '../common/fault-points';
import { processToken } from '../common/process-identity';
import type { AppConfig } from '../config/config';
import { connectDatabase } from '../database/data-source';
import { Transactions } from '../database/transactions';
import { systemResolver } from '../outbound/host-policy';
import { SecretBox } from '../secrets/secret-box';
import { DeliveryLoop } from './webhook-delivery-loop';
import { WebhookSender } from './webhook-sender';
import { WebhookStore } from './webhook.store';
import { WebhookDeliveryEntity, WebhookEntity, WebhookEventEntity, WebhookLeaseEntity } from './webhook.entities';

/** What the server hands the process, over the IPC channel (never in its arguments or environment). */
export interface DeliveryProcessData {
  config: Pick<AppConfig, 'database' | 'databaseTimeouts' | 'webhooks' | 'dataDir' | 'secretKey' | 'faultKillAt'>;
}

/** Connections the process's pool opens at most on MySQL: one transaction runs at a time, reads go beside it. */
const POOL_SIZE = 2;
/** The kernel takes a new autogroup nice value at most every 100 ms machine-wide; so many tries, 150 ms apart. */
const AUTOGROUP_TRIES = 5;

type Level = 'log' | 'error' | 'warn' | 'debug' | 'verbose';

const send = (message: unknown): void => {
  if (process.connected) process.send?.(message);
};

/**
 * Lines logged here are logged by the server's logger, where every other line goes. Nest hands a logger's
 * context as the last parameter, after the message (and an error's stack, when given).
 */
class RelayedLogger implements LoggerService {
  log = (message: unknown, ...params: unknown[]) => this.relay('log', message, params);
  error = (message: unknown, ...params: unknown[]) => this.relay('error', message, params);
  warn = (message: unknown, ...params: unknown[]) => this.relay('warn', message, params);
  debug = (message: unknown, ...params: unknown[]) => this.relay('debug', message, params);
  verbose = (message: unknown, ...params: unknown[]) => this.relay('verbose', message, params);

  private relay(level: Level, message: unknown, params: unknown[]): void {
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : 'Webhooks';
    send({ type: 'log', level, context, message: String(message) });
  }
}

/**
 * Linux: this thread's nice value (the threads started later, the sending thread's and libuv's, inherit it),
 * and the nice value of the process's autogroup. With autogroups on (`sched_autogroup_enabled`, the default of
 * most distributions) the kernel shares the CPU between sessions first, and only then by nice value within one:
 * the server started this process in a session of its own, and only a niced autogroup makes the whole session
 * yield to the server's and to the gits of a push (each in a session of its own). Either may be refused, or
 * absent; the process then runs as it is.
 */
async function lowerPriority(nice: number): Promise<void> {
  if (process.platform !== 'linux' || nice <= 0) return;
  try {
    os.setPriority(0, nice);
  } catch {
    // not allowed here
  }
  for (let attempt = 1; attempt <= AUTOGROUP_TRIES; attempt++) {
    try {
      fs.writeFileSync('/proc/self/autogroup', String(nice));
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EAGAIN') return;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

/** What a `stop` does: nothing to finish until the loop runs. */
let stop: () => Promise<void> = async () => process.exit(0);
let wake: () => void = () => undefined;

async function start({ config }: DeliveryProcessData): Promise<void> {
  Logger.overrideLogger(new RelayedLogger());
  // A point armed for the crash tests kills the server with this process, as a kill of the server's whole
  // process tree would.
  armFaultPoints(config.faultKillAt, [process.ppid]);
  // On SQLite a write takes the database's one write lock, which the server's writes wait for: a process at the
  // lowest priority, starved on a busy machine while it holds it, would make them time out (priority
  // inversion). There the bookkeeping runs at normal priority and only the sending thread yields (it lowers
  // its own priority); on MySQL/MariaDB a write locks only its rows, none the server's writes wait for.
  if (config.database.type !== 'sqlite') await lowerPriority(config.webhooks.senderNice);
  let dataSource: DataSource;
  try {
    dataSource = await connectDatabase(config, [WebhookEntity, WebhookEventEntity, WebhookDeliveryEntity, WebhookLeaseEntity], POOL_SIZE);
  } catch (error) {
    new Logger('Webhooks').error(`webhook delivery cannot reach the database: ${(error as Error).message}`);
    process.exit(1);
  }
  const sender = new WebhookSender(config.webhooks, systemResolver);
  // Leases are held under this process's own name: a process started again after this one died sees that it
  // is gone (same machine, no such pid) and takes its queues back at once.
  const loop = new DeliveryLoop(
    config.webhooks,
    new WebhookStore(dataSource),
    new Transactions(dataSource),
    sender,
    new SecretBox({ dataDir: config.dataDir, secretKey: config.secretKey }),
    processToken(),
  );
  stop = async () => {
    await loop.stop();
    await sender.onApplicationShutdown();
    await dataSource.destroy().catch(() => undefined);
    process.exit(0);
  };
  wake = () => loop.wake();
  loop.start();
  send({ type: 'ready' });
}

if (!process.send) throw new Error('webhook-delivery.process runs as a child process with an IPC channel');
// The server went away (stopped, or killed: SIGKILL reaches it alone, this process is in a session of its own):
// what is in flight is sent again by whoever delivers next, with the same UUIDs.
process.on('disconnect', () => process.exit(0));
process.on('message', (message: { type: string; data?: DeliveryProcessData }) => {
  if (message.type === 'start' && message.data) void start(message.data);
  else if (message.type === 'wake') wake();
  else if (message.type === 'stop') void stop();
});
