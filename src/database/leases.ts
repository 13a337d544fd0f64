import { createHash } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { heldByDeadProcess, processToken } from '../common/process-identity';

/**
 * The table of leases: one row per name while some process holds it. Created before the migrations run (the
 * migrations themselves run under a lease), so it is not an entity and no migration creates it.
 */
const CREATE_TABLE = {
  mysql: 'CREATE TABLE IF NOT EXISTS lease (name varchar(191) NOT NULL PRIMARY KEY, holder varchar(100) NOT NULL, expires_at bigint NOT NULL) ENGINE=InnoDB',
  sqlite: 'CREATE TABLE IF NOT EXISTS lease (name varchar(191) PRIMARY KEY NOT NULL, holder varchar(100) NOT NULL, expires_at integer NOT NULL)',
};

/** How a holder proves it is alive: its lease is renewed at a third of this, and lapses after it. */
export const DEFAULT_LEASE_MS = 30_000;

export interface LeaseOptions {
  /** The lease lapses this long after its last renewal, should its holder die. */
  ttlMs?: number;
  /** Give up (LeaseTimeout) after waiting this long for another holder; default: wait as long as it takes. */
  waitMs?: number;
}

/** The lease stayed held by another process for longer than the caller would wait. */
export class LeaseTimeout extends Error {
  constructor(name: string) {
    super(`the lease "${name}" is held by another process`);
    this.name = 'LeaseTimeout';
  }
}

/**
 * Mutual exclusion that holds across processes, machines and Galera nodes: a row in the `lease` table, taken
 * with an insert that only one writer can make (its primary key) or with an update that only succeeds on a
 * lapsed row, and given back by deleting it. A holder renews its row while its work runs; a holder that died
 * leaves a row that lapses, and the next taker takes it over: at once when the holder was a process of the
 * same machine that is gone (kill -9, a crash; its token tells, see process-identity.ts). Nothing here relies
 * on `SELECT ... FOR UPDATE` or `GET_LOCK`, which Galera holds on one node only: a conflicting write on another
 * node is refused at certification (1213), and the loser simply tries again.
 */
export class Leases {
  clock: () => number = () => Date.now();
  /**
   * The runs of this process per name, as a line: each settles when its run has given the lease back. A run
   * waits for the one ahead of it here, then finds the row free at its first try, instead of polling with
   * backoff against a holder of its own process (two pushes to one repository, say) and waking up to a
   * quarter of a second after the lease came free. Other processes are still kept out by the row alone.
   */
  private readonly lines = new Map<string, Promise<void>>();

  constructor(
    private readonly dataSource: DataSource,
    /**
     * On SQLite, lease writes go through the group commit of the application's transactions (one connection,
     * whose open transaction would otherwise take them in); absent while migrations run, before any exists.
     */
    private readonly sqliteWrites?: (sql: string, parameters: unknown[]) => Promise<number>,
    /**
     * This process, as it appears in the rows it holds: another process of this machine can tell it died, and
     * any can once its liveness lease lapsed (the application's leases hold under the process's own tag).
     */
    readonly holder = processToken(),
  ) {}

  /** A lock per key (a repository's path, say) that holds across processes: one lease per key under `scope`. */
  keyed(scope: string): KeyedLeases {
    return new KeyedLeases(this, scope);
  }

  /** Creates the table when missing: harmless when several processes do it at once. */
  async prepare(): Promise<void> {
    await this.dataSource.query(this.dataSource.options.type === 'mysql' ? CREATE_TABLE.mysql : CREATE_TABLE.sqlite);
  }

