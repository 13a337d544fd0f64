import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { AuthContext } from '../auth/auth-context';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { QuotaAdminService } from '../quota/quota-admin.service';
import { RepositoryCreation } from '../repos/repository-creation.service';
import { UsersService } from '../users/users.service';
import { MirrorRunner } from './mirror-runner';
import { MirrorScheduler } from './mirror-scheduler';
import { MirrorStore } from './mirror.store';
import { MirrorsModule } from './mirrors.module';

// The mirror schedule (docs/mirrors.md) on the real mirror table and quota (SQLite :memory:), with the clock in
// the test's hands and a runner that records what it is asked to sync instead of fetching: no network, no git
// fetch. The fetch itself is e2e's (test/e2e/mirrors*).

const NOW = 1_800_000_000;

class FakeRunner {
  readonly requested: number[] = [];
  queued: number[] = [];
  request(repoId: number): void {
    this.requested.push(repoId);
  }
  knownIds(): number[] {
    return this.queued;
  }
}

describe('MirrorScheduler (SQLite :memory:)', () => {
  let harness: ServiceHarness;
  let scheduler: MirrorScheduler;
  let store: MirrorStore;
  const runner = new FakeRunner();
  const clock = { now: NOW, nowUnix: () => clock.now };

  /** A repository of `ownerName` made a mirror: due at `next` (0: never), last synced at `updated`. */
  async function mirror(ownerName: string, name: string, next: number, updated = 0): Promise<number> {
    const users = harness.get(UsersService);
    const owner =
      (await users.byName(ownerName).catch(() => null)) ??
      (await users.create({ username: ownerName, email: `${ownerName}@example.com`, password: 'a-long-password' }));
    const created = await harness.get(RepositoryCreation).createForCaller(new AuthContext(owner, 'password', null), { name });
    await harness.dataSource.query('UPDATE repository SET is_mirror = ?, mirror_updated_unix = ? WHERE id = ?', [1, updated, created.id]);
    await harness
      .get(Transactions)
      .run((tx) => store.insert(tx, { repoId: created.id, intervalSeconds: 8 * 3600, nextUpdateUnix: next, credentials: '', lfs: false, lfsEndpoint: '' }));
    return created.id;
  }

  beforeAll(async () => {
    harness = await serviceHarness({
      imports: [MirrorsModule],
      override: (builder) => builder.overrideProvider(MirrorRunner).useValue(runner).overrideProvider(Clock).useValue(clock),
    });
    scheduler = harness.get(MirrorScheduler);
    store = harness.get(MirrorStore);
  });
  afterAll(() => harness?.close());
  beforeEach(async () => {
    runner.requested.length = 0;
    runner.queued = [];
    clock.now = NOW;
    // Every mirror of an earlier test is synced far into the future: each test sees only its own.
    await harness.dataSource.query('UPDATE mirror SET next_update_unix = ?', [NOW * 2]);
  });

  it('queues the mirrors whose next update has passed, oldest sync first, and never those at 0', async () => {
    const recent = await mirror('ann', 'recent', NOW - 10, NOW - 100);
    const old = await mirror('ann', 'old', NOW, NOW - 10_000);
    await mirror('ann', 'future', NOW + 1, 0);
    await mirror('ann', 'never', 0, 0);
    expect(await scheduler.tick()).toBe(2);
    expect(runner.requested).toEqual([old, recent]);

    clock.now = NOW + 1;
    runner.requested.length = 0;
    runner.queued = [old, recent];
    // Already queued in this process: not asked again; 'future' has come due.
    expect(await scheduler.tick()).toBe(1);
    expect(runner.requested).toHaveLength(1);
  });

  it('skips an owner over quota, who stays due and is queued once under quota again', async () => {
    const admin = harness.get(QuotaAdminService);
    const full = await mirror('bob', 'full', NOW - 1);
    await admin.createGroup('nothing-left', [{ name: 'zero', limit: 0, subjects: ['size:repos:all'] }]);
    await admin.addUserToGroup('nothing-left', 'bob');
    expect(await scheduler.tick()).toBe(0);
    expect(runner.requested).toEqual([]);

    await admin.removeUserFromGroup('nothing-left', 'bob');
    expect(await scheduler.tick()).toBe(1);
    expect(runner.requested).toEqual([full]);
  });

  it('leaves a mirror another process holds a live claim on, and takes it back once the claim expires', async () => {
    const held = await mirror('cat', 'held', NOW - 1);
    expect(await store.claim(held, 'other-process', NOW, NOW + 300)).toBe(true);
    // Of two processes, exactly one holds the claim.
    expect(await store.claim(held, 'this-process', NOW, NOW + 300)).toBe(false);
    expect(await scheduler.tick()).toBe(0);

    clock.now = NOW + 301;
    expect(await scheduler.tick()).toBe(1);
    expect(runner.requested).toEqual([held]);
  });

  it('sets the next due time when the holder releases its claim, and only the holder can', async () => {
    const synced = await mirror('dan', 'synced', NOW - 1);
    expect(await store.claim(synced, 'me', NOW, NOW + 300)).toBe(true);
    await store.release(synced, 'someone-else', NOW + 8 * 3600);
    expect(await store.findByRepository(synced)).toMatchObject({ claimedBy: 'me', nextUpdateUnix: NOW - 1 });
    await store.release(synced, 'me', NOW + 8 * 3600);
    expect(await store.findByRepository(synced)).toMatchObject({ claimedBy: '', claimExpiresUnix: 0, nextUpdateUnix: NOW + 8 * 3600 });
    expect(await scheduler.tick()).toBe(0);
    clock.now = NOW + 8 * 3600;
    expect(await scheduler.tick()).toBe(1);
  });

  it('joins a tick that is still running instead of queueing twice', async () => {
    await mirror('eve', 'once', NOW - 1);
    const [first, second] = await Promise.all([scheduler.tick(), scheduler.tick()]);
    expect([first, second]).toEqual([1, 1]);
    expect(runner.requested).toHaveLength(1);
  });
});
