import { Logger } from '@nestjs/common';
import { RateLimiterAbstract, RateLimiterMemory } from 'rate-limiter-flexible';
import type { AppConfig } from '../config/config';
import { ServiceUnavailableError } from '../common/dependency-errors';
import { RateLimiterFactory, RateLimits } from './rate-limits';

const CONFIG = {
  rateLimits: { store: 'memory', windowMs: 60_000, signInPerIp: 3, signInPerAccount: 0, markdown: 0, tokenCreation: 0, keyUpload: 0, changePassword: 0 },
} as unknown as AppConfig;

/** A limiter whose store refuses its first `failures` calls with `error`, as a database losing a certification does. */
function flaky(failures: number, error: object): { factory: RateLimiterFactory; calls: () => number } {
  let calls = 0;
  const factory: RateLimiterFactory = (name, points, duration) => {
    const real = new RateLimiterMemory({ keyPrefix: name, points, duration });
    const wrap =
      <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
      (...args: A): Promise<R> => {
        calls++;
        if (calls <= failures) return Promise.reject(Object.assign(new Error('Deadlock found when trying to get lock; try restarting transaction'), error));
        return call(...args);
      };
    return Object.assign(Object.create(real) as RateLimiterAbstract, {
      consume: wrap(real.consume.bind(real)),
      get: wrap(real.get.bind(real)),
      reward: wrap(real.reward.bind(real)),
      delete: wrap(real.delete.bind(real)),
    });
  };
  return { factory, calls: () => calls };
}

describe('RateLimits and its store', () => {
  afterEach(() => jest.restoreAllMocks());

  it('retries a count the database aborted (deadlock, Galera certification 1213): no count is lost', async () => {
    const store = flaky(3, { code: 'ER_LOCK_DEADLOCK', errno: 1213 });
    const limits = new RateLimits(CONFIG.rateLimits, undefined, store.factory);
    for (let attempt = 0; attempt < 3; attempt++) await limits.consume('signInPerIp', 'ip:a');
    await expect(limits.consume('signInPerIp', 'ip:a')).rejects.toMatchObject({ status: 429 });
    expect(store.calls()).toBe(3 + 4);
  });

  it('logs a store failure that is not transient and answers 503, never "allowed"', async () => {
    const logged = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const limits = new RateLimits(CONFIG.rateLimits, undefined, flaky(1000, { code: 'ECONNREFUSED' }).factory);
    await expect(limits.consume('signInPerIp', 'ip:b')).rejects.toBeInstanceOf(ServiceUnavailableError);
    await expect(limits.reserve('signInPerIp', 'ip:b')).rejects.toBeInstanceOf(ServiceUnavailableError);
    expect(logged).toHaveBeenCalledWith(expect.stringContaining('rate limit signInPerIp: the store failed'));
  });

  it('reserve counts before the work and gives the count back when asked', async () => {
    const limits = new RateLimits(CONFIG.rateLimits, undefined, flaky(0, {}).factory);
    const refunds: (() => Promise<void>)[] = [];
    for (let attempt = 0; attempt < 3; attempt++) refunds.push(await limits.reserve('signInPerIp', 'ip:c'));
    await expect(limits.reserve('signInPerIp', 'ip:c')).rejects.toMatchObject({ status: 429 });
    await refunds[0]();
    await refunds[1]();
    // The refused attempt did no work and is not counted (3 of 3); two came back (1 of 3): two more fit.
    await limits.reserve('signInPerIp', 'ip:c');
    await limits.reserve('signInPerIp', 'ip:c');
    await expect(limits.reserve('signInPerIp', 'ip:c')).rejects.toMatchObject({ status: 429 });
  });

  it('a burst of refused reservations does not keep the key over its allowance once the work gives back', async () => {
    const limits = new RateLimits(CONFIG.rateLimits, undefined, flaky(0, {}).factory);
    const refunds = await Promise.all([0, 1, 2].map(() => limits.reserve('signInPerIp', 'ip:d')));
    const refused = await Promise.allSettled(Array.from({ length: 50 }, () => limits.reserve('signInPerIp', 'ip:d')));
    expect(refused.every((outcome) => outcome.status === 'rejected')).toBe(true);
    // The three in flight were right (a valid token): their counts come back, and the next three fit at once.
    for (const refund of refunds) await refund();
    for (let attempt = 0; attempt < 3; attempt++) await limits.reserve('signInPerIp', 'ip:d');
    await expect(limits.reserve('signInPerIp', 'ip:d')).rejects.toMatchObject({ status: 429 });
  });

  it("sends one key's counts to the store one at a time, other keys alongside", async () => {
    let inFlight = 0;
    const ofKey = new Map<string, number>();
    /** The most calls of a key in flight at once, and the most calls of any key while one of it was. */
    const most = new Map<string, { own: number; all: number }>();
    const factory: RateLimiterFactory = (name, points, duration) => {
      const real = new RateLimiterMemory({ keyPrefix: name, points, duration });
      return Object.assign(Object.create(real) as RateLimiterAbstract, {
        consume: async (key: string) => {
          inFlight++;
          ofKey.set(key, (ofKey.get(key) ?? 0) + 1);
          most.set(key, { own: Math.max(most.get(key)?.own ?? 0, ofKey.get(key) ?? 0), all: Math.max(most.get(key)?.all ?? 0, inFlight) });
          await new Promise((resolve) => setImmediate(resolve));
          ofKey.set(key, (ofKey.get(key) ?? 0) - 1);
          inFlight--;
          return real.consume(key);
        },
      });
    };
    const limits = new RateLimits(CONFIG.rateLimits, undefined, factory);
    const outcomes = await Promise.allSettled([
      ...Array.from({ length: 8 }, () => limits.consume('signInPerIp', 'ip:e')),
      limits.consume('signInPerIp', 'ip:f'),
    ]);
    expect(outcomes.filter((outcome) => outcome.status === 'fulfilled')).toHaveLength(3 + 1);
    // ip:e's calls never overlapped one another; ip:f's ran while one of ip:e's was in flight.
    expect(most.get('ip:e')).toEqual({ own: 1, all: 2 });
    expect(most.get('ip:f')).toEqual({ own: 1, all: 2 });
  });
});
