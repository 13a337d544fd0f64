import { faultPoint } from '../common/fault-points';
import { heldByDeadProcessHere, processToken } from '../common/process-identity';
import { Logger } from '@nestjs/common';
import { WebhookConfig } from '../config/slices';
import { Transactions } from '../database/transactions';
import { SecretBox } from '../secrets/secret-box';
import { bodyForType } from './webhook-payloads';
import { AttemptOutcome, QueuedDelivery, QueueHead, SendingHook, WebhookStore } from './webhook.store';
import { AttemptResult, WebhookSender } from './webhook-sender';

// One cohesive thing, kept whole though long: the loop that holds hook queues, sends them in order and writes
// the outcomes; its leases, batches and shared writes only make sense together.

/** A delivery's bookkeeping changes no issue or pull request a kept answer shows (Transactions.runBookkeeping). */
const UNSEEN = { unseen: true };

/** An outcome waiting for the shared write; `last` gives the hook's lease back with it. */
interface OutcomeWrite {
  hookId: number;
  deliveryId: number;
  outcome: AttemptOutcome;
  last: boolean;
  /** Deliveries of the batch still claimed after this one (a batch cut short): given back with the lease. */
  unsent: boolean;
  resolve(held: boolean): void;
  reject(error: Error): void;
}

/** A hook's queue taken by this process: the hook as it is sent to, and the deliveries claimed, in order. */
interface StartedLease {
  hook: SendingHook;
  batch: QueuedDelivery[];
}

/** Deliveries one lease of a hook sends before the queue is looked at again (others get their turn). */
const BATCH = 50;
const PRUNE_EVERY_MS = 3_600_000;
/**
 * How long an outcome may wait for the outcomes of other workers to share its write, unless every worker has
 * one waiting. A commit holds the write lock (on SQLite, the database's one, which the server's writes wait for)
 * and may wait for the disk, so outcomes written as they come cost a commit for every one or two deliveries.
 */
export const OUTCOME_LINGER_MS = 10;

/**
 * Sends the outbox. Per hook, one process at a time holds the hook's queue (a lease taken with a conditional
 * update, void after its holder died) and sends its deliveries in order; a delivery that fails with a
 * retryable error waits at the head of its queue for its next attempt (exponential backoff, Retry-After
 * honoured) while other hooks go on. At most WEBHOOK_DELIVERY_WORKERS hooks are sent to at once.
 *
 * It runs in a process of its own, with a connection of its own (webhook-delivery.process.ts, started by
 * webhook-dispatcher.ts): its reads, claims and outcome writes are background work, not the server's.
 */
export class DeliveryLoop {
  private readonly logger = new Logger('Webhooks');
  private readonly active = new Set<number>();
  /** When this process last set the lease of each hook it holds (`Date.now()` before the write). */
  private readonly leaseSetAt = new Map<number, number>();
  /** Queue heads seen at the last look and not taken yet; `look` asks for a new look (work was queued). */
  private heads: QueueHead[] = [];
  private look = true;
  /**
   * Hooks whose head a look saw while this process was sending to them: work may have been queued behind the
   * batch they were sent, so their queue is taken again when that batch is done (not every hook's looked at).
   */
  private readonly busyAtLook = new Set<number>();
  /** Each hook's owner and destination host, as the last look that saw it found them. */
  private readonly keys = new Map<number, { owner: number; host: string }>();
  /** Hook secrets opened, by their sealed form (a hook's queue is taken again for every push it is sent). */
  private readonly opened = new Map<string, string>();
  private readonly running = new Set<Promise<void>>();
  private pumping = false;
  private again = false;
  /** The pump asked for by `wake`, on the next turn of the event loop. */
  private pumpSoon: NodeJS.Immediate | null = null;
  /** Whether the leases of dead processes on this machine were looked for (once, at the first pump). */
  private reclaimed = false;
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private nextPruneCheck = 0;
  /** Outcomes waiting for the next shared write, and whether one is under way. */
  private readonly writes: OutcomeWrite[] = [];
  private writing = false;
  /** The write that waits for more outcomes (OUTCOME_LINGER_MS), when one does. */
  private lingering: NodeJS.Timeout | null = null;

