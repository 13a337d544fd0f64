import { serviceHarness, ServiceHarness } from '../../test/support/service-harness';
import { ConflictError, QuotaExceededError } from '../common/errors';
import { UsersService } from '../users/users.service';
import { QuotaAdminService } from './quota-admin.service';
import { QUOTA_GATE, QuotaGate } from './quota-gate';
import { QuotaModule } from './quota.module';
import { QuotaEngine } from './quota.engine';

// The quota rules (docs/quota.md) on the real stores and migrations: which groups apply to whom, what a rule
// refuses, and what writes in flight hold. HTTP status mapping and the 413 body are the e2e tier's.

const ZERO = '0'.repeat(40);
const COMMIT = 'a'.repeat(40);

interface Quota {
  harness: ServiceHarness;
  gate: QuotaGate;
  engine: QuotaEngine;
  admin: QuotaAdminService;
  /** A new user (the target of the checks) and its stored repository sizes. */
  user(name: string, reposPublic?: number, reposPrivate?: number): Promise<{ id: number; name: string }>;
}

async function quota(env: Record<string, string> = {}): Promise<Quota> {
  const harness = await serviceHarness({ imports: [QuotaModule], env });
  const users = harness.get(UsersService);
  return {
    harness,
    gate: harness.get<QuotaGate>(QUOTA_GATE),
    engine: harness.get(QuotaEngine),
    admin: harness.get(QuotaAdminService),
    async user(name, reposPublic = 0, reposPrivate = 0) {
      const created = await users.create({ username: name, email: `${name}@example.com`, password: 'a-long-password' });
      // What the repository triggers keep (migration 1764560000000): the owner's summed git sizes.
      await harness.dataSource.query('UPDATE repository_usage SET public_bytes = ?, private_bytes = ? WHERE owner_id = ?', [
        reposPublic,
        reposPrivate,
        created.id,
      ]);
      return { id: created.id, name: created.name };
    },
  };
}

describe('QuotaEngine (SQLite :memory:)', () => {
  let q: Quota | undefined;
  afterEach(async () => {
    await q?.harness.close();
    q = undefined;
  });

  it('allows everything while QUOTA_ENABLED is false, whatever the groups say', async () => {
    q = await quota({ QUOTA_ENABLED: 'false', QUOTA_DEFAULT_TOTAL: '1' });
    const alice = await q.user('alice', 10_000);
    await q.admin.createGroup('nothing', [{ name: 'zero', limit: 0, subjects: ['size:all'] }]);
    await q.admin.addUserToGroup('nothing', 'alice');
    expect(await q.gate.canWrite(alice.id, 'size:repos:all')).toBe(true);
    await expect(q.gate.assertCanCreateRepository(alice)).resolves.toBeUndefined();
    expect((await q.gate.reserve(alice, 'size:assets:packages:all', 'packages', 500)).amount).toBe(Infinity);
  });

  it('falls back to the built-in size:all rule of QUOTA_DEFAULT_TOTAL: usage equal to the limit is over it', async () => {
    q = await quota({ QUOTA_DEFAULT_TOTAL: '1000' });
    const under = await q.user('under', 600, 399);
    const at = await q.user('at', 600, 400);
    expect(await q.gate.canWrite(under.id, 'size:repos:all')).toBe(true);
    expect(await q.gate.canWrite(at.id, 'size:repos:all')).toBe(false);
    await expect(q.gate.assertCanCreateRepository(at)).rejects.toEqual(expect.objectContaining({ status: 413, userId: at.id, username: 'at' }));
    // The default is unlimited (-1) when QUOTA_DEFAULT_TOTAL is not set.
    await q.harness.close();
    q = await quota();
    const big = await q.user('big', 2 ** 40);
    expect(await q.gate.canWrite(big.id, 'size:all')).toBe(true);
  });

  it('applies explicit groups before QUOTA_DEFAULT_GROUPS, and the default groups before the built-in rule', async () => {
    q = await quota({ QUOTA_DEFAULT_GROUPS: 'roomy, missing', QUOTA_DEFAULT_TOTAL: '1' });
    await q.admin.createGroup('roomy', [{ name: 'ten-k', limit: 10_000, subjects: ['size:repos:all'] }]);
    await q.admin.createGroup('tight', [{ name: 'hundred', limit: 100, subjects: ['size:repos:all'] }]);
    const plain = await q.user('plain', 5_000);
    const mapped = await q.user('mapped', 5_000);
    await q.admin.addUserToGroup('tight', 'mapped');

    // 'missing' names no group: only the default groups that exist are listed.
    expect((await q.engine.listedGroups(plain.id)).map((group) => group.name)).toEqual(['roomy']);
    expect(await q.gate.canWrite(plain.id, 'size:repos:all')).toBe(true);
    expect((await q.engine.listedGroups(mapped.id)).map((group) => group.name)).toEqual(['tight']);
    expect(await q.gate.canWrite(mapped.id, 'size:repos:all')).toBe(false);

    // Out of its explicit group, the user is back under the default groups.
    await q.admin.removeUserFromGroup('tight', 'mapped');
    expect(await q.gate.canWrite(mapped.id, 'size:repos:all')).toBe(true);
  });

  it('refuses a subject no listed group covers, and allows it when one group allows it though another refuses', async () => {
    q = await quota();
    const carol = await q.user('carol', 50);
    await q.admin.createGroup('git-only', [{ name: 'git', limit: 100, subjects: ['size:git:all'] }]);
    await q.admin.addUserToGroup('git-only', 'carol');
    expect(await q.gate.canWrite(carol.id, 'size:repos:public')).toBe(true);
    expect(await q.gate.canWrite(carol.id, 'size:assets:packages:all')).toBe(false);

    await q.admin.createGroup('packages', [{ name: 'pkg', limit: -1, subjects: ['size:assets:packages:all'] }]);
    await q.admin.addUserToGroup('packages', 'carol');
    expect(await q.gate.canWrite(carol.id, 'size:assets:packages:all')).toBe(true);

    // A rule's usage sums every subject it lists: 50 public bytes counted twice reach its limit of 100.
    await q.admin.createGroup('double', [{ name: 'twice', limit: 100, subjects: ['size:repos:public', 'size:repos:all'] }]);
    await q.admin.setUserGroups('carol', ['double']);
    expect(await q.gate.canWrite(carol.id, 'size:repos:all')).toBe(false);
  });

  it('accepts a push made only of deletions even over quota, and refuses any other push then', async () => {
    q = await quota({ QUOTA_DEFAULT_TOTAL: '100' });
    const full = await q.user('full', 100);
    expect(await q.gate.canAcceptPush(full.id, [ZERO, ZERO])).toBe(true);
    expect(await q.gate.canAcceptPush(full.id, [ZERO, COMMIT])).toBe(false);
    const roomy = await q.user('roomy', 10);
    expect(await q.gate.canAcceptPush(roomy.id, [COMMIT])).toBe(true);
  });

  it('counts what writes in flight reserved, until they are released', async () => {
    q = await quota();
    const dave = await q.user('dave');
    await q.admin.createGroup('pkg', [{ name: 'pkg-100', limit: 100, subjects: ['size:assets:packages:all'] }]);
    await q.admin.addUserToGroup('pkg', 'dave');

    const first = await q.gate.reserve(dave, 'size:assets:packages:all', 'packages', 60);
    expect(first.amount).toBe(60);
    // 60 of 100 in flight: a write that must fit whole in the 40 left is refused, 'remaining' gets those 40.
    await expect(q.gate.reserve(dave, 'size:assets:packages:all', 'packages', 60, { whole: true })).rejects.toBeInstanceOf(QuotaExceededError);
    const rest = await q.gate.reserve(dave, 'size:assets:packages:all', 'packages', 'remaining');
    expect(rest.amount).toBe(40);
    // Now usage equals the limit: nothing more, not even a write of unknown size.
    await expect(q.gate.reserve(dave, 'size:assets:packages:all', 'packages', 1)).rejects.toBeInstanceOf(QuotaExceededError);

    await first.release();
    await rest.release();
    expect((await q.gate.reserve(dave, 'size:assets:packages:all', 'packages', 'remaining')).amount).toBe(100);
  });
});

