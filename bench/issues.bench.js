#!/usr/bin/env node
/*
 * Issue lists against a running server on data seeded by bench/seed-issues.js, side by side with a floor: a raw
 * node:http server in this process with hand-written SQL on the same database (better-sqlite3 on the SQLite file,
 * a mysql2 pool on MariaDB), answering the same JSON. Before measuring, each target's answer from Anvil and from
 * the floor are compared field for field (exit 2 when they differ). Then each is loaded (wrk, else autocannon:
 * bench/floor-support.js), Anvil and the floor one after the other, anonymous callers (public repositories):
 *
 *   list    GET /api/v1/repos/{o}/{r}/issues?state=open&labels=LABEL   first page (30), the repository with half of
 *           the issues (SEED: 50 000 of 100 000), one label
 *   search  GET /api/v1/repos/issues/search?q=WORD                     first page, across every repository
 *   create  POST /api/v1/repos/{o}/{r}/issues with BENCH_TOKEN (write:issue), every connection creating issues in
 *           the same repository for BENCH_SECONDS: no floor; afterwards the numbers the run was given are read
 *           back from the database and must be unique and dense (one per 201, no gap, no repeat; exit 1 if not;
 *           the requests in flight when the run ends are answered uncounted, one per connection at most)
 *
 *   DATA_DIR=/tmp/anvil-bench PORT=3000 LOG_LEVEL=warn SSH_ENABLED=false node dist/src/main.js &
 *   DATA_DIR=/tmp/anvil-bench BENCH_REPO=owner/issues-i0 node bench/issues.bench.js   # or DATABASE_URL=mysql://…
 *
 * Environment: DATA_DIR / DATABASE_URL (the server's), BENCH_URL (default http://127.0.0.1:3000), BENCH_REPO (the
 * last line seed-issues.js printed), BENCH_LABEL (default bug), BENCH_WORD (default chart, in about 4% of the issues),
 * BENCH_SECONDS (10), BENCH_CONNS (64), BENCH_WARMUP (2 s), BENCH_ONLY (list,search,create; create only with
 * BENCH_TOKEN). Loopback only, bounded.
 * Prints one JSON line per target and server (req/s, p50/p99 ms, non-2xx) and the ratio to the floor; exit 1
 * when an answer was not a 2xx.
 */
'use strict';

const http = require('node:http');
const { baseUrl, bounded, loadDist, loadFigures } = require('./support');
const autocannon = require('autocannon');
const { database, get, load, firstDifference, textDifference } = require('./floor-support');

const { loadConfig } = loadDist('config/config');

const SECONDS = bounded('BENCH_SECONDS', 10, 120);
const CONNECTIONS = bounded('BENCH_CONNS', 64, 256);
const WARMUP = bounded('BENCH_WARMUP', 2, 30);
const PAGE = 30;
const ISSUE_COLUMNS =
  'i.id, i.repo_id, i.repo_index, i.poster_id, i.title, i.body, i.ref, i.is_closed, i.is_locked, i.num_comments, i.pin_order, i.deadline_unix, i.created_unix, i.updated_unix, i.closed_unix';

// ------------------------------------------------------------------------------------------ the floor's SQL