  constructor(
    private readonly webhookConfig: WebhookConfig,
    private readonly store: WebhookStore,
    private readonly transactions: Transactions,
    private readonly sender: WebhookSender,
    private readonly box: SecretBox,
    /** This process in lease and claim columns; another process on this machine can tell when it died. */
    private readonly token = processToken(),
  ) {}

  /** Starts looking for work: at once, then every `pollMs` (work another instance queued, retries due). */
  start(): void {
    if (this.webhookConfig.pollMs > 0) {
      this.timer = setInterval(() => this.wake(), this.webhookConfig.pollMs);
      this.timer.unref();
    }
    this.wake();
  }

  /** Stops taking work; what is in flight gets a moment to finish and have its outcome written. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    if (this.pumpSoon) clearImmediate(this.pumpSoon);
    this.scheduleWrite();
    // What is in flight finishes briefly; anything cut off is sent again later with the same UUID.
    await Promise.race([Promise.allSettled([...this.running]), new Promise((resolve) => setTimeout(resolve, 2000).unref())]);
  }

  /**
   * Looks for work soon: after a commit that queued some (`look`: the queue heads are read again), or when a
   * worker is free (the heads seen at the last look are taken first). The look waits for the end of this turn
   * of the event loop: the workers that one outcome write set free all finish in it, and their next queues are
   * then taken in one transaction, not the first alone and the others in a second.
   */
  wake(look = true): void {
    if (this.stopped) return;
    if (look) this.look = true;
    if (this.pumping) {
      this.again = true;
      return;
    }
    if (this.pumpSoon) return;
    this.pumpSoon = setImmediate(() => {
      this.pumpSoon = null;
      if (!this.stopped) void this.pump();
    });
  }

  private async pump(): Promise<void> {
    this.pumping = true;
    try {
      if (!this.reclaimed) {
        this.reclaimed = true;
        await this.reclaimFromDead();
      }
      do {
        this.again = false;
        await this.fill();
        await this.pruneWhenDue();
      } while (this.again && !this.stopped);
    } catch (error) {
      if (!this.stopped) this.logger.error(`webhook dispatch failed: ${(error as Error).message}`);
    } finally {
      this.pumping = false;
    }
  }

  /**
   * Gives back the leases and claims of processes on this machine that died holding them (this server before a
   * kill -9 and a restart, say): their hooks are sent to again at once, not after the lease lapses
   * (WEBHOOK_TIMEOUT + 5 s). What they had in flight is sent again with the same UUIDs, as after a lapse.
   */
  private async reclaimFromDead(): Promise<void> {
    const dead = (await this.store.leaseHolders(Date.now())).filter((token) => token !== this.token && heldByDeadProcessHere(token));
    if (dead.length === 0) return;
    const hooks = await this.transactions.runBookkeeping((tx) => this.store.releaseAllOf(tx, dead), UNSEEN);
    if (hooks > 0) this.logger.log(`took back the queues of ${hooks} webhooks from ${dead.length} process(es) of this machine that died sending to them`);
  }

