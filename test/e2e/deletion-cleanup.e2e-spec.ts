import { randomBytes } from 'node:crypto';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';
import type { EntityMetadata } from 'typeorm/metadata/EntityMetadata';
import { makeOrg, makeRepo, makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * A column so named may name a repository, a user or an organisation. Every column of the schema so named must be
 * listed in REFERENCES (the first test fails otherwise): a new table keyed by one of them therefore needs its
 * entry, and with it a cleaner (a `user.deleted` or `repository.deleted` subscriber, src/events/subscribers.ts) or
 * a reason to keep its rows.
 */
const REFERENCE_NAME =
  /^(uid|fork_id|source_id|(.*_)?(repo|repository|user|owner|org|poster|doer|pusher|merger|creator|assignee|uploader|publisher|follow|reviewer|resolver|actor|account|target)_id)$/;

/** What a column names: a repository, a user, an organisation, or either of the last two (an owner). */
type Names = 'repository' | 'user' | 'organisation' | 'owner';

/**
 * What a row naming a deleted thing becomes. `gone`: the deletion removes it (or clears the column), proved below
 * by planting a row and deleting through the API. `refuses`: such a row makes the deletion refused until it is
 * gone, as in Forgejo (not planted: those rows are the refusal's, not leftovers). `kept`: it outlives what it
 * names, on purpose, for the reason given. `not`: the column does not hold an id of these tables.
 */
type Reference = { names: Names; after: 'gone' } | { names: Names; after: 'refuses' | 'kept' | 'not'; why: string };

const gone = (names: Names): Reference => ({ names, after: 'gone' });
const RECORD_OF_WHO = 'a record of who did it, kept as Forgejo keeps it (shown as the ghost user once the user is gone)';

/** Every column of the schema that matches REFERENCE_NAME, and what deletion does to its rows. */
const REFERENCES: Record<string, Reference> = {
  'access_token.uid': gone('user'),
  'attachment.repo_id': gone('repository'),
  'attachment.uploader_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'audit_event.actor_id': { names: 'user', after: 'kept', why: 'the audit log outlives what it records' },
  'audit_event.target_id': { names: 'user', after: 'kept', why: 'the audit log outlives what it records' },
  'collaboration.repo_id': gone('repository'),
  'collaboration.user_id': gone('user'),
  'comment.assignee_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'comment.poster_id': gone('user'),
  'comment.repo_id': gone('repository'),
  'commit_status.creator_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'commit_status.repo_id': gone('repository'),
  'deploy_key.repo_id': gone('repository'),
  'email_address.uid': gone('user'),
  'follow.follow_id': gone('user'),
  'follow.user_id': gone('user'),
  'gpg_key.owner_id': gone('owner'),
  'issue.poster_id': gone('user'),
  'issue.repo_id': gone('repository'),
  'issue_assignee.assignee_id': gone('user'),
  'issue_counter.repo_id': gone('repository'),
  'issue_label.repo_id': gone('repository'),
  'issue_mention.repo_id': gone('repository'),
  'issue_mention.user_id': gone('user'),
  'issue_push.pusher_id': { names: 'user', after: 'kept', why: 'a push waiting to be read for issue references is read whoever pushed it' },
  'issue_push.repo_id': gone('repository'),
  'issue_word.repo_id': gone('repository'),
  'label.org_id': gone('organisation'),
  'label.repo_id': gone('repository'),
  'language_stat.repo_id': gone('repository'),
  'lfs_lock.owner_id': gone('owner'),
  'lfs_lock.repository_id': gone('repository'),
  'lfs_meta_object.repository_id': gone('repository'),
  'milestone.repo_id': gone('repository'),
  'mirror.repo_id': gone('repository'),
  'oauth2_application.uid': gone('user'),
  'oauth2_record.account_id': gone('user'),
  'oauth2_record.uid': { names: 'user', after: 'not', why: "an OAuth2 session's own uid (a string), not a user id" },
  'org_user.org_id': gone('organisation'),
  'org_user.uid': {
    names: 'user',
    after: 'refuses',
    why: 'a member of an organisation cannot be deleted (Forgejo: "user still has membership of organizations")',
  },
  'package.owner_id': { names: 'owner', after: 'refuses', why: 'an owner of packages cannot be deleted (Forgejo: ErrUserOwnPackages)' },
  'package_version.creator_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'protected_branch.repo_id': gone('repository'),
  'public_key.owner_id': gone('owner'),
  'pull_auto_merge.doer_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'pull_merge_intent.merger_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'pull_merge_intent.repo_id': gone('repository'),
  'pull_request.base_repo_id': gone('repository'),
  'pull_request.head_repo_id': { names: 'repository', after: 'kept', why: 'a pull request outlives the fork it came from (its head shows as deleted)' },
  'pull_request.merger_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'quota_group_mapping.target_id': gone('owner'),
  'reaction.user_id': gone('user'),
  'release.publisher_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'release.repo_id': gone('repository'),
  'repo_topic.repo_id': gone('repository'),
  'repository.fork_id': { names: 'repository', after: 'not', why: "the repository's own row: a deleted source's forks are detached (forks.e2e-spec.ts)" },
  'repository.owner_id': { names: 'owner', after: 'refuses', why: 'an owner of repositories cannot be deleted (Forgejo: ErrUserOwnRepos)' },
  'repository_fork.owner_id': { names: 'owner', after: 'refuses', why: "a fork's claim exists only beside the fork's row, an owned repository" },
  'repository_fork.repo_id': gone('repository'),
  'repository_fork.source_id': gone('repository'),
  'review.repo_id': gone('repository'),
  'review.reviewer_id': gone('user'),
  'review_comment.poster_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'review_comment.repo_id': gone('repository'),
  'review_comment.resolver_id': { names: 'user', after: 'kept', why: RECORD_OF_WHO },
  'star.repo_id': gone('repository'),
  'star.uid': gone('user'),
  'team.org_id': gone('organisation'),
  'team_repo.org_id': gone('organisation'),
  'team_repo.repo_id': gone('repository'),
  'team_user.org_id': gone('organisation'),
  'team_user.uid': { names: 'user', after: 'refuses', why: 'a team member is a member of an organisation (see org_user.uid)' },
  'user_search_gram.user_id': gone('user'),
  'user_search_text.user_id': gone('user'),
  'watch.repo_id': gone('repository'),
  'watch.uid': gone('user'),
  'webhook.owner_id': gone('owner'),
  'webhook.repo_id': gone('repository'),
};

/** A column so named names a team of an organisation: each must be listed in TEAM_REFERENCES (the test fails otherwise). */
const TEAM_REFERENCE_NAME = /^(.*_)?team_id$/;

/** Every column of the schema that matches TEAM_REFERENCE_NAME, and what deleting the team does to its rows. */
const TEAM_REFERENCES: Record<string, { after: 'gone' } | { after: 'kept'; why: string }> = {
  'comment.assignee_team_id': { after: 'kept', why: "a timeline entry records the team asked; it names no team once the team is gone, as Forgejo's" },
  'review.reviewer_team_id': { after: 'gone' },
  'team_repo.team_id': { after: 'gone' },
  'team_user.team_id': { after: 'gone' },
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

  /** Every (table, column) of the schema that REFERENCE_NAME matches, as `table.column`. */
  function referenceColumns(): string[] {
    return t.dataSource.entityMetadatas.flatMap((entity) =>
      entity.columns.filter((column) => REFERENCE_NAME.test(column.databaseName)).map((column) => `${entity.tableName}.${column.databaseName}`),
    );
  }

  /** The (table, column) pairs whose rows must go when a thing of one of `kinds` is deleted. */
  function cleanedWith(...kinds: Names[]): { entity: EntityMetadata; column: ColumnMetadata }[] {
    const found: { entity: EntityMetadata; column: ColumnMetadata }[] = [];
    for (const entity of t.dataSource.entityMetadatas) {
      for (const column of entity.columns) {
        const reference = REFERENCES[`${entity.tableName}.${column.databaseName}`];
        if (reference?.after === 'gone' && kinds.includes(reference.names)) found.push({ entity, column });
      }
    }
    return found;
  }

  it('knows every column that may name a repository, a user or an organisation, and what deletion does to its rows', () => {
    const columns = referenceColumns();
    // A column missing here needs an entry in REFERENCES, and a cleaner or a reason to keep its rows.
    expect(columns.filter((column) => REFERENCES[column] === undefined)).toEqual([]);
    // An entry for a column that no longer exists is stale.
    expect(Object.keys(REFERENCES).filter((column) => !columns.includes(column))).toEqual([]);
  });

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
    const insert = `INSERT INTO ${q(entity.tableName)} (${names.map(q).join(', ')}) VALUES (${placeholders})`;
    try {
      await t.dataSource.query(insert, Object.values(values));
    } catch {
      for (const other of entity.columns)
        if (!other.isGenerated && other !== column && values[other.databaseName] !== null) values[other.databaseName] = dummyValue(other, true);
      await t.dataSource.query(insert, Object.values(values));
    }
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
    const pairs = cleanedWith('repository');
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
    // A user or organisation that still owns repositories or packages, or is a member of an organisation, cannot
    // be deleted (as in Forgejo): those rows are the refusal's (`refuses`), not leftovers.
    const userPairs = cleanedWith('user', 'owner');
    expect(userPairs.length).toBeGreaterThan(5);
    for (const { entity, column } of userPairs) await plant(entity, column, user.user.id);
    const deleted = await t.http.delete(t.api(`/admin/users/${user.name}`)).set(withToken(admin.token));
    expect({ status: deleted.status, body: deleted.body }).toEqual({ status: 204, body: {} });
    expect(await remaining(userPairs, user.user.id)).toEqual([]);
    const orgPairs = cleanedWith('organisation', 'owner');
    for (const { entity, column } of orgPairs) await plant(entity, column, org.id);
    await t.http
      .delete(t.api(`/orgs/${org.name}`))
      .set(withToken(admin.token))
      .expect(204);
    expect(await remaining(orgPairs, org.id)).toEqual([]);
  });

  it('knows every column that may name a team, and what deleting the team does to its rows', () => {
    const columns = t.dataSource.entityMetadatas.flatMap((entity) =>
      entity.columns.filter((column) => TEAM_REFERENCE_NAME.test(column.databaseName)).map((column) => `${entity.tableName}.${column.databaseName}`),
    );
    expect(columns.filter((column) => TEAM_REFERENCES[column] === undefined)).toEqual([]);
    expect(Object.keys(TEAM_REFERENCES).filter((column) => !columns.includes(column))).toEqual([]);
  });

  it('deleting a team removes every row that names it (its requests for reviews among them)', async () => {
    const owner = await makeUser(t);
    const member = await makeUser(t);
    const org = await makeOrg(t, owner.user);
    const repo = await makeRepo(t, owner, { org: org.name });
    const team = (
      await t.http
        .post(t.api(`/orgs/${org.name}/teams`))
        .set(withToken(owner.token))
        .send({ name: 'reviewers', permission: 'read', units: ['repo.code', 'repo.pulls'] })
        .expect(201)
    ).body;
    // Its member and repository through the API (their rows keep the organisation's counts right); the rest planted.
    await t.http
      .put(t.api(`/teams/${team.id}/members/${member.name}`))
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .put(t.api(`/teams/${team.id}/repos/${org.name}/${repo.name}`))
      .set(withToken(owner.token))
      .expect(204);
    const pairs: { entity: EntityMetadata; column: ColumnMetadata }[] = [];
    for (const entity of t.dataSource.entityMetadatas)
      for (const column of entity.columns) if (TEAM_REFERENCES[`${entity.tableName}.${column.databaseName}`]?.after === 'gone') pairs.push({ entity, column });
    expect(pairs.length).toBe(3);
    for (const { entity, column } of pairs) await plant(entity, column, team.id);
    expect(await remaining(pairs, team.id)).toHaveLength(3);
    await t.http
      .delete(t.api(`/teams/${team.id}`))
      .set(withToken(owner.token))
      .expect(204);
    expect(await remaining(pairs, team.id)).toEqual([]);
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
        const reference = REFERENCES[`${entity.tableName}.${column.databaseName}`];
        if (!table || reference?.after === 'kept') continue;
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
function dummyValue(column: ColumnMetadata, distinct = false): unknown {
  counter++;
  if (column.isNullable) return null;
  // Other references point at nothing (0), as a row of one owner kind leaves the other kinds' columns.
  if (column.databaseName.endsWith('_id')) return distinct ? -1_000_000 - counter : 0;
  if (column.default !== undefined && column.default !== null && typeof column.default !== 'function' && !(distinct && typeof column.default === 'string')) {
    return typeof column.default === 'boolean' ? Number(column.default) : column.default;
  }
  const type = typeof column.type === 'function' ? column.type.name.toLowerCase() : String(column.type).toLowerCase();
  if (/int|number|decimal|float|double|real|numeric/.test(type)) return 1_000_000 + counter;
  if (/bool/.test(type)) return 0;
  if (/date|time/.test(type)) return '2026-01-01 00:00:00';
  const length = Number(column.length) || 16;
  return `z${counter}${randomBytes(8).toString('hex')}`.slice(0, Math.max(1, Math.min(length, 24)));
}
