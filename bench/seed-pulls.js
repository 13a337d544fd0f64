#!/usr/bin/env node
/*
 * Seeds pull requests straight into Anvil's database and repository directories, for bench/pulls.bench.js. Three
 * public repositories of one owner (SEED_PULL_OWNER, default the first user by id; the push part of the
 * benchmark pushes as that user):
 *
 *   pulls-{tag}      SEED_PULLS pull requests (default 10 000), about 30% closed, 0-2 of 8 labels and 0-3 comments
 *                    each, posters drawn from the first 2 000 users
 *   push-{tag}-busy  SEED_PUSH_PULLS open pull requests (default 200), all into `main`
 *   push-{tag}-idle  the same git content, no pull request
 *
 * Git: each repository directory is made where the server keeps it (`git init --bare`, `main` with one commit,
 * then one branch `pr/N` per pull request, one commit on top of `main` adding one file, by git fast-import; refs
 * packed). The server's hooks come from its own `core.hooksPath`, so a push to these directories is a push like
 * any other. Posters are the first 2 000 users (at least 2 needed). Rows: as the API writes them: the repository (not empty, `num_pulls` / `num_closed_pulls`), one issue
 * per pull request (`is_pull`, with its word index by the tokenizer of dist/, its labels and comments, comment
 * counts), the pull_request row as a finished mergeability test leaves it (mergeable, head/base/merge base
 * commits from git, 1 addition in 1 file, 1 commit ahead) and the issue counter.
 *
 *   DATA_DIR=/tmp/anvil-bench SEED_COUNT=2000 node bench/seed-users.js
 *   DATA_DIR=/tmp/anvil-bench node bench/seed-pulls.js                 # or DATABASE_URL=mysql://…
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL (DATA_DIR also for MariaDB: the repository
 * directories), SEED_PULL_OWNER, SEED_PULLS (at most 200 000), SEED_PUSH_PULLS (at most 5 000), SEED_TAG (default
 * "p"). Seed users first; run `npm run build` first; start the server afterwards (or restart it). Prints the three
 * repositories' full names last.
 */
'use strict';

