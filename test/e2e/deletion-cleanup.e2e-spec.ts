import { randomBytes } from 'node:crypto';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/** Columns that name a repository: a row holding one belongs to that repository. */
const REPOSITORY_COLUMNS = new Set(['repo_id', 'repository_id', 'base_repo_id', 'head_repo_id', 'source_id']);
/** Columns that name a user; those that name an organisation. */
const USER_COLUMNS = new Set(['user_id', 'owner_id']);
const ORGANISATION_COLUMNS = new Set(['org_id', 'owner_id']);

/**
 * Tables whose rows make a deletion of their owner refused until they are gone (repositories and packages, as in
 * Forgejo), and rows that exist only beside such a row (a fork's claim beside the fork).
 */
const OWNERSHIPS = new Set(['repository', 'package', 'repository_fork']);

/**
 * Rows that outlive what they name, on purpose; each says why. Everything else keyed by a repository, a user
 * or an organisation must go with it.
 */
const KEPT: Record<string, string> = {
  // The audit log records what happened to things that are gone: that is its purpose.
  'audit_log.repo_id': 'the audit log outlives what it records',
  'audit_log.user_id': 'the audit log outlives what it records',
  'audit_log.owner_id': 'the audit log outlives what it records',
  // A pull request stays in its base repository when the fork it came from is deleted (its head shows as deleted).
  'pull_request.head_repo_id': 'a pull request outlives the fork it came from',
};

/**
 * The schema's promise that deletion leaves nothing behind, proved over every table at once: for every column
 * that names a repository (or a user, or an organisation), a row is written naming the one about to be deleted;
 * the deletion goes through the API; then no table may still name it. A table added without a cleaner fails
 * here, whatever module it belongs to.
 */
