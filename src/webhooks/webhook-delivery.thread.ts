/*
 * The thread that delivers webhooks (started by webhook-dispatcher.ts): the delivery loop on a database
 * connection of its own, at WEBHOOK_SENDER_NICE on Linux. It reads the outbox, claims, sends (through the
 * sending thread, webhook-send.worker.js) and records outcomes; the server's thread only writes the outbox
 * and wakes it.
 *
 * In:  { type: 'wake' } (work was queued), { type: 'stop' }
 * Out: { type: 'ready' }, { type: 'log', level, context, message }; after a stop the thread ends
 */
import * as os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { Logger, LoggerService } from '@nestjs/common';
import type { DataSource } from 'typeorm';
import { armFaultPoints } from '../common/fault-points';
import type { AppConfig } from '../config/config';
import { connectDatabase } from '../database/data-source';
import { Transactions } from '../database/transactions';
import { systemResolver } from '../mirrors/host-policy';
import { SecretBox } from '../mirrors/secret-box';
import { DeliveryLoop } from './webhook-delivery-loop';
import { WebhookSender } from './webhook-sender';
import { WebhookStore } from './webhook.store';
import { WebhookDeliveryEntity, WebhookEntity, WebhookEventEntity, WebhookLeaseEntity } from './webhook.entities';

/** What the server hands the thread: its settings, and the name it holds leases under. */
export interface DeliveryThreadData {
  config: Pick<AppConfig, 'database' | 'databaseTimeouts' | 'webhooks' | 'dataDir' | 'secretKey' | 'faultKillAt'>;
  token: string;
}

/** Connections the thread's pool opens at most on MySQL: one transaction runs at a time, reads go beside it. */
const POOL_SIZE = 2;

type Level = 'log' | 'error' | 'warn' | 'debug' | 'verbose';

/**
 * Lines logged here are logged by the server's logger, on its thread, where every other line goes. Nest hands
 * a logger's context as the last parameter, after the message (and an error's stack, when given).
 */
class RelayedLogger implements LoggerService {
  log = (message: unknown, ...params: unknown[]) => this.relay('log', message, params);
  error = (message: unknown, ...params: unknown[]) => this.relay('error', message, params);
  warn = (message: unknown, ...params: unknown[]) => this.relay('warn', message, params);
  debug = (message: unknown, ...params: unknown[]) => this.relay('debug', message, params);
  verbose = (message: unknown, ...params: unknown[]) => this.relay('verbose', message, params);

  private relay(level: Level, message: unknown, params: unknown[]): void {
    const context = params.length > 0 && typeof params[params.length - 1] === 'string' ? (params[params.length - 1] as string) : 'Webhooks';
    parentPort?.postMessage({ type: 'log', level, context, message: String(message) });
  }
}

async function main(): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('webhook-delivery.thread runs as a worker thread');
  Logger.overrideLogger(new RelayedLogger());
  const { config, token } = workerData as DeliveryThreadData;
  armFaultPoints(config.faultKillAt);
  if (process.platform === 'linux' && config.webhooks.senderNice > 0) {
    try {
      // pid 0 is the calling thread on Linux: this thread alone, not the server's.
      os.setPriority(0, config.webhooks.senderNice);
    } catch {
      // Not allowed: the thread keeps the server's priority.
    }
  }
  let dataSource: DataSource;
  try {
    dataSource = await connectDatabase(config, [WebhookEntity, WebhookEventEntity, WebhookDeliveryEntity, WebhookLeaseEntity], POOL_SIZE);
  } catch (error) {
    new Logger('Webhooks').error(`webhook delivery cannot reach the database: ${(error as Error).message}`);
    process.exitCode = 1;
    port.close();
    return;
  }
  const sender = new WebhookSender(config.webhooks, systemResolver);
  const loop = new DeliveryLoop(config.webhooks, new WebhookStore(dataSource), new Transactions(dataSource), sender, new SecretBox({ dataDir: config.dataDir, secretKey: config.secretKey }), token);
  port.on('message', (message: { type: string }) => {
    if (message.type === 'wake') loop.wake();
    else if (message.type === 'stop') {
      void (async () => {
        await loop.stop();
        await sender.onApplicationShutdown();
        await dataSource.destroy().catch(() => undefined);
        port.close();
      })();
    }
  });
  loop.start();
  port.postMessage({ type: 'ready' });
}

void main();