const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { bounded, insertRows, loadDist, random, seedTag, wordPicker } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');
const { indexEntries } = loadDist('issues/issue-words');
const { repositoryPath } = loadDist('git/repository-paths');

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
const gitEnv = { PATH: process.env.PATH, HOME: '/nonexistent', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' };

function git(dir, args, input) {
  const result = spawnSync('git', ['--git-dir', dir, ...args], { env: gitEnv, input, maxBuffer: 256 * 1024 * 1024 });
  if (result.status !== 0) throw new Error(`git ${args[0]} exited ${result.status}: ${result.stderr}`);
  return result.stdout.toString();
}

/** A bare repository with `main` and `pr/1` … `pr/{count}`, each one commit on `main`; the tips by branch. */
function makeGit(dir, count, now) {
  if (fs.existsSync(dir)) throw new Error(`${dir} exists: pick another SEED_TAG`);
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  const made = spawnSync('git', ['init', '--quiet', '--bare', '-b', 'main', dir], { env: gitEnv });
  if (made.status !== 0) throw new Error(`git init: ${made.stderr}`);
  const lines = [];
  const who = `Bench <bench@example.com> ${now} +0000`;
  const data = (text) => `data ${Buffer.byteLength(text)}\n${text}`;
  lines.push('commit refs/heads/main', 'mark :1', `author ${who}`, `committer ${who}`, data('Initial commit'), `M 100644 inline README.md`, data('# bench\n'));
  for (let n = 1; n <= count; n++) {
    lines.push(
      `commit refs/heads/pr/${n}`,
      `author ${who}`,
      `committer ${who}`,
      data(`Change ${n}`),
      'from :1',
      `M 100644 inline changes/${n}.txt`,
      data(`change ${n}\n`),
    );
  }
  git(dir, ['fast-import', '--quiet'], `${lines.join('\n')}\n`);
  git(dir, ['pack-refs', '--all']);
  const tips = new Map();
  for (const line of git(dir, ['for-each-ref', '--format=%(refname:short) %(objectname)', 'refs/heads/']).trim().split('\n')) {
    const [branch, sha] = line.split(' ');
    tips.set(branch, sha);
  }
  return tips;
}

async function main() {
  const pullCount = bounded('SEED_PULLS', 10000, 200000);
  const pushPulls = bounded('SEED_PUSH_PULLS', 200, 5000);
  const tag = seedTag('p');
  const config = loadConfig(process.env);
  const dataSource = await openDatabase(config);
  const escape = (name) => dataSource.driver.escape(name);
  const next = random(pullCount * 5 + pushPulls);
  const word = wordPicker(next);
  const now = Math.floor(Date.now() / 1000);
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  try {
    const users = (await dataSource.query(`SELECT id, name FROM ${escape('user')} WHERE type = 0 ORDER BY id LIMIT 2000`)).map((row) => ({
      id: Number(row.id),
      name: row.name,
    }));
    if (users.length < 2) {
      console.error('too few users: seed users first (bench/seed-users.js)');
      process.exit(2);
    }
    const ownerName = process.env.SEED_PULL_OWNER;
    const owner = ownerName
      ? (await dataSource.query(`SELECT id, name FROM ${escape('user')} WHERE lower_name = ?`, [ownerName.toLowerCase()])).map((row) => ({
          id: Number(row.id),
          name: row.name,
        }))[0]
      : users[0];
    if (!owner) {
      console.error(`no user ${ownerName}`);
      process.exit(2);
    }
    const repos = [
      { name: `pulls-${tag}`, pulls: pullCount, closedShare: 0.3 },
      { name: `push-${tag}-busy`, pulls: pushPulls, closedShare: 0 },
      { name: `push-${tag}-idle`, pulls: 0, branches: pushPulls, closedShare: 0 },
    ];
    for (const repo of repos) {
      repo.tips = makeGit(repositoryPath(config.dataDir, owner.name, repo.name), repo.branches ?? repo.pulls, now - 86400);
      console.log(`${repo.name}: git with ${repo.tips.size} branches (${elapsed()})`);
    }
    await dataSource.transaction(async (tx) => {
      await insertRows(
        tx,
        'repository',
        ['owner_id', 'lower_name', 'name', 'description', 'default_branch', 'object_format_name', 'is_private', 'is_empty', 'created_unix', 'updated_unix'],
        repos.map((r) => [owner.id, r.name, r.name, 'pull request benchmark', 'main', 'sha1', 0, 0, now - 86400, now - 86400]),
      );
    });
    for (const repo of repos) {
      const [row] = await dataSource.query('SELECT id FROM repository WHERE owner_id = ? AND lower_name = ?', [owner.id, repo.name]);
      repo.id = Number(row.id);
    }
    await dataSource.transaction(async (tx) => {
      await insertRows(
        tx,
        'label',
        ['repo_id', 'org_id', 'name', 'color', 'description', 'exclusive', 'archived_unix', 'created_unix', 'updated_unix'],
        repos.flatMap((r) => LABELS.map(([name, color]) => [r.id, 0, name, `#${color}`, `${name} pull requests`, name.includes('/') ? 1 : 0, 0, now, now])),
      );
    });
    for (const repo of repos)
      repo.labels = (await dataSource.query('SELECT id FROM label WHERE repo_id = ? ORDER BY id', [repo.id])).map((row) => Number(row.id));

    for (const repo of repos) {
      let closed = 0;
      const mainSha = repo.tips.get('main');
      for (let offset = 0; offset < repo.pulls; offset += BATCH) {
        const pulls = [];
        for (let n = offset + 1; n <= Math.min(repo.pulls, offset + BATCH); n++) {
          const isClosed = next() < repo.closedShare;
          if (isClosed) closed += 1;
          const created = now - Math.floor((repo.pulls - n) * 60 + next() * 30) - 3600;
          const comments = Math.floor(next() * 4);
          pulls.push({
            index: n,
            title: `${word()} ${word()} ${word()} ${word()}`,
            body: Array.from({ length: 12 }, () => word()).join(' '),
            isClosed,
            created,
            comments,
            poster: users[Math.floor(next() ** 2 * users.length)],
            labels: repo.labels.filter(() => next() < 0.12).slice(0, 2),
          });
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
            pulls.map((p) => [
              repo.id,
              p.index,
              p.poster.id,
              p.title,
              p.body,
              '',
              0,
              1,
              p.isClosed ? 1 : 0,
              0,
              p.comments,
              0,
              0,
              p.created,
              p.created + p.comments * 60,
              p.isClosed ? p.created + 3600 : 0,
            ]),
          );
          const ids = new Map();
          for (const row of await tx.query('SELECT id, repo_index FROM issue WHERE repo_id = ? AND repo_index BETWEEN ? AND ?', [
            repo.id,
            pulls[0].index,
            pulls[pulls.length - 1].index,
          ]))
            ids.set(Number(row.repo_index), Number(row.id));
          await insertRows(
            tx,
            'pull_request',
            [
              'issue_id',
              'repo_index',
              'base_repo_id',
              'head_repo_id',
              'head_branch',
              'base_branch',
              'head_commit_id',
              'base_commit_id',
              'merge_base',
              'status',
              'conflicted_files',
              'commits_ahead',
              'commits_behind',
              'additions',
              'deletions',
              'changed_files',
              'allow_maintainer_edit',
              'has_merged',
              'merged_commit_id',
              'merger_id',
              'merged_unix',
              'check_version',
              'check_claimed_until',
            ],
            pulls.map((p) => [
              ids.get(p.index),
              p.index,
              repo.id,
              repo.id,
              `pr/${p.index}`,
              'main',
              repo.tips.get(`pr/${p.index}`),
              mainSha,
              mainSha,
              2,
              '[]',
              1,
              0,
              1,
              0,
              1,
              0,
              0,
              '',
              0,
              0,
              1,
              0,
            ]),
          );
          await insertRows(
            tx,
            'issue_word',
            ['issue_id', 'repo_id', 'word'],
            pulls.flatMap((p) => indexEntries(p.title, p.body).map((w) => [ids.get(p.index), repo.id, w])),
          );
          await insertRows(
            tx,
            'issue_label',
            ['issue_id', 'label_id', 'repo_id', 'is_closed', 'is_pull'],
            pulls.flatMap((p) => p.labels.map((labelId) => [ids.get(p.index), labelId, repo.id, p.isClosed ? 1 : 0, 1])),
          );
          await insertRows(
            tx,
            'comment',
            ['type', 'issue_id', 'repo_id', 'poster_id', 'body', 'commit_sha', 'created_unix', 'updated_unix'],
            pulls.flatMap((p) =>
              Array.from({ length: p.comments }, (_, c) => [
                0,
                ids.get(p.index),
                repo.id,
                p.poster.id,
                `${word()} ${word()} ${word()}`,
                '',
                p.created + (c + 1) * 60,
                p.created + (c + 1) * 60,
              ]),
            ),
          );
        });
      }
      await dataSource.transaction(async (tx) => {
        await tx.query('INSERT INTO issue_counter (repo_id, max_index) VALUES (?, ?)', [repo.id, repo.pulls]);
        await tx.query('UPDATE repository SET num_pulls = ?, num_closed_pulls = ? WHERE id = ?', [repo.pulls, closed, repo.id]);
      });
      console.log(`${repo.name}: ${repo.pulls} pull requests, ${closed} closed (${elapsed()})`);
    }
    for (const repo of repos) console.log(`${owner.name}/${repo.name}`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
