#!/usr/bin/env node
/*
 * Seeds the issue tracker straight into Anvil's database, for bench/issues.bench.js: SEED_ISSUE_REPOS public
 * repositories (default 1000) over the first users (by id), each with 8 labels; SEED_ISSUES issues (default
 * 100000), half of them in the first repository and the rest spread evenly over the others; about 30% closed,
 * 0 to 3 labels and 0 to 4 comments each; titles and bodies made of words with Zipf weights (support.js
 * REPOSITORY_WORDS), so that a `q` word matches from over 10% down to under 0.1% of the issues. The rows are the
 * ones the API writes: the word index (issue_word) with the tokenizer of dist/, the numbers' counters, the
 * repositories' issue counters and the issues' comment counts. Only rows, no git directories: issue routes read
 * only the database.
 *
 *   DATA_DIR=/tmp/anvil-bench SEED_COUNT=2000 node bench/seed-users.js
 *   DATA_DIR=/tmp/anvil-bench node bench/seed-issues.js               # or DATABASE_URL=mysql://…
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL; SEED_ISSUE_REPOS (default 1000, at most 100000),
 * SEED_ISSUES (default 100000, at most 2000000), SEED_TAG (default "i", part of every repository name). Seed users
 * first; run `npm run build` first. The first repository's full name is printed last (the list target).
 */
'use strict';

const { bounded, insertRows, loadDist, random, seedTag, wordPicker } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');
const { indexEntries } = loadDist('issues/issue-words');

const BATCH = 2000;
const LABELS = [
  ['bug', 'ee0701'],
  ['enhancement', '84b6eb'],
  ['question', 'cc317c'],
  ['documentation', '0075ca'],
  ['help wanted', '008672'],
  ['priority/high', 'b60205'],
  ['priority/low', 'c2e0c6'],
  ['wontfix', 'ffffff'],
];

