import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { DataSource } from 'typeorm';
import { startTicks } from '../common/process-identity';
import { openDatabase } from './data-source';
import { Leases, LeaseTimeout } from './leases';

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open = (): void => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('Leases', () => {
  let directory: string;
  let dataSource: DataSource;

  beforeEach(async () => {
    directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-leases-'));
    dataSource = await openDatabase({ database: { type: 'sqlite', file: path.join(directory, 'anvil.db') } as never });
  });

  afterEach(async () => {
    await dataSource.destroy();
    fs.rmSync(directory, { recursive: true, force: true });
  });

  /** Leases on the test database, counting the tries to take each name. */
  async function leasesCountingTries(): Promise<{ leases: Leases; tries: Map<string, number> }> {
    const leases = new Leases(dataSource);
    await leases.prepare();
    const tries = new Map<string, number>();
    const tryAcquire = leases.tryAcquire.bind(leases);
    leases.tryAcquire = (name, ttlMs) => {
      tries.set(name, (tries.get(name) ?? 0) + 1);
      return tryAcquire(name, ttlMs);
    };
    return { leases, tries };
  }

  it('runs the runs of one process on one name in turn, each taking the free row at its first try', async () => {
    const { leases, tries } = await leasesCountingTries();
    const entered = gate();
    const first = gate();
    const order: string[] = [];
    const runs = ['a', 'b', 'c'].map((label, index) =>
      leases.run('repository-refs:1', async () => {
        order.push(`${label} in`);
        if (index === 0) {
          entered.open();
          await first.opened;
        }
        order.push(`${label} out`);
      }),
    );
    // The first run holds the lease (its row is in the table) while the two others wait behind it.
    await entered.opened;
    expect(await dataSource.query('SELECT name FROM lease')).toEqual([{ name: 'repository-refs:1' }]);
    expect(order).toEqual(['a in']);
    first.open();
    await Promise.all(runs);
    expect(order).toEqual(['a in', 'a out', 'b in', 'b out', 'c in', 'c out']);
    // Polling against a holder of this process would have tried the row more than once for the later runs.
    expect(tries.get('repository-refs:1')).toBe(3);
    expect(await dataSource.query('SELECT name FROM lease')).toEqual([]);
  });

  it('lets runs on other names go on while one name is held', async () => {
    const { leases } = await leasesCountingTries();
    const held = gate();
    const holding = leases.run('one', () => held.opened);
    await expect(leases.run('other', async () => 'done')).resolves.toBe('done');
    held.open();
    await holding;
  });

  it('gives up at once, with waitMs 0, behind a run of the same process, and the line goes on after it', async () => {
    const { leases } = await leasesCountingTries();
    const held = gate();
    const holding = leases.run('job', () => held.opened);
    await expect(leases.run('job', async () => 'ran', { waitMs: 0 })).rejects.toBeInstanceOf(LeaseTimeout);
    const next = leases.run('job', async () => 'next');
    held.open();
    await holding;
    await expect(next).resolves.toBe('next');
  });

  it('goes on with the next run when a run fails', async () => {
    const { leases } = await leasesCountingTries();
    const failing = leases.run('job', async () => {
      throw new Error('broken');
    });
    const next = leases.run('job', async () => 'next');
    await expect(failing).rejects.toThrow('broken');
    await expect(next).resolves.toBe('next');
  });

  it('still keeps out a holder of another process, whose row it waits for', async () => {
    const { leases: mine } = await leasesCountingTries();
    const theirs = new Leases(dataSource);
    const entered = gate();
    const held = gate();
    const order: string[] = [];
    const holding = theirs.run('job', async () => {
      order.push('theirs in');
      entered.open();
      await held.opened;
      order.push('theirs out');
    });
    await entered.opened;
    const waiting = mine.run('job', async () => {
      order.push('mine');
    });
    // However long it is given, it does not get in while the other process holds the row.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(order).toEqual(['theirs in']);
    held.open();
    await Promise.all([holding, waiting]);
    expect(order).toEqual(['theirs in', 'theirs out', 'mine']);
  });

  it('takes over at once the row of a holder of this machine that died, and waits out one that lives', async () => {
    const leases = new Leases(dataSource);
    await leases.prepare();
    // Another process's token: this process's, with the pid and start of a child that runs, then is killed.
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    const pid = child.pid as number;
    const theirs = leases.holder.replace(/^([0-9a-f]{12})-\d+-\d+-/, `$1-${pid}-${startTicks(pid)}-`);
    const hour = Date.now() + 3_600_000;
    await dataSource.query('INSERT INTO lease (name, holder, expires_at) VALUES (?, ?, ?)', ['repository-refs:9', theirs, hour]);

    await expect(leases.run('repository-refs:9', async () => 'in', { waitMs: 100 })).rejects.toThrow(LeaseTimeout);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    // The row would keep everyone out for an hour; its holder is gone.
    await expect(leases.run('repository-refs:9', async () => 'in', { waitMs: 60_000 })).resolves.toBe('in');
    expect(await dataSource.query('SELECT holder FROM lease WHERE name = ?', ['repository-refs:9'])).toEqual([]);
  });
});
