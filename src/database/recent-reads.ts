import { LRUCache } from 'lru-cache';
import { isSecretParameter } from '../common/secret-parameters';
import type { Transactions } from './transactions';

/** An answer with the write generation read before it was computed, and when it stops answering. */
interface Kept<T> {
  generation: number;
  expires: number;
  value: Promise<T>;
  /** The read started to replace it, while under way. */
  renewal?: Kept<T>;
}

/**
 * Answers of one kind of read (a page of issues, a pull request), kept for the same question asked again while
 * they cannot be out of date here, and for a short while at most.
 *
 * Why: clients poll the same pages (Renovate reads the issue list and its pull requests before every run, CI
 * systems poll their pull request), and a page of issues costs a dozen statements and 50 KB of JSON for rows that
 * change far less often than they are read.
 *
 * An answer is kept with the write generation of this process's transactions read *before* it was computed, and
 * answers again only while that generation is unchanged and it is younger than `ttlMs`. So within an instance a
 * read never misses a write acknowledged before it began (every write commits through Transactions, which raises
 * the generation before its caller hears back), and a write of another instance or of SQL from outside shows after
 * `ttlMs` at most. Concurrent requests for the same key wait for one computation. A failed computation is not
 * kept. Bounded: the least recently used answers go first. `ttlMs` 0 keeps nothing.
 *
 * The keys are the callers' business: they name everything the answer depends on but the rows (the viewer
 * among them when the answer is shaped for a viewer), and access is checked before asking, never inside.
 * An answer is shared by every request that asks the same key, so it is frozen, deeply: nobody can change it,
 * and the JSON writer may keep its encoding with it (src/http/json-answer.ts).
 */
export class RecentReads<T extends object> {
  private readonly entries: LRUCache<string, Kept<T>>;
  /** Milliseconds, monotonic; tests give their own. */
  clock: () => number = () => performance.now();

  constructor(
    private readonly transactions: Pick<Transactions, 'writeGeneration'>,
    private readonly ttlMs: number,
    capacity: number,
  ) {
    this.entries = new LRUCache({ max: capacity });
  }

  /** The answer kept for `key`, the one being computed, or `compute()`'s. */
  get(key: string, compute: () => Promise<T>): Promise<T> {
    if (this.ttlMs <= 0) return compute();
    const generation = this.transactions.writeGeneration;
    const now = this.clock();
    const entry = this.entries.get(key);
    if (entry && entry.generation === generation) {
      if (now < entry.expires) {
        // In its second half, a kept answer asked again is read anew beside it, so that steady readers of a page
        // never all wait for one read when it expires: under load the read shares the thread with every answer
        // served meanwhile, and takes that much longer than alone.
        if (!entry.renewal && now >= entry.expires - this.ttlMs / 2) this.renew(key, entry, this.read(generation, now, compute));
        return entry.value;
      }
      // Expired while its renewal is under way: that read began within the lifetime, so it answers, rather than a
      // second read beside it.
      const renewal = entry.renewal;
      if (renewal && renewal.generation === generation && now < renewal.expires) {
        this.entries.set(key, renewal);
        return renewal.value;
      }
    }
    const fresh = this.read(generation, now, compute);
    this.entries.set(key, fresh);
    fresh.value.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    return fresh.value;
  }

  private renew(key: string, entry: Kept<T>, next: Kept<T>): void {
    entry.renewal = next;
    next.value.then(
      () => {
        if (this.entries.get(key) === entry) this.entries.set(key, next);
        entry.renewal = undefined;
      },
      () => {
        // Failed: the kept answer stays for its lifetime, and the next request in it tries again.
        if (entry.renewal === next) entry.renewal = undefined;
        if (this.entries.get(key) === next) this.entries.delete(key);
      },
    );
  }

  private read(generation: number, now: number, compute: () => Promise<T>): Kept<T> {
    return { generation, expires: now + this.ttlMs, value: compute().then(deepFreeze) };
  }

  get size(): number {
    return this.entries.size;
  }
}

/** `value` and everything it holds, frozen. */
function deepFreeze<V>(value: V): V {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/**
 * A stable key part for a query string: its parameters in order, credentials (`token`, `access_token`, …) and
 * the paging parameters left out (the caller adds the page it reads).
 */
export function queryKey(query: Record<string, unknown>): string {
  return JSON.stringify(
    Object.keys(query)
      .filter((name) => name !== 'page' && name !== 'limit' && !isSecretParameter(name))
      .sort()
      .map((name) => [name, query[name]]),
  );
}
