import type { EntityManager } from 'typeorm';
import type { WebhookConfig } from '../config/slices';
import type { Transactions } from '../database/transactions';
import type { SecretBox } from '../secrets/secret-box';
import { DeliveryLoop, OUTCOME_LINGER_MS } from './webhook-delivery-loop';
import type { AttemptResult, OutgoingRequest, WebhookSender } from './webhook-sender';
import type { AttemptOutcome, QueueHead, QueuedDelivery, SendingHook, WebhookStore } from './webhook.store';

/** One delivery per hook, kept in memory; `finished` records which transaction wrote each outcome. */
class MemoryStore {
  readonly pending = new Map<number, QueuedDelivery>();
  readonly finished: { deliveryId: number; tx: number }[] = [];

  constructor(hookIds: number[]) {
    for (const hookId of hookIds) {
      this.pending.set(hookId, { id: hookId * 10, uuid: `uuid-${hookId}`, hookId, event: 'push', attempts: 0, nextAttemptMs: 0, payload: '{}' });
    }
  }

  leaseHolders = async (): Promise<string[]> => [];
  queueHeads = async (): Promise<QueueHead[]> =>
    [...this.pending.values()].map((delivery) => ({ hookId: delivery.hookId, deliveryId: delivery.id, nextAttemptMs: 0, leaseExpiresMs: 0, leaseToken: '' }));
  leaseMany = async (_tx: EntityManager, hookIds: number[]): Promise<SendingHook[]> =>
    hookIds.map((id) => ({
      id,
      type: 'forgejo',
      url: `http://127.0.0.1/hook/${id}`,
      httpMethod: 'POST',
      contentType: 'json',
      secret: '',
      authorizationHeader: '',
    }));
  nextOfHooks = async (_tx: EntityManager, hookIds: number[]): Promise<Map<number, QueuedDelivery[]>> =>
    new Map(hookIds.map((hookId) => [hookId, this.pending.has(hookId) ? [this.pending.get(hookId) as QueuedDelivery] : []]));
  claim = async (_tx: EntityManager, ids: number[]): Promise<number> => ids.length;
  releaseLeases = async (): Promise<number> => 0;
  releaseClaims = async (): Promise<number> => 0;
  lease = async (): Promise<number> => 1;
  takeTurn = async (): Promise<boolean> => false;
  finish = async (tx: EntityManager, id: number, _token: string, outcome: AttemptOutcome): Promise<number> => {
    if (outcome.done) this.pending.delete(id / 10);
    this.finished.push({ deliveryId: id, tx: (tx as unknown as { id: number }).id });
    return 1;
  };
}

/** A sender whose requests the test answers one by one. */
class HeldSender {
  readonly waiting = new Map<string, (result: AttemptResult) => void>();

  send = (request: OutgoingRequest): Promise<AttemptResult> => new Promise((resolve) => this.waiting.set(request.uuid, resolve));

  answer(uuid: string): void {
    const resolve = this.waiting.get(uuid);
    if (!resolve) throw new Error(`no request ${uuid} waits`);
    this.waiting.delete(uuid);
    resolve({ delivered: true, retryable: false, status: 200, body: 'ok', headers: {}, durationMs: 1 });
  }
}

/**
 * Lets promises and immediates run until `done` holds (no timer is advanced). The bound is a ceiling on a broken
 * loop, in turns and in time: a loaded machine (a full parallel run) may need more turns for the same steps.
 */
