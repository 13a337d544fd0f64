import { randomUUID } from 'node:crypto';
import { Injectable, Logger, OnModuleDestroy } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ServiceUnavailableError } from '../common/dependency-errors';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { ActiveClaim, ClaimStore } from './claim.store';

/** A claim lives this long unless its holder renews it; a holder renews it every CLAIM_RENEW_MS. */
export const CLAIM_LIFETIME_SECONDS = 300;
const CLAIM_RENEW_MS = 60_000;
/** Claims decided on a reading that another claim made stale are decided again, at most this many times. */
const ATTEMPTS = 64;
/** How often a waiting claim looks again whether room has been made. */
const WAIT_POLL_MS = 250;
const SWEEP_EVERY_MS = 10 * 60_000;

/** What a decision answers: claim `amount` of `item` for `ownerId`; nothing to claim; or no room now. */
export type ClaimDecision = { item: string; ownerId: number; amount: number } | 'unlimited' | 'full';

/** A claim held by this process: settled with what it was for, or given back. Both are idempotent. */
export interface Claim {
  /** The amount claimed; Infinity when nothing needed claiming. */
  readonly amount: number;
  /** Removes the claim inside `tx`, the transaction that records what the claim was for. */
  settle(tx: EntityManager): Promise<void>;
  /** Gives the claim back and stops renewing it; every holder calls it when done, settled or not. */
  release(): Promise<void>;
}

const NOTHING_CLAIMED: Claim = { amount: Infinity, settle: () => Promise.resolve(), release: () => Promise.resolve() };

/** No room was made before the wait ended (its signal fired or its deadline passed). */
export class ClaimWaitEnded extends Error {}

/**
 * Claims on shared budgets (quota bytes, slots of background work) that hold across every instance on one
 * database: a decision is taken on the scope's active claims read after its version, and recorded only if the
 * version has not moved meanwhile (a conditional update); otherwise it is taken again. Claims expire unless
 * renewed, so a dead process's claims lapse by themselves.
 */
@Injectable()
export class Claims implements OnModuleDestroy {
  private readonly logger = new Logger('Claims');
  private readonly held = new Set<NodeJS.Timeout>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly store: ClaimStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {
    this.sweeper = setInterval(() => {
      this.store
        .clearExpired(this.clock.nowUnix() - CLAIM_LIFETIME_SECONDS)
        .catch((error: Error) => this.logger.warn(`expired claims not cleared: ${error.message}`));
    }, SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
    for (const timer of this.held) clearInterval(timer);
    this.held.clear();
  }

  /**
   * Decides and records one claim in `scope`. `decide` sees the scope's active claims and answers what to
   * claim (it may throw, e.g. a quota refusal); 'full' is answered as a refusal by `take`, and waited out by
   * `takeWhenRoom`.
   */
  async take(scope: string, decide: (active: ActiveClaim[]) => Promise<ClaimDecision>): Promise<Claim | 'full'> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const version = await this.store.version(scope);
      const now = this.clock.nowUnix();
      const decision = await decide(await this.store.active(scope, now));
      if (decision === 'unlimited') return NOTHING_CLAIMED;
      if (decision === 'full') return 'full';
      const claim = { id: randomUUID(), scope, ...decision, expiresUnix: now + CLAIM_LIFETIME_SECONDS, createdUnix: now };
      if (await this.transactions.run((tx) => this.store.take(tx, claim, version))) return this.hold(scope, claim.id, decision.amount);
      // Another claim or settlement came first: decide again on what it changed, after a short random pause
      // so that many contenders do not keep colliding.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 * attempt)));
    }
    throw new ServiceUnavailableError('too many concurrent claims on one budget, try again later', 1);
  }

  /**
   * Orders the transaction `tx` after every other that advances `scope` (call it first in `tx`): for changes
   * that must not interleave across instances, without `SELECT ... FOR UPDATE`, which Galera holds on one node.
   */
  serialize(tx: EntityManager, scope: string): Promise<void> {
    return this.store.advance(tx, scope);
  }

  /**
   * As `serialize`, where the database lets two writers run at once: SQLite runs one write transaction at a time
   * and needs nothing. For a count checked against a cap before an insert: call it first in `tx`, then count.
   */
  async serializeWriters(tx: EntityManager, scope: string): Promise<void> {
    if (tx.connection.options.type !== 'better-sqlite3') await this.store.advance(tx, scope);
  }

  /** As `take`, but a 'full' scope is looked at again until there is room, `signal` fires or `deadlineMs` passes. */
  async takeWhenRoom(
    scope: string,
    decide: (active: ActiveClaim[]) => Promise<ClaimDecision>,
    options: { signal?: AbortSignal; deadlineMs: number },
  ): Promise<Claim> {
    const ends = Date.now() + options.deadlineMs;
    for (;;) {
      if (options.signal?.aborted) throw new ClaimWaitEnded('the wait was abandoned');
      const claim = await this.take(scope, decide);
      if (claim !== 'full') return claim;
      if (Date.now() >= ends) throw new ClaimWaitEnded('no room was made in time');
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, WAIT_POLL_MS);
        function done(): void {
          clearTimeout(timer);
          options.signal?.removeEventListener('abort', done);
          resolve();
        }
        options.signal?.addEventListener('abort', done, { once: true });
      });
    }
  }

  private hold(scope: string, id: string, amount: number): Claim {
    const renewal = setInterval(() => {
      this.store
        .extend(id, this.clock.nowUnix() + CLAIM_LIFETIME_SECONDS)
        .catch((error: Error) => this.logger.warn(`claim ${id} not renewed: ${error.message}`));
    }, CLAIM_RENEW_MS);
    renewal.unref();
    this.held.add(renewal);
    let done = false;
    const stop = () => {
      done = true;
      clearInterval(renewal);
      this.held.delete(renewal);
    };
    return {
      amount,
      // The claim's row goes with the caller's transaction; should that roll back, release still removes it.
      settle: (tx) => this.store.settle(tx, scope, id),
      release: async () => {
        if (done) return;
        stop();
        await this.store.drop(id);
      },
    };
  }
}
