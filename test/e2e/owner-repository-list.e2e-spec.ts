import { DataSource } from 'typeorm';
import { ownerRepositoryFilter, VisibilityScope } from '../../src/repos/repository-access';
import { RepositoryEntity } from '../../src/repos/repository.entity';
import { RepositoryStore } from '../../src/repos/repository.store';
import { UserEntity } from '../../src/users/user.entity';
import { makeOrg, makeUser, uniqueName } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * GET /users/{u}/repos now reads one owner's repositories without the owners join
 * (RepositoryStore.listOfOwner after ownerRepositoryFilter). For every kind of owner and viewer scope it must
 * list and count exactly what the general query (RepositoryStore.list, the scope's SQL) lists and counts.
 */
describe('one owner’s repositories: the join-free list answers as the general query', () => {
  let t: TestApp;
  let store: RepositoryStore;
  const owners: UserEntity[] = [];
  beforeAll(async () => {
    t = await startTestApp();
    store = t.app.get(RepositoryStore);
    const repositories = t.app.get(DataSource).getRepository(RepositoryEntity);
    const founder = (await makeUser(t)).user;
    for (const visibility of ['public', 'limited', 'private'] as const) {
      owners.push((await makeUser(t, { visibility })).user);
      owners.push(await makeOrg(t, founder, { visibility }));
    }
    let n = 0;
    for (const owner of owners) {
      for (const isPrivate of [false, true, false, true, false]) {
        const name = uniqueName(`r${n++}`);
        await repositories.insert({ ownerId: owner.id, name, lowerName: name.toLowerCase(), isPrivate, defaultBranch: 'main' } as Partial<RepositoryEntity>);
      }
    }
  });
  afterAll(() => t.close());

  it('lists and counts the same for every owner, scope and page', async () => {
    const [userOwner, orgOwner] = [owners[0], owners[1]];
    const scopes: VisibilityScope[] = [
      { kind: 'public' },
      { kind: 'everything' },
      { kind: 'signed-in', uid: 999_999, ownIds: [userOwner.id, orgOwner.id], memberOrgIds: [], seesOtherOwners: true, viaGrants: false },
      {
        kind: 'signed-in',
        uid: 999_999,
        ownIds: [999_999],
        memberOrgIds: owners.filter((o) => o.isOrganization).map((o) => o.id),
        seesOtherOwners: true,
        viaGrants: false,
      },
      { kind: 'signed-in', uid: 999_999, ownIds: [999_999], memberOrgIds: [], seesOtherOwners: true, viaGrants: false },
      { kind: 'signed-in', uid: 999_999, ownIds: [999_999], memberOrgIds: [], seesOtherOwners: false, viaGrants: false },
    ];
    let compared = 0;
    for (const owner of owners) {
      for (const scope of scopes) {
        // The last page is past the end: no rows, and the total still counted.
        for (const page of [
          { offset: 0, limit: 30, page: 1 },
          { offset: 0, limit: 2, page: 1 },
          { offset: 2, limit: 2, page: 2 },
          { offset: 4, limit: 2, page: 3 },
          { offset: 10, limit: 2, page: 6 },
        ]) {
          const general = await store.list({ scope, ownerIds: [owner.id], sort: [{ key: 'id' }] }, page as never);
          const filter = ownerRepositoryFilter(scope, owner);
          const fast = filter === 'none' ? { items: [], total: 0 } : filter === 'scoped' ? general : await store.listOfOwner(owner.id, filter, page as never);
          expect({ ids: fast.items.map((r) => r.id), total: fast.total }).toEqual({ ids: general.items.map((r) => r.id), total: general.total });
          if (page.limit === 30) expect(fast.items).toEqual(general.items);
          compared += general.total;
        }
      }
    }
    expect(compared).toBeGreaterThan(100);
  });
});