describe('QuotaAdminService (SQLite :memory:)', () => {
  let q: Quota | undefined;
  afterEach(async () => {
    await q?.harness.close();
    q = undefined;
  });

  it('refuses a second rule, group or mapping of the same name (409) and keeps the first', async () => {
    q = await quota();
    await q.user('erin');
    await q.admin.createRule({ name: 'r', limit: 10, subjects: ['size:all'] });
    await expect(q.admin.createRule({ name: 'r', limit: 20, subjects: ['size:git:all'] })).rejects.toBeInstanceOf(ConflictError);
    expect(await q.admin.getRule('r')).toMatchObject({ limit: 10, subjects: ['size:all'] });

    await q.admin.createGroup('g', []);
    await expect(q.admin.createGroup('g', [])).rejects.toBeInstanceOf(ConflictError);
    await q.admin.addRuleToGroup('g', 'r');
    await expect(q.admin.addRuleToGroup('g', 'r')).rejects.toBeInstanceOf(ConflictError);
    await q.admin.addUserToGroup('g', 'erin');
    await expect(q.admin.addUserToGroup('g', 'erin')).rejects.toBeInstanceOf(ConflictError);
  });

  it('attaches an existing rule to a new group as it is, each rule once', async () => {
    q = await quota();
    await q.admin.createRule({ name: 'kept', limit: 10, subjects: ['size:all'] });
    const group = await q.admin.createGroup('g', [
      { name: 'kept', limit: 999, subjects: ['size:git:lfs'] },
      { name: 'new', limit: 5, subjects: ['size:git:lfs'] },
      { name: 'kept', limit: 1, subjects: ['size:all'] },
    ]);
    expect(group.rules.map((rule) => [rule.name, rule.limit])).toEqual([
      ['kept', 10],
      ['new', 5],
    ]);
  });

  it('takes a deleted rule out of every group, so that it no longer limits anyone', async () => {
    q = await quota();
    const fay = await q.user('fay', 500);
    await q.admin.createGroup('g', [
      { name: 'small', limit: 100, subjects: ['size:repos:all'] },
      { name: 'open', limit: -1, subjects: ['size:all'] },
    ]);
    await q.admin.addUserToGroup('g', 'fay');
    expect(await q.gate.canWrite(fay.id, 'size:repos:all')).toBe(false);
    await q.admin.deleteRule('small');
    expect((await q.admin.getGroup('g')).rules.map((rule) => rule.name)).toEqual(['open']);
    expect(await q.gate.canWrite(fay.id, 'size:repos:all')).toBe(true);
  });

  it('refuses to set groups that do not exist, and changes nothing then', async () => {
    q = await quota();
    await q.user('gus');
    await q.admin.createGroup('a', []);
    await q.admin.setUserGroups('gus', ['a']);
    await expect(q.admin.setUserGroups('gus', ['a', 'nope'])).rejects.toEqual(expect.objectContaining({ status: 422 }));
    expect((await q.admin.userQuota('gus')).groups.map((group) => group.name)).toEqual(['a']);
  });
});