async function settle(done: () => boolean): Promise<void> {
  const ceiling = Date.now() + 30_000;
  for (let turn = 0; (turn < 1000 || Date.now() < ceiling) && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
  if (!done()) throw new Error('the loop did not get there');
}

async function turns(count: number): Promise<void> {
  for (let turn = 0; turn < count; turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('DeliveryLoop outcome writes', () => {
  let store: MemoryStore;
  let sender: HeldSender;
  let loop: DeliveryLoop;
  let transactionCount: number;

  beforeEach(() => {
    // Only the linger's timer is faked: promises and immediates run as they do, and no test waits on the clock.
    jest.useFakeTimers({ doNotFake: ['Date', 'performance', 'setImmediate', 'clearImmediate', 'nextTick', 'queueMicrotask'] });
    store = new MemoryStore([1, 2, 3]);
    sender = new HeldSender();
    transactionCount = 0;
    const run = async <T>(work: (tx: EntityManager) => Promise<T>): Promise<T> => work({ id: ++transactionCount } as unknown as EntityManager);
    const transactions = { run, runBookkeeping: run };
    const config = {
      workers: 3,
      timeoutMs: 10_000,
      pollMs: 0,
      leaseRenewMs: 2000,
      maxAttempts: 8,
      retryBaseMs: 1000,
      retryMaxMs: 3_600_000,
      historyDays: 30,
    } as WebhookConfig;
    loop = new DeliveryLoop(
      config,
      store as unknown as WebhookStore,
      transactions as unknown as Transactions,
      sender as unknown as WebhookSender,
      { open: (sealed: string) => sealed } as unknown as SecretBox,
    );
    loop.start();
  });

  afterEach(async () => {
    jest.useRealTimers();
    await loop.stop();
  });

  /** Answers two of the three requests in flight; their outcomes wait for the third's (or for the linger). */
  async function answerTwoOfThree(): Promise<void> {
    await settle(() => sender.waiting.size === 3);
    sender.answer('uuid-1');
    sender.answer('uuid-2');
    await turns(20);
    expect(store.finished).toEqual([]);
  }

  it('writes the outcomes of every worker in one transaction once all of them have one waiting', async () => {
    await answerTwoOfThree();
    sender.answer('uuid-3');
    await settle(() => store.finished.length === 3);
    expect(new Set(store.finished.map((write) => write.tx)).size).toBe(1);
  });

  it('writes the outcomes waiting after OUTCOME_LINGER_MS when a worker is still sending', async () => {
    await answerTwoOfThree();
    jest.advanceTimersByTime(OUTCOME_LINGER_MS);
    await settle(() => store.finished.length === 2);
    expect(store.finished.map((write) => write.deliveryId).sort()).toEqual([10, 20]);
    expect(store.finished[0].tx).toBe(store.finished[1].tx);
    sender.answer('uuid-3');
    // The last worker still sending: nothing else will come, so its outcome goes at once.
    await settle(() => store.finished.length === 3);
    expect(store.finished[2].tx).not.toBe(store.finished[0].tx);
  });
});

describe('DeliveryLoop fair shares', () => {
  it('gives an owner whose hooks hang at most its share of the workers, so another owner is sent to at once', async () => {
    // Eight hooks of owner 1 to a receiver that never answers, queued first; one hook of owner 2 elsewhere.
    const store = new MemoryStore([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    store.queueHeads = async (): Promise<QueueHead[]> =>
      [...store.pending.values()].map((delivery) => ({
        hookId: delivery.hookId,
        deliveryId: delivery.id,
        nextAttemptMs: 0,
        leaseExpiresMs: 0,
        leaseToken: '',
        ownerId: delivery.hookId === 9 ? 2 : 1,
        host: delivery.hookId === 9 ? 'ok.example' : 'stuck.example',
      }));
    const sender = new HeldSender();
    const run = async <T>(work: (tx: EntityManager) => Promise<T>): Promise<T> => work({ id: 1 } as unknown as EntityManager);
    const config = {
      workers: 4,
      timeoutMs: 10_000,
      pollMs: 0,
      leaseRenewMs: 2000,
      maxAttempts: 8,
      retryBaseMs: 1000,
      retryMaxMs: 3_600_000,
      historyDays: 30,
    } as WebhookConfig;
    const loop = new DeliveryLoop(
      config,
      store as unknown as WebhookStore,
      { run, runBookkeeping: run } as unknown as Transactions,
      sender as unknown as WebhookSender,
      {
        open: (sealed: string) => sealed,
      } as unknown as SecretBox,
    );
    loop.start();
    try {
      await settle(() => sender.waiting.has('uuid-9'));
      await turns(20);
      // Two owners with work: two workers each at most; the hanging owner's hooks wait for their own.
      expect([...sender.waiting.keys()].filter((uuid) => uuid !== 'uuid-9')).toHaveLength(2);
      sender.answer('uuid-9');
      sender.answer('uuid-1');
      // A worker of owner 1 freed: the next hook of owner 1 takes it (owner 2 has nothing left).
      await settle(() => sender.waiting.has('uuid-3'));
    } finally {
      for (const uuid of [...sender.waiting.keys()]) sender.answer(uuid);
      await loop.stop();
    }
  });
});
