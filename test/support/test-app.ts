import 'reflect-metadata';
import * as fs from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import type { NestExpressApplication } from '@nestjs/platform-express';
import request from 'supertest';
import type TestAgent from 'supertest/lib/agent';
import { DataSource } from 'typeorm';
import { createApp } from '../../src/bootstrap';
import { AppConfig, loadConfig } from '../../src/config/config';
import { e2eLogFile } from './e2e-log';
import { createMysqlDatabase } from './mysql-databases';

export { createMysqlDatabase };

/**
 * The real application on a fresh database and a fresh data directory. SQLite by default; with
 * TEST_DATABASE=mysql each test app gets a MySQL/MariaDB database of its own (TEST_MYSQL_URL, default
 * mysql://root@127.0.0.1:3306), given back by close() to be emptied and reused (test/support/mysql-databases.ts).
 */
export interface TestApp {
  app: NestExpressApplication;
  http: TestAgent;
  config: AppConfig;
  dataSource: DataSource;
  dataDir: string;
  /** An API path under /api/v1. */
  api(path: string): string;
  /** Makes the server listen on a free loopback port (for real git clients); returns its base URL. */
  listen(): Promise<string>;
  close(): Promise<void>;
}

const LIFTED_RATE_LIMITS = Object.fromEntries(
  ['SIGN_IN_PER_IP', 'SIGN_IN_PER_ACCOUNT', 'MARKDOWN', 'TOKEN_CREATION', 'KEY_UPLOAD'].map((name) => [`RATE_LIMIT_${name}`, '1000000']),
);

export const usesMysql = (): boolean => process.env.TEST_DATABASE === 'mysql';

/** For a suite that speaks SSH to its app: the app's own SSH server on a free loopback port, closed with the app. */
export const WITH_SSH: Readonly<Record<string, string>> = { SSH_ENABLED: 'true', SSH_LISTEN_PORT: '0', SSH_LISTEN_HOST: '127.0.0.1' };

/** `adjust` changes values that are fixed in production (time limits, the scheduler's timer) for a test. */
export async function startTestApp(env: Record<string, string> = {}, adjust?: (config: AppConfig) => void): Promise<TestApp> {
  // A data directory or database the caller names is the caller's to remove; only what is made here is removed
  // by `close` (or here, when the application does not start).
  const ownDataDir = env.DATA_DIR === undefined ? fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-test-')) : undefined;
  const dataDir = env.DATA_DIR ?? ownDataDir!;
  const database = usesMysql() && env.DATABASE_URL === undefined ? await createMysqlDatabase() : undefined;
  const logFile = e2eLogFile();
  const config = loadConfig({
    DATA_DIR: dataDir,
    ROOT_URL: 'http://anvil.test/',
    // In a jest e2e run every app logs what a default deployment logs, to the run's log (test/support/e2e-log.ts),
    // which the run's teardown scans for every secret the helpers created.
    ...(logFile ? { LOG_LEVEL: 'info', LOG_FILE: logFile } : { LOG_LEVEL: 'silent' }),
    // Test files make hundreds of calls from one address and one user: the rate limits have their own tests
    // (sign-in-abuse), which set the limits they exercise.
    ...LIFTED_RATE_LIMITS,
    // No SSH server unless the suite speaks SSH (WITH_SSH): its thread and ssh2 cost every app's start some
    // 150-250 ms of processor time. ssh_url then names port 0.
    SSH_ENABLED: 'false',
    SSH_LISTEN_PORT: '0',
    SSH_LISTEN_HOST: '127.0.0.1',
    // No space reserve (a 32 MiB ballast written per app): the full-disk fault test exercises it.
    STORAGE_RESERVE: '0',
    // Webhook deliveries at the server's priority: on a loaded CI machine a delivery process at nice 19 gets
    // almost no CPU while the specs wait for its deliveries. The low priority has a test of its own, which asks
    // for it (webhooks.e2e-spec.ts, "the webhook delivery process").
    WEBHOOK_SENDER_NICE: '0',
    ...(database ? { DATABASE_URL: database.url } : {}),
    ...env,
  });
  adjust?.(config);
  const removeOwn = async () => {
    if (database) await database.drop();
    if (ownDataDir) fs.rmSync(ownDataDir, { recursive: true, force: true });
  };
  let app: NestExpressApplication;
  try {
    app = await createApp(config);
  } catch (error) {
    await removeOwn();
    throw error;
  }
  const dataSource = app.get(DataSource);
  let closed: Promise<void> | undefined;
  return {
    app,
    http: request(app.getHttpServer()),
    config,
    dataSource,
    dataDir,
    api: (apiPath: string) => `/api/v1${apiPath.startsWith('/') ? apiPath : `/${apiPath}`}`,
    listen: async () => {
      const server = app.getHttpServer() as Server;
      if (!server.listening) await app.listen(0, '127.0.0.1');
      return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    },
    // Once, however often a test asks (its body may close the app its teardown closes again).
    close: () =>
      (closed ??= (async () => {
        await app.close();
        await removeOwn();
      })()),
  };
}

/** DATABASE_URL of a running test app, for a second instance on the same database. */
export function databaseUrl(config: AppConfig): string {
  const database = config.database;
  if (database.type === 'sqlite') return `sqlite://${database.file}`;
  const user = encodeURIComponent(database.username) + (database.password ? `:${encodeURIComponent(database.password)}` : '');
  return `mysql://${user}@${database.host}:${database.port}/${encodeURIComponent(database.database)}`;
}