async function main() {
  const repoCount = bounded('SEED_ISSUE_REPOS', 1000, 100000);
  const issueCount = bounded('SEED_ISSUES', 100000, 2_000_000);
  const tag = seedTag('i');
  const dataSource = await openDatabase(loadConfig(process.env));
  const escape = (name) => dataSource.driver.escape(name);
  const next = random(issueCount * 7 + repoCount);
  const word = wordPicker(next);
  const now = Math.floor(Date.now() / 1000);
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  try {
    const users = (await dataSource.query(`SELECT id, name FROM ${escape('user')} WHERE type = 0 ORDER BY id LIMIT 2000`)).map((row) => ({
      id: Number(row.id),
      name: row.name,
    }));
    if (users.length < 10) {
      console.error('too few users: seed users first (bench/seed-users.js)');
      process.exit(2);
    }
    // Repositories, owned round-robin by the first users, public, with the tracker on.
    const repos = [];
    for (let i = 0; i < repoCount; i++) {
      const owner = users[i % users.length];
      repos.push({ ownerId: owner.id, ownerName: owner.name, name: `issues-${tag}${i}` });
    }
    await dataSource.transaction(async (tx) => {
      await insertRows(
        tx,
        'repository',
        ['owner_id', 'lower_name', 'name', 'description', 'default_branch', 'object_format_name', 'is_private', 'is_empty', 'created_unix', 'updated_unix'],
        repos.map((r) => [r.ownerId, r.name, r.name, '', 'main', 'sha1', 0, 1, now, now]),
      );
    });
    for (const repo of repos) {
      const [row] = await dataSource.query('SELECT id FROM repository WHERE owner_id = ? AND lower_name = ?', [repo.ownerId, repo.name]);
      repo.id = Number(row.id);
    }
    await dataSource.transaction(async (tx) => {
      await insertRows(
        tx,
        'label',
        ['repo_id', 'org_id', 'name', 'color', 'description', 'exclusive', 'archived_unix', 'created_unix', 'updated_unix'],
        repos.flatMap((r) => LABELS.map(([name, color]) => [r.id, 0, name, `#${color}`, `${name} issues`, name.includes('/') ? 1 : 0, 0, now, now])),
      );
    });
    const labelIds = new Map();
    for (const row of await dataSource.query('SELECT id, repo_id FROM label ORDER BY id')) {
      const list = labelIds.get(Number(row.repo_id)) ?? [];
      list.push(Number(row.id));
      labelIds.set(Number(row.repo_id), list);
    }
    console.log(`${repoCount} repositories and their labels seeded (${elapsed()})`);

    // Which repository each issue goes to: the first takes half, the others the rest in turn.
    const repoOf = (n) => (n < issueCount / 2 || repos.length === 1 ? repos[0] : repos[1 + (n % (repos.length - 1))]);
    const numbers = new Map();
    const opened = new Map();
    const closedCount = new Map();
    for (let offset = 0; offset < issueCount; offset += BATCH) {
      const issues = [];
      for (let n = offset; n < Math.min(issueCount, offset + BATCH); n++) {
        const repo = repoOf(n);
        const index = (numbers.get(repo.id) ?? 0) + 1;
        numbers.set(repo.id, index);
        const title = `${word()} ${word()} ${word()} ${word()} ${word()}`;
        const body = Array.from({ length: 12 }, () => word()).join(' ');
        const closed = next() < 0.3;
        const created = now - Math.floor((issueCount - n) * 60 + next() * 30);
        const comments = Math.floor(next() * 5);
        const poster = users[Math.floor(next() ** 2 * users.length)];
        const labels = (labelIds.get(repo.id) ?? []).filter(() => next() < 0.2).slice(0, 3);
        issues.push({ repo, index, title, body, closed, created, comments, poster, labels });
        if (closed) closedCount.set(repo.id, (closedCount.get(repo.id) ?? 0) + 1);
        opened.set(repo.id, (opened.get(repo.id) ?? 0) + 1);
      }
      await dataSource.transaction(async (tx) => {
        await insertRows(
          tx,
          'issue',
          [
            'repo_id',
            'repo_index',
            'poster_id',
            'title',
            'body',
            'ref',
            'milestone_id',
            'is_pull',
            'is_closed',
            'is_locked',
            'num_comments',
            'pin_order',
            'deadline_unix',
            'created_unix',
            'updated_unix',
            'closed_unix',
          ],
          issues.map((i) => [
            i.repo.id,
            i.index,
            i.poster.id,
            i.title,
            i.body,
            '',
            0,
            0,
            i.closed ? 1 : 0,
            0,
            i.comments,
            0,
            0,
            i.created,
            i.created + i.comments * 60,
            i.closed ? i.created + 3600 : 0,
          ]),
        );
        const ids = new Map();
        for (const repoId of new Set(issues.map((i) => i.repo.id))) {
          const indexes = issues.filter((i) => i.repo.id === repoId).map((i) => i.index);
          const rows = await tx.query(`SELECT id, repo_index FROM issue WHERE repo_id = ? AND repo_index BETWEEN ? AND ?`, [
            repoId,
            Math.min(...indexes),
            Math.max(...indexes),
          ]);
          for (const row of rows) ids.set(`${repoId}:${row.repo_index}`, Number(row.id));
        }
        const idOf = (i) => ids.get(`${i.repo.id}:${i.index}`);
        await insertRows(
          tx,
          'issue_word',
          ['issue_id', 'repo_id', 'word'],
          issues.flatMap((i) => indexEntries(i.title, i.body).map((w) => [idOf(i), i.repo.id, w])),
        );
        await insertRows(
          tx,
          'issue_label',
          ['issue_id', 'label_id', 'repo_id', 'is_closed', 'is_pull'],
          issues.flatMap((i) => i.labels.map((labelId) => [idOf(i), labelId, i.repo.id, i.closed ? 1 : 0, 0])),
        );
        await insertRows(
          tx,
          'comment',
          ['type', 'issue_id', 'repo_id', 'poster_id', 'body', 'commit_sha', 'created_unix', 'updated_unix'],
          issues.flatMap((i) =>
            Array.from({ length: i.comments }, (_, c) => [
              0,
              idOf(i),
              i.repo.id,
              i.poster.id,
              `${word()} ${word()} ${word()}`,
              '',
              i.created + (c + 1) * 60,
              i.created + (c + 1) * 60,
            ]),
          ),
        );
      });
      const done = Math.min(issueCount, offset + BATCH);
      if (done % 20000 === 0 || done === issueCount) console.log(`${done} issues seeded (${elapsed()})`);
    }
    await dataSource.transaction(async (tx) => {
      for (const repo of repos) {
        const max = numbers.get(repo.id) ?? 0;
        await tx.query('INSERT INTO issue_counter (repo_id, max_index) VALUES (?, ?)', [repo.id, max]);
        await tx.query('UPDATE repository SET num_issues = ?, num_closed_issues = ? WHERE id = ?', [
          opened.get(repo.id) ?? 0,
          closedCount.get(repo.id) ?? 0,
          repo.id,
        ]);
      }
    });
    console.log(`${issueCount} issues over ${repoCount} repositories (${elapsed()})`);
    console.log(`${repos[0].ownerName}/${repos[0].name}`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
