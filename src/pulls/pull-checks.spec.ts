import { PushHooks, PushContext } from '../git/push-hooks';
import { PullChecks } from './pull-checks';
import { PullStatus } from './pull-request.entity';

/** PullChecks with nothing but the push hooks; `wake` (the drain) is only counted. */
function checksBeside(hooks: PushHooks): { checks: PullChecks; wakes: () => number } {
  const none = undefined as never;
  const checks = new PullChecks(none, none, none, none, none, none, none, none, none, none, hooks);
  let wakes = 0;
  jest.spyOn(checks, 'wake').mockImplementation(() => void wakes++);
  return { checks, wakes: () => wakes };
}

describe('the drain after a push', () => {
  const push = { repositoryId: 1 } as PushContext;
  let hooks: PushHooks;
  beforeEach(() => {
    jest.useFakeTimers();
    hooks = new PushHooks({ dataDir: '/nonexistent' } as never, undefined as never);
  });
  afterEach(() => jest.useRealTimers());

  it('starts only once the pushes running here have ended, then after a short pause', () => {
    const first = hooks.begin(push);
    const second = hooks.begin(push);
    const { checks, wakes } = checksBeside(hooks);
    checks.wakeAfterPush();
    jest.advanceTimersByTime(1_000);
    first.end();
    jest.advanceTimersByTime(500);
    expect(wakes()).toBe(0);
    second.end();
    jest.advanceTimersByTime(99);
    expect(wakes()).toBe(0);
    jest.advanceTimersByTime(1);
    expect(wakes()).toBe(1);
    jest.advanceTimersByTime(5_000);
    expect(wakes()).toBe(1);
  });

  it('is not held back for ever by pushes that keep running', () => {
    hooks.begin(push);
    const { checks, wakes } = checksBeside(hooks);
    checks.wakeAfterPush();
    jest.advanceTimersByTime(1_999);
    expect(wakes()).toBe(0);
    jest.advanceTimersByTime(1);
    expect(wakes()).toBe(1);
  });

  it('starts after the pause when no push runs (a write of the server), once for asks that come together', () => {
    const { checks, wakes } = checksBeside(hooks);
    checks.wakeAfterPush();
    checks.wakeAfterPush();
    jest.advanceTimersByTime(100);
    expect(wakes()).toBe(1);
    checks.wakeAfterPush();
    jest.advanceTimersByTime(100);
    expect(wakes()).toBe(2);
  });
});

describe('a merge waiting for a test (settle)', () => {
  /** PullChecks whose store answers `statuses` in turn to each read; every claim is held elsewhere. */
  function checksReading(statuses: PullStatus[]): { checks: PullChecks; reads: () => number } {
    let reads = 0;
    const store = {
      claimCheck: async () => false,
      byId: async () => ({ id: 7, status: statuses[Math.min(reads++, statuses.length - 1)] }),
    };
    const transactions = { runBookkeeping: (work: (tx: never) => Promise<unknown>) => work(undefined as never) };
    const none = undefined as never;
    const clock = { nowUnix: () => 1_000 };
    const checks = new PullChecks(store as never, none, none, none, none, none, none, none, clock as never, transactions as never, none);
    return { checks, reads: () => reads };
  }
  /** `promise`, and whether it has settled yet. */
  function watched(promise: Promise<void>): { promise: Promise<void>; done: () => boolean } {
    let settled = false;
    return { promise: promise.then(() => void (settled = true)), done: () => settled };
  }
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('waits while another drain holds the test, and returns once its result is stored', async () => {
    const { checks, reads } = checksReading([PullStatus.Checking, PullStatus.Checking, PullStatus.Mergeable]);
    const settling = watched(checks.settle(7));
    await jest.advanceTimersByTimeAsync(50);
    expect(settling.done()).toBe(false);
    await jest.advanceTimersByTimeAsync(50);
    await settling.promise;
    expect(reads()).toBe(3);
  });

  it('gives up after ten seconds when the test never ends (a stopped instance holds it)', async () => {
    const { checks, reads } = checksReading([PullStatus.Checking]);
    const settling = watched(checks.settle(7));
    await jest.advanceTimersByTimeAsync(9_900);
    expect(settling.done()).toBe(false);
    await jest.advanceTimersByTimeAsync(200);
    await settling.promise;
    expect(reads()).toBeGreaterThan(100);
  });
});
