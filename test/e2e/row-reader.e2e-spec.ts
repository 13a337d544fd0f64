import { DataSource } from 'typeorm';
import { RepositoryEntity } from '../../src/repos/repository.entity';
import { RepositoryStore } from '../../src/repos/repository.store';
import { AccessTokenEntity } from '../../src/users/access-token.entity';
import { AccessTokenStore } from '../../src/users/access-token.store';
import { UserEntity } from '../../src/users/user.entity';
import { UserStore } from '../../src/users/user.store';
import { OrganizationStore } from '../../src/users/organization.store';
import { BoundStatements, valueOf } from '../../src/database/bound-statements';
import { RowReader } from '../../src/database/row-reader';
import { IssueEntity } from '../../src/issues/issue.entity';
import { IssueStore } from '../../src/issues/issue.store';
import { makeOrg, makeRepo, makeUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * The hot lookups now run plain SQL with bound parameters (database/row-reader.ts) instead of
 * TypeORM's find builders. For the same rows they must return exactly the entities the builders returned.
 */
describe('hot lookups with bound parameters return what TypeORM returned', () => {
  let t: TestApp;
  let dataSource: DataSource;
  beforeAll(async () => {
    t = await startTestApp();
    dataSource = t.app.get(DataSource);
  });
  afterAll(() => t.close());

  it('user by id and by name (any case), organisation included; nothing for an unknown one', async () => {
    const { user } = await makeUser(t, { fullName: 'Zoë Ünïcode' });
    const org = await makeOrg(t, user);
    const users = t.app.get(UserStore);
    for (const entity of [user, org]) {
      const expected = await dataSource.getRepository(UserEntity).findOneBy({ id: entity.id });
      expect(await users.findById(entity.id)).toEqual(expected);
      expect(await users.findByName(entity.name.toUpperCase())).toEqual(expected);
      expect(await users.findById(entity.id)).toBeInstanceOf(UserEntity);
    }
    expect(await users.findById(987_654_321)).toBeNull();
    expect(await users.findByName('no-such-user')).toBeNull();
  });

  it('repository by id, by owner and name, and with its owner by both names', async () => {
    const owner = await makeUser(t);
    const wire = await makeRepo(t, owner, { private: true, description: 'd' });
    const repositories = t.app.get(RepositoryStore);
    const expected = await dataSource.getRepository(RepositoryEntity).findOneBy({ id: wire.id });
    expect(expected).not.toBeNull();
    expect(await repositories.findById(wire.id)).toEqual(expected);
    expect(await repositories.findByOwnerAndName(owner.user.id, wire.name.toUpperCase())).toEqual(expected);
    const both = await repositories.findWithOwnerByNames(owner.name.toUpperCase(), wire.name);
    expect(both?.repo).toEqual(expected);
    expect(both?.owner).toEqual(await dataSource.getRepository(UserEntity).findOneBy({ id: owner.user.id }));
    expect(await repositories.findWithOwnerByNames(owner.name, 'no-such-repo')).toBeNull();
    expect(await repositories.findWithOwnerByNames('no-such-owner', wire.name)).toBeNull();
  });

  it('texts of every kind come back unchanged (on MySQL the columns travel packed in one JSON array)', async () => {
    const owner = await makeUser(t);
    const wire = await makeRepo(t, owner);
    const awkward = `"quoted" 'single' back\\slash \\u0041 line\nbreak\ttab\r\u0000\u0001\u001f\u007f \u2028\u2029 ü 😀 𝄞 </script> \uFFFD`;
    await dataSource.getRepository(RepositoryEntity).update({ id: wire.id }, { description: awkward, website: '[1, "x"]', isPrivate: true });
    await dataSource.getRepository(UserEntity).update({ id: owner.user.id }, { fullName: awkward });
    const both = await t.app.get(RepositoryStore).findWithOwnerByNames(owner.name, wire.name);
    expect(both?.repo.description).toBe(awkward);
    expect(both?.repo.website).toBe('[1, "x"]');
    expect(both?.repo.isPrivate).toBe(true);
    expect(both?.owner.fullName).toBe(awkward);
    expect(both?.repo).toEqual(await dataSource.getRepository(RepositoryEntity).findOneBy({ id: wire.id }));
    // The same rows read inside a transaction (TypeORM's text protocol on MySQL).
    const reader = new RowReader(dataSource, RepositoryEntity);
    if (dataSource.options.type === 'mysql') expect(reader.columnList('r')).toMatch(/^JSON_ARRAY\(r\./);
    const inTx = await dataSource.transaction((tx) => reader.one(`${reader.select()}WHERE id = ?`, [wire.id], tx));
    expect(inTx).toEqual(both?.repo);
  });

  it('an issue body of 4 MiB of control characters comes back whole (escaped as JSON it would outgrow a packet)', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner);
    const created = await t.http.post(`/api/v1/repos/${repo.full_name}/issues`).set(withToken(owner.token)).send({ title: 'long' }).expect(201);
    const body = '\u0001'.repeat(4 * 1024 * 1024);
    await dataSource.getRepository(IssueEntity).update({ repoId: repo.id, repoIndex: created.body.number }, { body });
    // The list reads its page through RowReader.
    const page = await t.app.get(IssueStore).list({ repoId: repo.id }, { page: 1, limit: 10, offset: 0 });
    expect(page.items.map((issue) => issue.repoIndex)).toEqual([created.body.number]);
    expect(page.items[0].body.length).toBe(body.length);
    expect(page.items[0].body === body).toBe(true);
  });

  it('a token with its owner in one read', async () => {
    const owner = await makeUser(t);
    const stored = await dataSource.getRepository(AccessTokenEntity).findOneByOrFail({ uid: owner.user.id });
    const found = await t.app.get(AccessTokenStore).findWithOwner(stored.id);
    expect(found?.token).toEqual(stored);
    expect(found?.user).toEqual(await dataSource.getRepository(UserEntity).findOneBy({ id: owner.user.id }));
    expect(await t.app.get(AccessTokenStore).findWithOwner(987_654_321)).toBeNull();
  });

  it("a user's owned and member organisations in one read, as the two queries before", async () => {
    const founder = (await makeUser(t)).user;
    const loner = (await makeUser(t)).user;
    const orgs = [await makeOrg(t, founder), await makeOrg(t, founder, { visibility: 'private' })];
    const organizations = t.app.get(OrganizationStore);
    for (const user of [founder, loner]) {
      const both = await organizations.orgIdsOf(user.id);
      expect(both.owned.sort()).toEqual((await organizations.ownedOrgIds(user.id)).sort());
      expect(both.member.sort()).toEqual((await organizations.memberOrgIds(user.id)).sort());
    }
    expect((await organizations.orgIdsOf(founder.id)).owned.sort()).toEqual(orgs.map((org) => org.id).sort());
    expect(await organizations.orgIdsOf(loner.id)).toEqual({ owned: [], member: [] });
  });

  it('bound statements (prepared on MySQL) page with LIMIT/OFFSET and return the values TypeORM reads, large sizes included', async () => {
    const owner = await makeUser(t);
    const made = [];
    for (let i = 0; i < 4; i++) made.push(await makeRepo(t, owner, { private: i === 1, description: `ü ${i}` }));
    // Past 2^32, inside JavaScript's safe integers: the bigint column must come back as the same number.
    await dataSource.getRepository(RepositoryEntity).update({ id: made[2].id }, { gitSize: 2 ** 40 + 3 });
    const statements = new BoundStatements(dataSource);
    const sql = 'SELECT id, name, description, is_private, git_size, created_unix FROM repository WHERE owner_id = ? ORDER BY id LIMIT ? OFFSET ?';
    const bound = await statements.rows(sql, [owner.user.id, 2, 1]);
    expect(bound.rows.map((_, index) => Number(valueOf(bound, index, 'id')))).toEqual([made[1].id, made[2].id]);
    const reader = new RowReader(dataSource, RepositoryEntity);
    const entities = bound.rows.map((_, index) => reader.hydrate(bound, index));
    const stored = await dataSource.getRepository(RepositoryEntity).findOneByOrFail({ id: made[1].id });
    expect(entities.map((entity) => [entity.isPrivate, entity.gitSize, entity.description])).toEqual([
      [true, stored.gitSize, 'ü 1'],
      [false, 2 ** 40 + 3, 'ü 2'],
    ]);
    // Column by column, the values TypeORM's own query reads.
    const asObjects = bound.rows.map((row) => Object.fromEntries([...bound.columns].map(([name, index]) => [name, row[index]])));
    expect(asObjects).toEqual(await dataSource.query(sql, [owner.user.id, 2, 1]));
    // A whole entity, hydrated from an aliased join, equals TypeORM's.
    const joined = await statements.rows(`SELECT ${reader.columnList('r')} FROM repository r WHERE r.id = ?`, [made[2].id]);
    expect(reader.hydrate(joined, 0, 'r')).toEqual(await dataSource.getRepository(RepositoryEntity).findOneByOrFail({ id: made[2].id }));
    // Inside a transaction too.
    const inTx = await dataSource.transaction((tx) => statements.rows(sql, [owner.user.id, 2, 1], tx));
    expect(inTx.rows).toEqual(bound.rows);
    expect((await statements.rows(sql, [owner.user.id, 0, 0])).rows).toEqual([]);
  });
});
