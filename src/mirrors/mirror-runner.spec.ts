import { AppConfig } from '../config/config';
import { MirrorRunner } from './mirror-runner';
import type { MirrorSyncProcedure, SyncOutcome } from './mirror-sync.procedure';

/** A procedure whose runs finish when the test says so. */
class ControlledProcedure {
  readonly started: number[] = [];
  /** The request time each run was given. */
  readonly requestedAt: (number | undefined)[] = [];
  private readonly finishers: ((outcome: SyncOutcome) => void)[] = [];

  run(repoId: number, _signal: AbortSignal, requestedAt?: number): Promise<SyncOutcome> {
    this.started.push(repoId);
    this.requestedAt.push(requestedAt);
    return new Promise((resolve) => this.finishers.push(resolve));
  }

  /** Finishes the oldest unfinished run. */
  finish(outcome: SyncOutcome = 'synced'): void {
    this.finishers.shift()!(outcome);
  }

  get running(): number {
    return this.finishers.length;
  }
}

const flush = () => new Promise((resolve) => setImmediate(resolve));

function runnerWith(maxConcurrency: number) {
  const procedure = new ControlledProcedure();
  const config = { mirrors: { maxConcurrency }, git: { drainTimeoutMs: 1000 } } as AppConfig;
  return { procedure, runner: new MirrorRunner(config.git, config.mirrors, procedure as unknown as MirrorSyncProcedure) };
}

describe('MirrorRunner', () => {
  it('absorbs a request for a queued mirror, and queues exactly one more for a running one', async () => {
    const { procedure, runner } = runnerWith(1);
    runner.request(1);
    runner.request(2);
    runner.request(2); // absorbed: 2 is still queued
    expect(procedure.started).toEqual([1]);
    runner.request(1); // 1 is running: one more run
    runner.request(1); // absorbed by that one
    procedure.finish();
    await flush();
    expect(procedure.started).toEqual([1, 2]);
    procedure.finish();
    await flush();
    expect(procedure.started).toEqual([1, 2, 1]);
    procedure.finish();
    await flush();
    expect(procedure.started).toEqual([1, 2, 1]);
    await runner.whenIdle();
    expect(runner.knownIds()).toEqual([]);
  });

  it('never runs more than MIRROR_MAX_CONCURRENCY syncs at once', async () => {
    const { procedure, runner } = runnerWith(3);
    for (let id = 1; id <= 10; id++) runner.request(id);
    expect(procedure.running).toBe(3);
    for (let done = 0; done < 10; done++) {
      expect(procedure.running).toBeLessThanOrEqual(3);
      procedure.finish();
      await flush();
    }
    expect(procedure.started).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(runner.peakActive).toBe(3);
  });

  it('starts nothing new once shutting down, and waits for running syncs', async () => {
    const { procedure, runner } = runnerWith(1);
    runner.request(1);
    runner.request(2);
    let stopped = false;
    const shutdown = runner.beforeApplicationShutdown().then(() => {
      stopped = true;
    });
    await flush();
    expect(stopped).toBe(false);
    procedure.finish();
    await shutdown;
    expect(procedure.started).toEqual([1]);
    runner.request(3);
    expect(procedure.started).toEqual([1]);
  });

  it('gives each run the time of the request it serves, and drops a request served by another process', async () => {
    const { procedure, runner } = runnerWith(1);
    runner.request(7, 1000);
    const during = Date.now();
    runner.request(7);
    procedure.finish();
    await flush();
    expect(procedure.requestedAt[0]).toBe(1000);
    expect(procedure.requestedAt[1]).toBeGreaterThanOrEqual(during);
    // Another instance's claim, taken after this request, serves it: no retry is scheduled.
    procedure.finish('elsewhere');
    await runner.whenIdle();
    expect(runner.knownIds()).toEqual([]);
    expect(procedure.started).toEqual([7, 7]);
  });
});