  /**
   * Runs `work` while holding the lease `name`, waiting for another holder to give it back (or lapse): first
   * for the runs of this process ahead of it, in turn, then for holders elsewhere.
   */
  async run<T>(name: string, work: () => Promise<T>, options: LeaseOptions = {}): Promise<T> {
    const ttlMs = options.ttlMs ?? DEFAULT_LEASE_MS;
    const ahead = this.lines.get(name);
    let leave = (): void => undefined;
    const turn = new Promise<void>((resolve) => (leave = resolve));
    const line = ahead ? ahead.then(() => turn) : turn;
    this.lines.set(name, line);
    try {
      const started = this.clock();
      if (ahead) await this.waitInLine(name, ahead, options.waitMs);
      await this.acquire(name, ttlMs, options.waitMs === undefined ? undefined : Math.max(0, options.waitMs - (this.clock() - started)));
      const renewal = setInterval(() => void this.renew(name, ttlMs).catch(() => undefined), Math.max(10, Math.floor(ttlMs / 3)));
      renewal.unref();
      try {
        return await work();
      } finally {
        clearInterval(renewal);
        await this.release(name).catch(() => undefined);
      }
    } finally {
      leave();
      if (this.lines.get(name) === line) this.lines.delete(name);
    }
  }

  /** Waits for the run of this process ahead in line; LeaseTimeout when that takes longer than `waitMs`. */
  private async waitInLine(name: string, ahead: Promise<void>, waitMs: number | undefined): Promise<void> {
    if (waitMs === undefined) return ahead;
    if (waitMs <= 0) throw new LeaseTimeout(name);
    let timer: NodeJS.Timeout | undefined;
    const gaveUp = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new LeaseTimeout(name)), waitMs);
    });
    try {
      await Promise.race([ahead, gaveUp]);
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Records a moment (milliseconds) under `name` for every process to read, keeping the latest of those written:
   * a row of the same table that nobody holds (its `expires_at` is the moment).
   */
  async mark(name: string, moment: number): Promise<void> {
    if ((await this.change(this.insertSql(), [name, this.holder, moment])) > 0) return;
    await this.change('UPDATE lease SET holder = ?, expires_at = ? WHERE name = ? AND expires_at < ?', [this.holder, moment, name, moment]);
  }

  /** Records `value` under `name` (a row nobody holds), replacing what was there; read back with `markOf`. */
  async record(name: string, value: number): Promise<void> {
    if ((await this.change(this.insertSql(), [name, this.holder, value])) > 0) return;
    await this.change('UPDATE lease SET holder = ?, expires_at = ? WHERE name = ?', [this.holder, value, name]);
  }

  /** The moment recorded under `name` by `mark`, and whether this process wrote it; 0 when none was. */
  async markOf(name: string): Promise<{ moment: number; mine: boolean }> {
    const rows: { holder: string; expires_at: number | string }[] = await this.dataSource.query('SELECT holder, expires_at FROM lease WHERE name = ?', [name]);
    return rows.length > 0 ? { moment: Number(rows[0].expires_at), mine: rows[0].holder === this.holder } : { moment: 0, mine: false };
  }

  /** The rows named `prefix…` (marks or leases) whose moment is before `before`: lapsed leases, past marks. */
  async lapsedUnder(prefix: string, before: number): Promise<{ name: string; moment: number }[]> {
    // LIKE may match more (`_` in the prefix, SQLite's case folding): the prefix is checked exactly below.
    const rows: { name: string; expires_at: number | string }[] = await this.dataSource.query(
      'SELECT name, expires_at FROM lease WHERE name LIKE ? AND expires_at < ?',
      [`${prefix}%`, before],
    );
    return rows.filter((row) => row.name.startsWith(prefix)).map((row) => ({ name: row.name, moment: Number(row.expires_at) }));
  }

  /** Removes the row `name` if its moment is still `moment` (not renewed meanwhile). */
  async forget(name: string, moment: number): Promise<void> {
    await this.change('DELETE FROM lease WHERE name = ? AND expires_at = ?', [name, moment]);
  }

  /** Takes the lease when it is free or lapsed; false when another process holds it. */
  async tryAcquire(name: string, ttlMs = DEFAULT_LEASE_MS): Promise<boolean> {
    const now = this.clock();
    try {
      if ((await this.change(this.insertSql(), [name, this.holder, now + ttlMs])) > 0) return true;
      return (await this.change('UPDATE lease SET holder = ?, expires_at = ? WHERE name = ? AND expires_at < ?', [this.holder, now + ttlMs, name, now])) > 0;
    } catch (error) {
      // Another node's taker won certification, or the row was busy: the lease is someone else's for now.
      if (isContention(error)) return false;
      throw error;
    }
  }

  private async acquire(name: string, ttlMs: number, waitMs: number | undefined): Promise<void> {
    const started = this.clock();
    for (let attempt = 0; ; attempt++) {
      if ((await this.tryAcquire(name, ttlMs)) || (await this.takeFromDead(name, ttlMs))) return;
      if (waitMs !== undefined && this.clock() - started >= waitMs) throw new LeaseTimeout(name);
      // Short waits first (a repository creation holds its lease for milliseconds), then at most half a second.
      await new Promise((resolve) => setTimeout(resolve, Math.min(500, 5 * 2 ** Math.min(attempt, 7)) * (0.5 + Math.random())));
    }
  }

  /**
   * Takes the lease over from a holder known dead: one of this machine that is gone, or one whose liveness lease
   * lapsed (its row would otherwise keep everyone out until it lapses); false when the holder lives, is not known
   * dead, or another taker was first.
   */
  private async takeFromDead(name: string, ttlMs: number): Promise<boolean> {
    const rows: { holder: string }[] = await this.dataSource.query('SELECT holder FROM lease WHERE name = ?', [name]);
    const holder = rows[0]?.holder;
    if (holder === undefined || holder === this.holder || !heldByDeadProcess(holder)) return false;
    try {
      return (
        (await this.change('UPDATE lease SET holder = ?, expires_at = ? WHERE name = ? AND holder = ?', [this.holder, this.clock() + ttlMs, name, holder])) > 0
      );
    } catch (error) {
      if (isContention(error)) return false;
      throw error;
    }
  }

  private async renew(name: string, ttlMs: number): Promise<void> {
    await this.change('UPDATE lease SET expires_at = ? WHERE name = ? AND holder = ?', [this.clock() + ttlMs, name, this.holder]);
  }

  private async release(name: string): Promise<void> {
    await this.change('DELETE FROM lease WHERE name = ? AND holder = ?', [name, this.holder]);
  }

  private insertSql(): string {
    return this.dataSource.options.type === 'mysql'
      ? 'INSERT IGNORE INTO lease (name, holder, expires_at) VALUES (?, ?, ?)'
      : 'INSERT INTO lease (name, holder, expires_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING';
  }

  private async change(sql: string, parameters: unknown[]): Promise<number> {
    if (this.sqliteWrites && this.dataSource.options.type !== 'mysql') return this.sqliteWrites(sql, parameters);
    const runner = this.dataSource.createQueryRunner();
    try {
      const result = await runner.query(sql, parameters, true);
      return result.affected ?? 0;
    } finally {
      await runner.release();
    }
  }
}