  private async fill(): Promise<void> {
    let free = this.webhookConfig.workers - this.active.size;
    if (free <= 0) return;
    if (this.look) {
      this.look = false;
      this.heads = (await this.store.queueHeads()).sort((a, b) => a.nextAttemptMs - b.nextAttemptMs || a.deliveryId - b.deliveryId);
    }
    const now = Date.now();
    const chosen: number[] = [];
    // Fair shares: of the workers, no owner and no destination host takes more than its share among those with
    // work now (sending or due), so that hooks that hang (a receiver that never answers) hold up only their own.
    const due = this.heads.filter((head) => !this.active.has(head.hookId) && head.nextAttemptMs <= now);
    for (const head of due) if (head.ownerId !== undefined) this.keys.set(head.hookId, { owner: head.ownerId, host: head.host ?? '' });
    const ownerOf = (hookId: number) => this.keys.get(hookId)?.owner ?? -hookId;
    const hostOf = (hookId: number) => this.keys.get(hookId)?.host ?? `#${hookId}`;
    const busy = [...this.active];
    const ownerShare = fairShare(this.webhookConfig.workers, [...busy, ...due.map((head) => head.hookId)].map(ownerOf));
    const hostShare = fairShare(this.webhookConfig.workers, [...busy, ...due.map((head) => head.hookId)].map(hostOf));
    const byOwner = countOf(busy.map(ownerOf));
    const byHost = countOf(busy.map(hostOf));
    const deferred: QueueHead[] = [];
    while (free > 0 && this.heads.length > 0 && !this.stopped) {
      const head = this.heads.shift() as QueueHead;
      if (this.active.has(head.hookId)) this.busyAtLook.add(head.hookId);
      // A lease of this process on a hook it no longer sends to was given back after the look read it.
      if (this.active.has(head.hookId) || head.nextAttemptMs > now || (head.leaseExpiresMs >= now && head.leaseToken !== this.token)) continue;
      const owner = ownerOf(head.hookId);
      const host = hostOf(head.hookId);
      if ((byOwner.get(owner) ?? 0) >= ownerShare || (byHost.get(host) ?? 0) >= hostShare) {
        // Over its share now: taken when a worker of its own owner and host is free again.
        deferred.push(head);
        continue;
      }
      byOwner.set(owner, (byOwner.get(owner) ?? 0) + 1);
      byHost.set(host, (byHost.get(host) ?? 0) + 1);
      free -= 1;
      this.active.add(head.hookId);
      chosen.push(head.hookId);
    }
    this.heads.unshift(...deferred);
    if (chosen.length === 0) return;
    let started: Map<number, StartedLease>;
    try {
      started = await this.takeQueues(chosen);
    } catch (error) {
      for (const hookId of chosen) this.active.delete(hookId);
      throw error;
    }
    for (const hookId of chosen) {
      const lease = started.get(hookId);
      let full = false;
      const run: Promise<void> = (lease && !this.stopped ? this.drain(lease) : Promise.resolve(false))
        .then((wasFull) => {
          full = wasFull;
        })
        .catch((error: Error) => {
          if (!this.stopped) this.logger.error(`webhook ${hookId}: ${error.message}`);
        })
        .finally(() => {
          this.active.delete(hookId);
          this.running.delete(run);
          // A full batch leaves more behind, and a look while it was sent may have seen more of this hook's work:
          // its queue alone is taken again.
          if (this.busyAtLook.delete(hookId) || full) this.heads.push({ hookId, deliveryId: 0, nextAttemptMs: 0, leaseExpiresMs: 0, leaseToken: '' });
          this.wake(false);
        });
      this.running.add(run);
    }
  }

  /**
   * Takes the queues of `hookIds` that no other process holds, reads and claims the first deliveries of each,
   * all in one transaction: a push that queued one delivery for each of 100 hooks starts them in a few
   * statements, not in a transaction per hook. A queue found empty is given back at once.
   */
  private async takeQueues(hookIds: number[]): Promise<Map<number, StartedLease>> {
    let leasedAt = 0;
    const started = await this.transactions.runBookkeeping(async (tx) => {
      const now = Date.now();
      leasedAt = now;
      const expires = now + this.leaseMs();
      const taken = new Map<number, StartedLease>();
      const hooks = await this.store.leaseMany(
        tx,
        [...hookIds].sort((a, b) => a - b),
        this.token,
        now,
        expires,
      );
      const queues = await this.store.nextOfHooks(
        tx,
        hooks.map((hook) => hook.id),
        BATCH,
      );
      const empty: number[] = [];
      for (const hook of hooks) {
        const batch = queues.get(hook.id) ?? [];
        // A queue whose head waits for its retry is given back like an empty one: a hook may be taken again
        // without a fresh look at its head (it was busy at the look), and its retry must not come early.
        if (batch.length === 0 || batch[0].nextAttemptMs > now) empty.push(hook.id);
        else taken.set(hook.id, { hook, batch });
      }
      await this.store.claim(
        tx,
        [...taken.values()].flatMap(({ batch }) => batch.map((delivery) => delivery.id)),
        this.token,
        expires,
      );
      await this.store.releaseLeases(tx, empty, this.token);
      return taken;
    }, UNSEEN);
    // Known as set once committed (a transaction tried again sets them anew).
    for (const hookId of started.keys()) this.leaseSetAt.set(hookId, leasedAt);
    return started;
  }