describe('deletion leaves no row behind, in any table', () => {
  let t: TestApp;
  let admin: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    admin = await makeUser(t, { admin: true });
  });
  afterAll(() => t.close());

  const q = (name: string) => t.dataSource.driver.escape(name);

  /** Every (table, column) of the schema whose column is in `names`, but those kept on purpose. */
  function keyedBy(names: Set<string>): { entity: EntityMetadata; column: ColumnMetadata }[] {
    const found: { entity: EntityMetadata; column: ColumnMetadata }[] = [];
    for (const entity of t.dataSource.entityMetadatas) {
      for (const column of entity.columns) {
        if (names.has(column.databaseName) && KEPT[`${entity.tableName}.${column.databaseName}`] === undefined) found.push({ entity, column });
      }
    }
    return found;
  }

  /** One row of `entity` with `column` = `id` and every other required column a value of its type. */
  async function plant(entity: EntityMetadata, column: ColumnMetadata, id: number): Promise<void> {
    const values: Record<string, unknown> = {};
    for (const other of entity.columns) {
      if (other.isGenerated) continue;
      if (other === column) values[other.databaseName] = id;
      else values[other.databaseName] = dummyValue(other);
    }
    // A row of this table may name it already (one per user, say): that row is the one the deletion must remove.
    const existing: { n: number | string }[] = await t.dataSource.query(
      `SELECT COUNT(*) AS n FROM ${q(entity.tableName)} WHERE ${q(column.databaseName)} = ?`,
      [id],
    );
    if (Number(existing[0].n) > 0) return;
    const names = Object.keys(values);
    const placeholders = names.map(() => '?').join(', ');
    await t.dataSource.query(`INSERT INTO ${q(entity.tableName)} (${names.map(q).join(', ')}) VALUES (${placeholders})`, Object.values(values));
  }

  async function remaining(pairs: { entity: EntityMetadata; column: ColumnMetadata }[], id: number): Promise<string[]> {
    const left: string[] = [];
    for (const { entity, column } of pairs) {
      const rows: { n: number | string }[] = await t.dataSource.query(`SELECT COUNT(*) AS n FROM ${q(entity.tableName)} WHERE ${q(column.databaseName)} = ?`, [
        id,
      ]);
      if (Number(rows[0].n) > 0) left.push(`${entity.tableName}.${column.databaseName}`);
    }
    return left;
  }

  it('deleting a repository removes every row that names it', async () => {
    const owner = await makeUser(t);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const pairs = keyedBy(REPOSITORY_COLUMNS).filter(({ entity }) => entity.tableName !== 'repository');
    expect(pairs.length).toBeGreaterThan(10);
    for (const { entity, column } of pairs) await plant(entity, column, repo.id);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    expect(await remaining(pairs, repo.id)).toEqual([]);
  });

  it('deleting a user or an organisation removes every row that names it as owner', async () => {
    const user = await makeUser(t);
    const org = await makeOrg(t, admin.user);
    // A user or organisation that still owns repositories or packages cannot be deleted (as in Forgejo): those
    // rows are the refusal's, not leftovers.
    const userPairs = keyedBy(USER_COLUMNS).filter(({ entity }) => !OWNERSHIPS.has(entity.tableName));
    expect(userPairs.length).toBeGreaterThan(5);
    for (const { entity, column } of userPairs) await plant(entity, column, user.user.id);
    const deleted = await t.http.delete(t.api(`/admin/users/${user.name}`)).set(withToken(admin.token));
    expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 204, body: {} });
    expect(await remaining(userPairs, user.user.id)).toEqual([]);
    const orgPairs = keyedBy(ORGANISATION_COLUMNS).filter(({ entity }) => !OWNERSHIPS.has(entity.tableName));
    for (const { entity, column } of orgPairs) await plant(entity, column, org.id);
    await t.http
      .delete(t.api(`/orgs/${org.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect(await remaining(orgPairs, org.id)).toEqual([]);
  });

  it('after deleting a repository and a user that had issues, comments, reactions and pull requests, no row points at a row that is gone', async () => {
    const owner = await makeUser(t);
    const poster = await makeUser(t);
    const repo = await makeRepo(t, owner, { autoInit: true });
    const as = (user: TestUser) => withToken(user.token);
    const label = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/labels`))
        .set(as(owner))
        .send({ name: 'bug', color: '#ff0000' })
        .expect(201)
    ).body;
    const issue = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/issues`))
        .set(as(poster))
        .send({ title: 'broken', body: '@' + owner.name })
        .expect(201)
    ).body;
    await t.http
      .post(t.api(`/repos/${repo.full_name}/issues/${issue.number}/labels`))
      .set(as(owner))
      .send({ labels: [label.id] })
      .expect(200);
    const comment = (
      await t.http
        .post(t.api(`/repos/${repo.full_name}/issues/${issue.number}/comments`))
        .set(as(poster))
        .send({ body: 'still broken' })
        .expect(201)
    ).body;
    await t.http
      .post(t.api(`/repos/${repo.full_name}/issues/${issue.number}/reactions`))
      .set(as(owner))
      .send({ content: 'heart' });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/issues/comments/${comment.id}/reactions`))
      .set(as(owner))
      .send({ content: '+1' });
    await t.http
      .post(t.api(`/repos/${repo.full_name}/branches`))
      .set(as(owner))
      .send({ new_branch_name: 'topic' })
      .expect(201);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/contents/topic.txt`))
      .set(as(owner))
      .send({ branch: 'topic', content: Buffer.from('topic\n').toString('base64') })
      .expect(201);
    await t.http
      .post(t.api(`/repos/${repo.full_name}/pulls`))
      .set(as(owner))
      .send({ base: 'main', head: 'topic', title: 'a change' })
      .expect(201);
    expect(await orphans()).toEqual([]);
    // The scan sees a row whose parent is gone.
    const comments = t.dataSource.entityMetadatas.find(
      (entity) => entity.columns.some((column) => column.databaseName === 'issue_id') && /comment/.test(entity.tableName),
    );
    await t.dataSource.query(`UPDATE ${q(comments!.tableName)} SET issue_id = ? WHERE id = ?`, [issue.id + 100_000, comment.id]);
    expect(await orphans()).toContain(`${comments!.tableName}.issue_id → issue`);
    await t.dataSource.query(`UPDATE ${q(comments!.tableName)} SET issue_id = ? WHERE id = ?`, [issue.id, comment.id]);

    await t.http
      .delete(t.api(`/admin/users/${poster.name}`))
      .set(withToken(admin.token))
      .expect(204);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(as(owner))
      .expect(204);
    expect(await orphans()).toEqual([]);
  });

  /**
   * Every `<thing>_id` column whose thing is a table of its own (issue_id → issue, repo_id → repository, poster_id
   * → user, …) holding an id that table no longer has, as `table.column`; 0 and negative ids name nothing (the
   * ghost of a deleted poster is -1).
   */
  async function orphans(): Promise<string[]> {
    const tables = new Set(t.dataSource.entityMetadatas.map((entity) => entity.tableName));
    const userish = /^(user|owner|org|poster|doer|pusher|merger|creator|assignee|uploader|publisher|follow|reviewer|dismisser)$/;
    const found: string[] = [];
    for (const entity of t.dataSource.entityMetadatas) {
      for (const column of entity.columns) {
        const match = /^(.*)_id$/.exec(column.databaseName);
        if (!match || column.isPrimary) continue;
        const prefix = match[1];
        const table = tables.has(prefix) ? prefix : /(^|_)repo$/.test(prefix) || prefix === 'source' ? 'repository' : userish.test(prefix) ? 'user' : null;
        if (!table || KEPT[`${entity.tableName}.${column.databaseName}`] !== undefined) continue;
        const rows: { n: number | string }[] = await t.dataSource.query(
          `SELECT COUNT(*) AS n FROM ${q(entity.tableName)} c WHERE c.${q(column.databaseName)} > 0 AND NOT EXISTS (SELECT 1 FROM ${q(table)} p WHERE p.id = c.${q(column.databaseName)})`,
        );
        if (Number(rows[0].n) > 0) found.push(`${entity.tableName}.${column.databaseName} → ${table}`);
      }
    }
    return found;
  }
});

let counter = 0;

/** A value a column of this type accepts, unique enough for unique indexes. */
function dummyValue(column: ColumnMetadata): unknown {
  counter++;
  if (column.isNullable) return null;
  // Other references point at nothing (0), as a row of one owner kind leaves the other kinds' columns.
  if (column.databaseName.endsWith('_id')) return 0;
  if (column.default !== undefined && column.default !== null && typeof column.default !== 'function') {
    return typeof column.default === 'boolean' ? Number(column.default) : column.default;
  }
  const type = typeof column.type === 'function' ? column.type.name.toLowerCase() : String(column.type).toLowerCase();
  if (/int|number|decimal|float|double|real|numeric/.test(type)) return 1_000_000 + counter;
  if (/bool/.test(type)) return 0;
  if (/date|time/.test(type)) return '2026-01-01 00:00:00';
  const length = Number(column.length) || 16;
  return `z${counter}${randomBytes(8).toString('hex')}`.slice(0, Math.max(1, Math.min(length, 24)));
}
