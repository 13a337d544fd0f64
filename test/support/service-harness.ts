import 'reflect-metadata';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DynamicModule, ForwardReference, Provider, Type } from '@nestjs/common';
import { ModuleRef } from '@nestjs/core';
import { Test, TestingModule, TestingModuleBuilder } from '@nestjs/testing';
import { DataSource } from 'typeorm';
import { foundationModules } from '../../src/app-foundation';
import { AppConfig, loadConfig } from '../../src/config/config';
import { LifecycleEvents } from '../../src/events/lifecycle-events';
import { LifecycleSubscribers, SUBSCRIPTIONS } from '../../src/events/subscribers';

type Import = Type<unknown> | DynamicModule | Promise<DynamicModule> | ForwardReference;

export interface ServiceHarnessOptions {
  /** The feature modules under test, with the real stores and services they wire. */
  imports?: Import[];
  /** More providers (a spec's own fakes, or a service under test provided alone). */
  providers?: Provider[];
  /** Settings, as environment variables (loadConfig); the database is always SQLite `:memory:`. */
  env?: Record<string, string>;
  /** Changes a value that is fixed in production (as test/support/test-app.ts's `adjust`). */
  adjust?: (config: AppConfig) => void;
  /** Replaces a provider of the real modules, e.g. a git reader by a fake: `(b) => b.overrideProvider(X).useValue(fake)`. */
  override?: (builder: TestingModuleBuilder) => TestingModuleBuilder;
}

export interface ServiceHarness {
  module: TestingModule;
  dataSource: DataSource;
  config: AppConfig;
  /** A data directory of this harness alone (removed by close). */
  dataDir: string;
  get<T>(token: Type<T> | string | symbol | (abstract new (...args: never[]) => T)): T;
  close(): Promise<void>;
}

/**
 * The fast tier's way to a service: a Nest testing module with the real modules the spec names, the global
 * modules every service relies on (configuration slices, log, database, clock, rate limits, audit, repository
 * events), and
 * the real migrations on an SQLite database in memory. No HTTP server, no file shared with another run: two
 * `npm test` at once do not meet (the data directory is a fresh temporary one).
 */
export async function serviceHarness(options: ServiceHarnessOptions = {}): Promise<ServiceHarness> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-service-'));
  try {
    const config = loadConfig({
      DATA_DIR: dataDir,
      DATABASE_URL: 'sqlite::memory:',
      ROOT_URL: 'http://anvil.test/',
      LOG_LEVEL: 'silent',
      STORAGE_RESERVE: '0',
      SSH_LISTEN_PORT: '0',
      SSH_LISTEN_HOST: '127.0.0.1',
      ...options.env,
    });
    // No timers of their own: a spec drives the scheduler's ticks itself.
    config.mirrors.tickMs = 0;
    options.adjust?.(config);
    let builder = Test.createTestingModule({
      imports: [...foundationModules(config), ...(options.imports ?? [])],
      providers: options.providers ?? [],
    });
    // The app subscribes every module's handlers to the lifecycle events; here, those of the modules the spec
    // imports, in the same order (a module left out keeps no rows to clean or events to hear).
    builder.overrideProvider(LifecycleSubscribers).useFactory({
      inject: [LifecycleEvents, ModuleRef],
      factory: (events: LifecycleEvents, modules: ModuleRef) => ({
        onModuleInit: () => {
          for (const subscription of SUBSCRIPTIONS) {
            let provider: unknown;
            try {
              provider = modules.get(subscription.provider, { strict: false });
            } catch {
              continue;
            }
            events.subscribe(subscription.event, (payload) => subscription.handle(provider, payload as never) as never);
          }
        },
      }),
    });
    if (options.override) builder = options.override(builder);
    const module = await builder.compile();
    await module.init();
    return {
      module,
      dataSource: module.get(DataSource),
      config,
      dataDir,
      get: (token) => module.get(token as never, { strict: false }),
      close: async () => {
        await module.close();
        fs.rmSync(dataDir, { recursive: true, force: true });
      },
    };
  } catch (error) {
    fs.rmSync(dataDir, { recursive: true, force: true });
    throw error;
  }
}