  private leaseMs(): number {
    return this.webhookConfig.timeoutMs + 5000;
  }

  private open(sealed: string): string {
    if (sealed === '') return '';
    let plain = this.opened.get(sealed);
    if (plain === undefined) {
      if (this.opened.size >= 10_000) this.opened.clear();
      plain = this.box.open(sealed);
      this.opened.set(sealed, plain);
    }
    return plain;
  }

  /**
   * Sends a started lease's batch, in order, while the lease is held. Each outcome is written (with the lease
   * renewed, or given back with the last one) before the next delivery of the hook is sent, in a transaction
   * shared with the outcomes of the other hooks being sent (`record`): one commit carries the results of every
   * worker that finished meanwhile. True when the batch was full (more may wait).
   */
  private async drain({ hook, batch }: StartedLease): Promise<boolean> {
    let released = false;
    try {
      const secret = this.open(hook.secret);
      const authorization = this.open(hook.authorizationHeader);
      let held = true;
      for (let index = 0; index < batch.length && held; index++) {
        const delivery = batch[index];
        const result: AttemptResult = await this.sender.send({
          url: hook.url,
          contentType: hook.contentType === 'form' ? 'form' : 'json',
          method: hook.httpMethod === 'GET' ? 'GET' : 'POST',
          secret,
          authorization,
          uuid: delivery.uuid,
          event: delivery.event,
          payload: bodyForType(hook.type, delivery.event, delivery.payload),
        });
        if (result.delivered) faultPoint('webhook.sent');
        const outcome = this.outcome(delivery.attempts + 1, result);
        const last = index === batch.length - 1 || !outcome.done || this.stopped;
        held =
          (await this.record({ hookId: hook.id, deliveryId: delivery.id, outcome, last, unsent: index < batch.length - 1 })) && outcome.done && !this.stopped;
        released = last;
      }
      return held && batch.length === BATCH;
    } finally {
      if (!released) {
        this.leaseSetAt.delete(hook.id);
        await this.transactions
          .runBookkeeping(async (tx) => {
            await this.store.releaseClaims(tx, hook.id, this.token);
            await this.store.releaseLeases(tx, [hook.id], this.token);
          }, UNSEEN)
          .catch(() => undefined);
      }
    }
  }

  /**
   * Writes one outcome (only while this process still holds the delivery) and renews the hook's lease; true
   * when both held. Outcomes that arrive while a write is under way or lingers go together in one transaction.
   */
  private record(write: Omit<OutcomeWrite, 'resolve' | 'reject'>): Promise<boolean> {
    return new Promise<boolean>((resolve, reject) => {
      this.writes.push({ ...write, resolve, reject });
      this.scheduleWrite();
    });
  }

  /**
   * Starts the next write of outcomes: at once when every worker has its outcome waiting (no other will come)
   * or the process is stopping, else after OUTCOME_LINGER_MS, so that the outcomes of workers that finish
   * meanwhile share its commit. A write under way schedules the next when it is done.
   */
  private scheduleWrite(): void {
    if (this.writing || this.writes.length === 0) return;
    if (this.writes.length >= this.active.size || this.stopped) {
      if (this.lingering) clearTimeout(this.lingering);
      this.lingering = null;
      void this.writeOutcomes();
      return;
    }
    if (!this.lingering) {
      this.lingering = setTimeout(() => {
        this.lingering = null;
        void this.writeOutcomes();
      }, OUTCOME_LINGER_MS);
      this.lingering.unref();
    }
  }

