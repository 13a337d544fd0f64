import fc from 'fast-check';
import { QuotaUsageStore } from '../../src/quota/quota-usage.store';
import { makeRepo, makeUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * `repository_usage` (migration 1764560000000) is what a quota check reads instead of summing an owner's
 * repositories: after any sequence of repository writes, by Anvil or by plain SQL, every owner's row must equal
 * the sum of its repositories' stored sizes, public and private apart, and every user must have exactly one row.
 */
describe('stored repository usage per owner', () => {
  let t: TestApp;
  let usage: QuotaUsageStore;
  let user: string;

  beforeAll(async () => {
    t = await startTestApp();
    usage = t.app.get(QuotaUsageStore);
    user = t.dataSource.driver.escape('user');
  });
  afterAll(() => t.close());

  const sums = async () => {
    const rows: { id: number | string; pub: number | string | null; priv: number | string | null }[] = await t.dataSource.query(
      `SELECT u.id AS id,
              (SELECT SUM(r.git_size) FROM repository r WHERE r.owner_id = u.id AND r.is_private = 0) AS pub,
              (SELECT SUM(r.git_size) FROM repository r WHERE r.owner_id = u.id AND r.is_private <> 0) AS priv
       FROM ${user} u ORDER BY u.id`,
    );
    return rows.map((row) => ({ owner: Number(row.id), public: Number(row.pub ?? 0), private: Number(row.priv ?? 0) }));
  };
  const stored = async () => {
    const rows: { owner_id: number | string; public_bytes: number | string; private_bytes: number | string }[] = await t.dataSource.query(
      'SELECT owner_id, public_bytes, private_bytes FROM repository_usage ORDER BY owner_id',
    );
    return rows.map((row) => ({ owner: Number(row.owner_id), public: Number(row.public_bytes), private: Number(row.private_bytes) }));
  };

  it('follows repositories created and deleted through the API, and the engine reads it', async () => {
    const owner = await makeUser(t);
    const a = await makeRepo(t, owner, { private: false });
    const b = await makeRepo(t, owner, { private: true });
    await t.dataSource.query('UPDATE repository SET git_size = ? WHERE id = ?', [1000, a.id]);
    await t.dataSource.query('UPDATE repository SET git_size = ? WHERE id = ?', [234, b.id]);
    expect(await usage.usageOf(owner.user.id)).toMatchObject({ reposPublic: 1000, reposPrivate: 234 });
    expect((await t.http.delete(t.api(`/repos/${owner.name}/${b.name}`)).set(withToken(owner.token))).status).toBe(204);
    expect(await usage.usageOf(owner.user.id)).toMatchObject({ reposPublic: 1000, reposPrivate: 0 });
    expect(await stored()).toEqual(await sums());
  });

  it('equals the sums after any sequence of inserts, size, privacy and owner changes and deletions in plain SQL', async () => {
    let serial = 0;
    const operation = fc.oneof(
      fc.record({ kind: fc.constant('user' as const) }),
      fc.record({ kind: fc.constant('insert' as const), owner: fc.nat(), private: fc.boolean(), size: fc.nat(1_000_000) }),
      fc.record({ kind: fc.constant('size' as const), repo: fc.nat(), size: fc.nat(1_000_000) }),
      fc.record({ kind: fc.constant('privacy' as const), repo: fc.nat() }),
      fc.record({ kind: fc.constant('owner' as const), repo: fc.nat(), owner: fc.nat() }),
      fc.record({ kind: fc.constant('touch' as const), repo: fc.nat() }),
      fc.record({ kind: fc.constant('delete' as const), repo: fc.nat() }),
      fc.record({ kind: fc.constant('dropUser' as const), owner: fc.nat() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), async (operations) => {
        const owners: number[] = [];
        const repos: number[] = [];
        const pick = (list: number[], index: number) => list[index % list.length];
        const addUser = async () => {
          const name = `usage${process.pid}x${serial++}`;
          await t.dataSource.query(`INSERT INTO ${user} (lower_name, name, type, visibility) VALUES (?, ?, 0, 0)`, [name, name]);
          const [row] = await t.dataSource.query(`SELECT id FROM ${user} WHERE lower_name = ?`, [name]);
          owners.push(Number(row.id));
        };
        await addUser();
        for (const op of operations) {
          if (op.kind === 'user') await addUser();
          else if (op.kind === 'insert' && owners.length > 0) {
            const name = `r${serial++}`;
            await t.dataSource.query('INSERT INTO repository (owner_id, lower_name, name, is_private, git_size) VALUES (?, ?, ?, ?, ?)', [
              pick(owners, op.owner),
              name,
              name,
              op.private ? 1 : 0,
              op.size,
            ]);
            const [row] = await t.dataSource.query('SELECT id FROM repository WHERE lower_name = ?', [name]);
            repos.push(Number(row.id));
          } else if (repos.length > 0 && op.kind === 'size')
            await t.dataSource.query('UPDATE repository SET git_size = ? WHERE id = ?', [op.size, pick(repos, op.repo)]);
          else if (repos.length > 0 && op.kind === 'privacy')
            await t.dataSource.query('UPDATE repository SET is_private = 1 - is_private WHERE id = ?', [pick(repos, op.repo)]);
          else if (repos.length > 0 && owners.length > 0 && op.kind === 'owner') {
            await t.dataSource.query('UPDATE repository SET owner_id = ? WHERE id = ?', [pick(owners, op.owner), pick(repos, op.repo)]);
          } else if (repos.length > 0 && op.kind === 'touch') {
            // Every column rewritten with its own value, as an entity save does: the totals must not move.
            await t.dataSource.query(
              'UPDATE repository SET owner_id = owner_id, is_private = is_private, git_size = git_size, num_stars = num_stars + 1 WHERE id = ?',
              [pick(repos, op.repo)],
            );
          } else if (repos.length > 0 && op.kind === 'delete') {
            const id = pick(repos, op.repo);
            await t.dataSource.query('DELETE FROM repository WHERE id = ?', [id]);
            repos.splice(repos.indexOf(id), 1);
          } else if (owners.length > 0 && op.kind === 'dropUser') {
            const id = pick(owners, op.owner);
            const owned: { id: number | string }[] = await t.dataSource.query('SELECT id FROM repository WHERE owner_id = ?', [id]);
            await t.dataSource.query('DELETE FROM repository WHERE owner_id = ?', [id]);
            await t.dataSource.query(`DELETE FROM ${user} WHERE id = ?`, [id]);
            owners.splice(owners.indexOf(id), 1);
            for (const row of owned) repos.splice(repos.indexOf(Number(row.id)), 1);
          }
        }
        expect(await stored()).toEqual(await sums());
        for (const owner of owners) {
          const [expected] = (await sums()).filter((row) => row.owner === owner);
          expect(await usage.usageOf(owner, ['repos'])).toMatchObject({ reposPublic: expected.public, reposPrivate: expected.private });
        }
      }),
      { numRuns: 25, seed: 9 },
    );
  });
});