function isContention(error: unknown): boolean {
  const e = error as { code?: string; driverError?: { code?: string } };
  const code = e.driverError?.code ?? e.code;
  return code === 'ER_LOCK_DEADLOCK' || code === 'ER_LOCK_WAIT_TIMEOUT' || code === 'SQLITE_BUSY';
}

/** Lease names longer than this are hashed (the column holds 191 characters). */
const LONGEST_NAME = 150;

/**
 * One holder at a time per key, across processes; waiters take turns as the lease frees (no strict order).
 * Used where a database row and a directory change together (a repository's creation, rename and deletion).
 */
export class KeyedLeases {
  constructor(
    private readonly leases: Leases,
    private readonly scope: string,
  ) {}

  run<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.leases.run(this.nameOf(key), work);
  }

  /** Holds every key of `keys` (taken in one order, so two callers never wait on each other in a circle). */
  async runAll<T>(keys: string[], work: () => Promise<T>): Promise<T> {
    const names = [...new Set(keys.map((key) => this.nameOf(key)))].sort();
    const hold = (index: number): Promise<T> => (index === names.length ? work() : this.leases.run(names[index], () => hold(index + 1)));
    return hold(0);
  }

  private nameOf(key: string): string {
    const name = `${this.scope}:${key}`;
    return name.length <= LONGEST_NAME ? name : `${this.scope}:#${createHash('sha256').update(key).digest('hex')}`;
  }
}