  /** Writes the outcomes waiting, in one transaction; the next write is scheduled when it is done. */
  private async writeOutcomes(): Promise<void> {
    if (this.writing || this.writes.length === 0) return;
    this.writing = true;
    const writes = this.writes.splice(0);
    try {
      let renewed: number[] = [];
      let renewedAt = 0;
      const held = await this.transactions.runBookkeeping(async (tx) => {
        const now = Date.now();
        const expires = now + this.leaseMs();
        const answers: boolean[] = [];
        const leased = new Map<number, boolean>();
        renewed = [];
        renewedAt = now;
        const releases: number[] = [];
        for (const write of writes) {
          const finished = (await this.store.finish(tx, write.deliveryId, this.token, write.outcome)) > 0;
          if (write.last) {
            // The hook's last delivery of this lease: the rest of its claims, if any, and the lease go back
            // (the leases of all such hooks in one statement, below).
            if (write.unsent) await this.store.releaseClaims(tx, write.hookId, this.token);
            this.leaseSetAt.delete(write.hookId);
            releases.push(write.hookId);
            answers.push(finished);
            continue;
          }
          // A lease set lately is still this process's (no other takes it before it expires): the outcome's
          // conditional write (`finished`) is the proof needed. An older one is renewed, or found lost.
          if (!leased.has(write.hookId)) {
            // Set less than leaseRenewMs (2 s) ago: the next request still starts with WEBHOOK_TIMEOUT + 3 s
            // of lease left, and a hook answering in milliseconds costs a lease write every 2 s, not one each.
            const recent = now - (this.leaseSetAt.get(write.hookId) ?? 0) < this.webhookConfig.leaseRenewMs;
            const held = recent || (await this.store.lease(tx, write.hookId, this.token, now, expires)) > 0;
            if (held && !recent) renewed.push(write.hookId);
            leased.set(write.hookId, held);
          }
          answers.push(finished && leased.get(write.hookId) === true);
        }
        await this.store.releaseLeases(tx, releases, this.token);
        return answers;
      }, UNSEEN);
      // Renewals count once committed; a hook whose lease went back meanwhile has no entry to renew.
      for (const hookId of renewed) if (this.leaseSetAt.has(hookId)) this.leaseSetAt.set(hookId, renewedAt);
      writes.forEach((write, index) => write.resolve(held[index]));
    } catch (error) {
      for (const write of writes) write.reject(error as Error);
    } finally {
      this.writing = false;
      this.scheduleWrite();
    }
  }

  private outcome(attempts: number, result: AttemptResult): AttemptOutcome {
    const finished = Date.now();
    const recorded = {
      requestHeaders: JSON.stringify(result.headers),
      responseStatus: result.status,
      responseBody: result.body,
      durationMs: result.durationMs,
      deliveredMs: finished,
    };
    if (result.delivered) return { done: true, status: 'delivered', nextAttemptMs: 0, ...recorded };
    if (!result.retryable || attempts >= this.webhookConfig.maxAttempts) return { done: true, status: 'failed', nextAttemptMs: 0, ...recorded };
    return { done: false, status: 'pending', nextAttemptMs: finished + retryDelayMs(attempts, result.retryAfterMs, this.webhookConfig), ...recorded };
  }

  /** Deletes finished deliveries older than WEBHOOK_HISTORY_DAYS, once an hour across all instances. */
  private async pruneWhenDue(): Promise<void> {
    const now = Date.now();
    if (now < this.nextPruneCheck) return;
    this.nextPruneCheck = now + 60_000;
    const removed = await this.transactions.runBookkeeping(async (tx) => {
      if (!(await this.store.takeTurn(tx, 'prune-history', now, now + PRUNE_EVERY_MS))) return 0;
      return this.store.prune(tx, now - this.webhookConfig.historyDays * 86_400_000);
    }, UNSEEN);
    if (removed > 0) this.logger.log(`pruned ${removed} webhook deliveries older than ${this.webhookConfig.historyDays} days`);
  }
}

/** Workers each of the keys (one per hook with work) may hold: an equal share of all, at least one. */
export function fairShare(workers: number, keys: readonly (string | number)[]): number {
  return Math.max(1, Math.ceil(workers / Math.max(1, new Set(keys).size)));
}

function countOf<T>(keys: readonly T[]): Map<T, number> {
  const counts = new Map<T, number>();
  for (const key of keys) counts.set(key, (counts.get(key) ?? 0) + 1);
  return counts;
}

/** Exponential backoff from the first retry delay, at least what Retry-After asked, never above the cap. */
export function retryDelayMs(attempts: number, retryAfter: number | undefined, limits: { retryBaseMs: number; retryMaxMs: number }): number {
  const backoff = limits.retryBaseMs * 2 ** Math.max(0, attempts - 1);
  return Math.min(limits.retryMaxMs, Math.max(backoff, retryAfter ?? 0));
}