function iso(seconds) {
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

function floor(db, rootUrl, rootHost) {
  const visibility = ['public', 'limited', 'private'];
  const userJson = (u) => ({
    id: Number(u.id),
    login: u.name,
    full_name: u.full_name,
    email: u.keep_email_private ? `${u.lower_name}@noreply.${rootHost}` : u.email,
    avatar_url: `${rootUrl}assets/img/avatar_default.png`,
    html_url: `${rootUrl}${encodeURIComponent(u.name)}`,
    is_admin: false,
    created: iso(Number(u.created_unix)),
    restricted: !!u.is_restricted,
    active: false,
    prohibit_login: false,
    location: u.location,
    website: u.website,
    description: u.description,
    visibility: visibility[u.visibility] ?? 'public',
    followers_count: u.num_followers,
    following_count: u.num_following,
    starred_repos_count: u.num_stars,
    username: u.name,
  });
  const inList = (values) => values.map(() => '?').join(',');

  /** The JSON of a page of issues, with their labels, assignees, posters and repositories. */
  async function page(issues) {
    if (issues.length === 0) return [];
    const ids = issues.map((i) => Number(i.id));
    const links = await db.all(`SELECT issue_id, label_id FROM issue_label WHERE issue_id IN (${inList(ids)}) ORDER BY id`, ids);
    const assignees = await db.all(`SELECT issue_id, assignee_id FROM issue_assignee WHERE issue_id IN (${inList(ids)}) ORDER BY id`, ids);
    const labelIds = [...new Set(links.map((l) => Number(l.label_id)))];
    const labels = labelIds.length
      ? await db.all(
          `SELECT id, repo_id, name, exclusive, archived_unix, color, description FROM label WHERE id IN (${inList(labelIds)}) ORDER BY name, id`,
          labelIds,
        )
      : [];
    const userIds = [...new Set([...issues.map((i) => Number(i.poster_id)), ...assignees.map((a) => Number(a.assignee_id))])];
    const users = await db.all(`SELECT * FROM ${db.user} WHERE id IN (${inList(userIds)})`, userIds);
    const repoIds = [...new Set(issues.map((i) => Number(i.repo_id)))];
    const repos = await db.all(
      `SELECT r.id, r.name, o.name AS owner_name FROM repository r JOIN ${db.user} o ON o.id = r.owner_id WHERE r.id IN (${inList(repoIds)})`,
      repoIds,
    );
    const userById = new Map(users.map((u) => [Number(u.id), u]));
    const labelById = new Map(labels.map((l) => [Number(l.id), l]));
    const repoById = new Map(repos.map((r) => [Number(r.id), r]));
    return issues.map((i) => {
      const repo = repoById.get(Number(i.repo_id));
      const full = `${repo.owner_name}/${repo.name}`;
      const api = `${rootUrl}api/v1/repos/${encodeURIComponent(repo.owner_name)}/${encodeURIComponent(repo.name)}`;
      const own = new Set(links.filter((l) => Number(l.issue_id) === Number(i.id)).map((l) => Number(l.label_id)));
      const issueLabels = labels
        .filter((l) => own.has(Number(l.id)))
        .map((l) => ({
          id: Number(l.id),
          name: l.name,
          exclusive: !!l.exclusive,
          is_archived: Number(l.archived_unix) > 0,
          color: l.color.replace(/^#/, ''),
          description: l.description,
          url: `${api}/labels/${l.id}`,
        }));
      const assigned = assignees.filter((a) => Number(a.issue_id) === Number(i.id)).map((a) => userJson(userById.get(Number(a.assignee_id))));
      return {
        id: Number(i.id),
        url: `${api}/issues/${i.repo_index}`,
        html_url: `${rootUrl}${encodeURIComponent(repo.owner_name)}/${encodeURIComponent(repo.name)}/issues/${i.repo_index}`,
        number: Number(i.repo_index),
        user: userJson(userById.get(Number(i.poster_id))),
        original_author: '',
        original_author_id: 0,
        title: i.title,
        body: i.body,
        ref: i.ref,
        assets: [],
        labels: issueLabels,
        milestone: null,
        assignee: assigned[0] ?? null,
        assignees: assigned.length > 0 ? assigned : null,
        state: i.is_closed ? 'closed' : 'open',
        is_locked: !!i.is_locked,
        comments: Number(i.num_comments),
        created_at: iso(Number(i.created_unix)),
        updated_at: iso(Number(i.updated_unix)),
        closed_at: Number(i.closed_unix) ? iso(Number(i.closed_unix)) : null,
        due_date: Number(i.deadline_unix) ? iso(Number(i.deadline_unix)) : null,
        pull_request: null,
        repository: { id: Number(repo.id), name: repo.name, owner: repo.owner_name, full_name: full },
        pin_order: Number(i.pin_order),
      };
    });
  }

  async function list(owner, name, labelNames) {
    const [repo] = await db.all(
      `SELECT r.id FROM repository r JOIN ${db.user} o ON o.id = r.owner_id WHERE o.lower_name = ? AND r.lower_name = ? AND r.is_private = 0 AND o.visibility = 0 AND r.has_issues = 1 AND r.external_tracker_url = ''`,
      [owner.toLowerCase(), name.toLowerCase()],
    );
    if (!repo) return null;
    const labels = labelNames.length
      ? await db.all(`SELECT id FROM label WHERE repo_id = ? AND name IN (${inList(labelNames)})`, [repo.id, ...labelNames])
      : [];
    if (labels.length < labelNames.length) return { total: 0, items: [] };
    const where = `i.repo_id = ? AND i.is_pull = 0 AND i.is_closed = 0${labels.map(() => ' AND i.id IN (SELECT issue_id FROM issue_label WHERE label_id = ?)').join('')}`;
    const params = [repo.id, ...labels.map((l) => l.id)];
    // Counted from the label links, which carry their issue's repository, state and type (as Anvil counts).
    const [{ total }] = labels.length
      ? await db.all(
          `SELECT COUNT(*) AS total FROM issue_label l WHERE l.repo_id = ? AND l.label_id = ? AND l.is_closed = 0 AND l.is_pull = 0${labels
            .slice(1)
            .map(() => ' AND EXISTS (SELECT 1 FROM issue_label o WHERE o.issue_id = l.issue_id AND o.label_id = ?)')
            .join('')}`,
          [repo.id, labels[0].id, ...labels.slice(1).map((l) => l.id)],
        )
      : await db.all(`SELECT COUNT(*) AS total FROM issue i WHERE ${where}`, params);
    // Many matches: the page walks the newest issues and asks each for its labels (MariaDB plans the IN form as
    // a join led by every link of the label, sorted), as Anvil does.
    const walk = `i.repo_id = ? AND i.is_pull = 0 AND i.is_closed = 0${labels.map((_, n) => ` AND (SELECT COUNT(*) FROM issue_label l${n} WHERE l${n}.issue_id = i.id AND l${n}.label_id = ?) > 0`).join('')}`;
    const rows = await db.all(
      `SELECT ${ISSUE_COLUMNS} FROM issue i WHERE ${Number(total) > 1000 ? walk : where} ORDER BY i.created_unix DESC, i.id DESC LIMIT ${PAGE}`,
      params,
    );
    return { total: Number(total), items: await page(rows) };
  }

  async function search(word) {
    const where =
      "r.has_issues = 1 AND r.external_tracker_url = '' AND r.is_private = 0 AND o.visibility = 0 AND i.is_pull = 0 AND i.is_closed = 0 AND i.id IN (SELECT issue_id FROM issue_word WHERE word >= ? AND word < ?)";
    const from = `issue i JOIN repository r ON r.id = i.repo_id JOIN ${db.user} o ON o.id = r.owner_id`;
    // The words that begin with `word`: [word, word with its last character raised by one).
    const last = [...word.toLowerCase()].pop();
    const range = [word.toLowerCase(), word.toLowerCase().slice(0, -last.length) + String.fromCodePoint(last.codePointAt(0) + 1)];
    const [{ total }] = await db.all(`SELECT COUNT(*) AS total FROM ${from} WHERE ${where}`, range);
    const rows = await db.all(`SELECT ${ISSUE_COLUMNS} FROM ${from} WHERE ${where} ORDER BY i.created_unix DESC, i.id DESC LIMIT ${PAGE}`, range);
    return { total: Number(total), items: await page(rows) };
  }

  return http.createServer((request, response) => {
    const url = new URL(request.url, 'http://floor');
    const parts = url.pathname.split('/');
    let answer;
    if (url.pathname === '/api/v1/repos/issues/search') answer = search(url.searchParams.get('q') ?? '');
    else if (parts.length === 7 && parts[6] === 'issues') {
      const labels = (url.searchParams.get('labels') ?? '').split(',').filter(Boolean);
      answer = list(decodeURIComponent(parts[4]), decodeURIComponent(parts[5]), labels);
    } else answer = Promise.resolve(null);
    answer.then(
      (result) => {
        if (!result) {
          response.writeHead(404).end();
          return;
        }
        // A newline after the document, as Anvil (and Forgejo) write it.
        const body = `${JSON.stringify(result.items)}\n`;
        response.writeHead(200, {
          'content-type': 'application/json;charset=utf-8',
          'x-total-count': String(result.total),
          'content-length': Buffer.byteLength(body),
        });
        response.end(body);
      },
      (error) => {
        console.error(error);
        response.writeHead(500).end();
      },
    );
  });
}

// ------------------------------------------------------------------------------------------ measuring

async function main() {
  const anvil = baseUrl();
  const repo = process.env.BENCH_REPO;
  if (!repo || !/^[^/]+\/[^/]+$/.test(repo)) {
    console.error('BENCH_REPO must name the seeded repository with half of the issues (owner/name)');
    process.exit(2);
  }
  const config = loadConfig(process.env);
  const db = await database(config);
  const server = floor(db, config.rootUrl, config.rootHost);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const floorUrl = `http://127.0.0.1:${server.address().port}`;
  const [owner, name] = repo.split('/');
  const targets = {
    list: `/api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/issues?state=open&labels=${encodeURIComponent(process.env.BENCH_LABEL ?? 'bug')}`,
    search: `/api/v1/repos/issues/search?q=${encodeURIComponent(process.env.BENCH_WORD ?? 'chart')}`,
  };
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  let failed = false;
  try {
    if (process.env.BENCH_TOKEN && (only.length === 0 || only.includes('create'))) {
      if (!(await creation(db, anvil, owner, name, process.env.BENCH_TOKEN))) failed = true;
    }
    for (const [key, path] of Object.entries(targets)) {
      if (only.length > 0 && !only.includes(key)) continue;
      const [mine, floors] = [await get(anvil, path), await get(floorUrl, path)];
      if (mine.status !== 200 || floors.status !== 200 || mine.body !== floors.body || mine.total !== floors.total) {
        console.error(`${key}: Anvil (${mine.status}, total ${mine.total}) and the floor (${floors.status}, total ${floors.total}) answer differently`);
        console.error(
          firstDifference(JSON.parse(mine.body || 'null'), JSON.parse(floors.body || 'null'), '') ??
            `the same values, written differently: ${textDifference(mine.body, floors.body)}`,
        );
        process.exitCode = 2;
        return;
      }
      const rows = {};
      for (const [who, base] of [
        ['floor', floorUrl],
        ['anvil', anvil],
      ]) {
        if (WARMUP > 0) await load(base, path, WARMUP, CONNECTIONS);
        const result = await load(base, path, SECONDS, CONNECTIONS);
        rows[who] = loadFigures(key, who, result);
        if (result.non2xx > 0 || result.errors > 0 || result['2xx'] === 0) failed = true;
        console.log(JSON.stringify(rows[who]));
      }
      console.log(JSON.stringify({ key, total: Number(mine.total), ratio: Number((rows.anvil.rps / rows.floor.rps).toFixed(2)) }));
    }
  } finally {
    // Requests autocannon left in flight end before the database closes.
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
    await db.close();
  }
  if (failed) process.exitCode = 1;
}

/**
 * Issues created at once by CONNECTIONS clients in one repository for SECONDS, then the numbers they were given,
 * read back: every 201 must have its own number, and the numbers must run on from the last one before the run
 * without a gap. True when they do.
 */
async function creation(db, anvil, owner, name, token) {
  const repoRows = await db.all(`SELECT r.id AS id FROM repository r JOIN ${db.user} u ON u.id = r.owner_id WHERE u.lower_name = ? AND r.lower_name = ?`, [
    owner.toLowerCase(),
    name.toLowerCase(),
  ]);
  if (repoRows.length !== 1) throw new Error(`repository ${owner}/${name} not found in the database`);
  const repoId = Number(repoRows[0].id);
  const highest = async () => Number((await db.all('SELECT MAX(repo_index) AS n FROM issue WHERE repo_id = ?', [repoId]))[0].n ?? 0);
  const before = await highest();
  const result = await new Promise((resolve, reject) => {
    let sent = 0;
    autocannon(
      {
        url: `${anvil}/api/v1/repos/${encodeURIComponent(owner)}/${encodeURIComponent(name)}/issues`,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: SECONDS,
        timeout: 30,
        method: 'POST',
        headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
        requests: [{ setupRequest: (request) => ({ ...request, body: JSON.stringify({ title: `created under load ${++sent}`, body: 'bench' }) }) }],
      },
      (error, outcome) => (error ? reject(error) : resolve(outcome)),
    );
  });
  // The requests autocannon left in flight finish on the server after it returned: read once the highest number
  // stays the same for half a second (at most 30 s).
  for (let last = -1, tries = 0; tries < 60; tries++) {
    const now = await highest();
    if (now === last) break;
    last = now;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  const created = await db.all('SELECT repo_index AS n FROM issue WHERE repo_id = ? AND repo_index > ? ORDER BY repo_index', [repoId, before]);
  const numbers = created.map((row) => Number(row.n));
  const distinct = new Set(numbers).size;
  const dense = numbers.every((number, at) => number === before + at + 1);
  // Requests still in flight when the run ends are answered after autocannon stopped counting: up to one per connection.
  const accounted = numbers.length >= result['2xx'] && numbers.length <= result['2xx'] + CONNECTIONS;
  const ok = accounted && distinct === numbers.length && dense;
  console.log(
    JSON.stringify({
      ...loadFigures('create', 'anvil', result),
      numbers: { first: numbers[0] ?? null, last: numbers[numbers.length - 1] ?? null, count: numbers.length, distinct, dense },
    }),
  );
  return ok && result.non2xx === 0 && result.errors === 0;
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
