#!/usr/bin/env node
/*
 * Pull request reads against a running server on data seeded by bench/seed-pulls.js, side by side with a floor,
 * then pushes to a base with and without open pull requests.
 *
 * Reads. The floor is a raw node:http server in this process answering the same JSON: hand-written SQL on the
 * same database (better-sqlite3 on the SQLite file, a mysql2 pool on MariaDB) and, for the branch tips the JSON
 * shows (`base.sha`, `head.sha`), the repository's ref files read directly: each branch's loose ref file, else
 * packed-refs, parsed once and kept while its stat stays the same (with BENCH_FLOOR_REFS=git: one `git
 * for-each-ref` of the page's branches per request instead).
 * Per request the floor reads the repository and its owner (2 statements), the count and the page of issues (or
 * the one issue), their pull_request rows, label links, labels, assignee links, users, reviews, and builds the
 * `Repository` JSON of base and head from those two rows with a compact function (once per request; the
 * anonymous view: pull permission only). Before measuring, each target's answer from Anvil and from the floor are
 * compared field for field (exit 2 when they differ). Then each is loaded (wrk, else autocannon:
 * bench/floor-support.js), the floor and Anvil one after the other, anonymous callers (a public repository):
 *
 *   list  GET /api/v1/repos/{o}/pulls-{tag}/pulls?state=open   first page (30) of the open ones of 10 000
 *   get   GET /api/v1/repos/{o}/pulls-{tag}/pulls/{n}          the newest pull request
 *
 * Pushes (with BENCH_TOKEN, a token of the seeded repositories' owner with write:repository): push-{tag}-busy
 * (200 open pull requests into `main`) and push-{tag}-idle (none) are cloned over HTTP; then BENCH_PUSH_ROUNDS
 * rounds, each a push of one new commit to `main` of the idle one, then of the busy one (timed around `git push`).
 * After the busy push of each of the first BENCH_DRAIN_ROUNDS rounds (default 1) the benchmark reads the busy
 * repository's pull_request rows every 50 ms until none is `checking` (status 1): that is the drain of the
 * mergeability re-tests the push queued, waited for before the next round. Later rounds do not wait: their pushes
 * (both sides alike) may run while re-tests still drain, and a busy push asks again for the tests under way.
 * Prints the median push times and the drain: re-tests per second from the push's start, and how many were
 * still waiting when it returned.
 *
 *   DATA_DIR=/tmp/anvil-bench PORT=3000 ROOT_URL=http://127.0.0.1:3000/ LOG_LEVEL=warn SSH_ENABLED=false \
 *     RECONCILE_START_BUDGET=0 node --max-semi-space-size=24 dist/src/main.js &
 *   DATA_DIR=/tmp/anvil-bench ROOT_URL=http://127.0.0.1:3000/ BENCH_OWNER=bench BENCH_TOKEN=<token> node bench/pulls.bench.js
 *
 * Environment: DATA_DIR / DATABASE_URL / ROOT_URL / SSH_PORT / SSH_USER (the server's: the floor writes the same
 * URLs), BENCH_URL (default http://127.0.0.1:3000), BENCH_OWNER (the seeded repositories' owner), SEED_TAG
 * (default p), BENCH_SECONDS (10), BENCH_CONNS (64), BENCH_WARMUP (2 s), BENCH_ONLY (list,get,push), BENCH_FLOOR_REFS,
 * BENCH_TOKEN (without it the pushes are left out), BENCH_PUSH_ROUNDS (5), BENCH_DRAIN_ROUNDS (1), BENCH_DRAIN_SECONDS
 * (600, the longest wait for a drain). Loopback only, bounded. Prints one JSON line per target and server (req/s, p50/p99 ms,
 * non-2xx) with the ratio to the floor, then the push lines; exit 1 when an answer was not a 2xx or a push failed.
 */
'use strict';

const http = require('node:http');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFile, spawnSync } = require('node:child_process');
const { baseUrl, bounded, loadDist, seedTag, loadFigures } = require('./support');
const { database, get, load, firstDifference, textDifference } = require('./floor-support');

const { loadConfig } = loadDist('config/config');
const { repositoryPath } = loadDist('git/repository-paths');

const SECONDS = bounded('BENCH_SECONDS', 10, 120);
const CONNECTIONS = bounded('BENCH_CONNS', 64, 256);
const WARMUP = bounded('BENCH_WARMUP', 2, 30);
const PUSH_ROUNDS = bounded('BENCH_PUSH_ROUNDS', 5, 50);
const DRAIN_SECONDS = bounded('BENCH_DRAIN_SECONDS', 600, 3600);
const DRAIN_ROUNDS = bounded('BENCH_DRAIN_ROUNDS', 1, 50);
const PAGE = 30;
const CHECKING = 1;
const ISSUE_COLUMNS =
  'i.id, i.repo_id, i.repo_index, i.poster_id, i.title, i.body, i.ref, i.milestone_id, i.is_closed, i.is_locked, i.num_comments, i.pin_order, i.deadline_unix, i.created_unix, i.updated_unix, i.closed_unix';
const WORK_IN_PROGRESS = ['WIP:', '[WIP]'];
// Forgejo's review types: approve 1, comment 2, reject 3, request 4.
const REVIEW = { approve: 1, comment: 2, reject: 3, request: 4 };

// ------------------------------------------------------------------------------------------ the floor

function iso(seconds) {
  if (!seconds) return '0001-01-01T00:00:00Z';
  return `${new Date(seconds * 1000).toISOString().slice(0, 19)}Z`;
}

/** The commit each of `refs` names, from one `git for-each-ref` (BENCH_FLOOR_REFS=git). */
function branchTipsByGit(dir, refs) {
  return new Promise((resolve, reject) => {
    execFile(
      'git',
      ['--git-dir', dir, 'for-each-ref', '--format=%(refname) %(objectname)', ...refs],
      { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1' } },
      (error, stdout) => {
        if (error) return reject(error);
        resolve(
          new Map(
            stdout
              .split('\n')
              .filter(Boolean)
              .map((line) => line.split(' ')),
          ),
        );
      },
    );
  });
}

/** packed-refs parsed, by repository, kept while its stat is unchanged. */
const packedRefs = new Map();

/**
 * The commit each of `refs` names, read as git's files backend stores them (the default floor): the loose ref
 * file, else packed-refs (parsed again when its stat changes). Branches hold commits: nothing is peeled.
 */
async function branchTipsByFiles(dir, refs) {
  const found = new Map();
  let packed;
  for (const ref of refs) {
    try {
      found.set(ref, (await fs.promises.readFile(path.join(dir, ref), 'utf8')).trim());
      continue;
    } catch (error) {
      if (error.code !== 'ENOENT' && error.code !== 'ENOTDIR') throw error;
    }
    if (!packed) {
      const file = path.join(dir, 'packed-refs');
      const stat = await fs.promises.stat(file).catch(() => null);
      const stamp = stat ? `${stat.ino}:${stat.size}:${stat.mtimeMs}` : '';
      packed = packedRefs.get(dir);
      if (!packed || packed.stamp !== stamp) {
        const refsOf = new Map();
        if (stat) {
          for (const line of (await fs.promises.readFile(file, 'utf8')).split('\n')) {
            if (line === '' || line[0] === '#' || line[0] === '^') continue;
            const space = line.indexOf(' ');
            refsOf.set(line.slice(space + 1), line.slice(0, space));
          }
        }
        packedRefs.set(dir, (packed = { stamp, refs: refsOf }));
      }
    }
    const oid = packed.refs.get(ref);
    if (oid) found.set(ref, oid);
  }
  return found;
}

const branchTips = process.env.BENCH_FLOOR_REFS === 'git' ? branchTipsByGit : branchTipsByFiles;

function floor(db, config) {
  const rootUrl = config.rootUrl;
  const rootHost = config.rootHost;
  const sshPort = config.ssh.advertisedPort ?? config.ssh.listenPort;
  const visibility = ['public', 'limited', 'private'];
  /** A user's JSON; `sees`: the real address (unless kept private) instead of the placeholder. */
  const userJson = (u, sees) => ({
    id: Number(u.id),
    login: u.name,
    full_name: u.full_name,
    email: sees && !u.keep_email_private ? u.email : `${u.lower_name}@noreply.${rootHost}`,
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
  /** The anonymous `Repository` JSON of a public, non-fork repository from its row and its owner's. */
  const repoJson = (r, o) => {
    const full = `${o.name}/${r.name}`;
    const api = `${rootUrl}api/v1/repos/${full}`;
    const pulls = !!r.has_pull_requests;
    return {
      id: Number(r.id),
      owner: userJson(o, false),
      name: r.name,
      full_name: full,
      description: r.description,
      empty: !!r.is_empty,
      private: !!r.is_private,
      fork: !!r.is_fork,
      template: !!r.is_template,
      parent: null,
      mirror: !!r.is_mirror,
      size: Math.floor((Number(r.git_size) + Number(r.lfs_size)) / 1024),
      language: r.primary_language ?? '',
      languages_url: `${api}/languages`,
      html_url: `${rootUrl}${full}`,
      url: api,
      link: '',
      ssh_url: sshPort === 22 ? `${config.ssh.user}@${rootHost}:${full}.git` : `ssh://${config.ssh.user}@${rootHost}:${sshPort}/${full}.git`,
      clone_url: `${rootUrl}${full}.git`,
      original_url: r.original_url,
      website: r.website,
      stars_count: Number(r.num_stars),
      forks_count: Number(r.num_forks),
      watchers_count: Number(r.num_watches),
      open_issues_count: Math.max(0, r.num_issues - r.num_closed_issues),
      open_pr_counter: Math.max(0, r.num_pulls - r.num_closed_pulls),
      default_branch: r.default_branch,
      archived: !!r.is_archived,
      created_at: iso(Number(r.created_unix)),
      updated_at: iso(Number(r.updated_unix)),
      archived_at: Number(r.archived_unix) ? iso(Number(r.archived_unix)) : '1970-01-01T00:00:00Z',
      permissions: { admin: false, push: false, pull: true },
      has_issues: !!r.has_issues,
      ...(r.has_issues
        ? r.external_tracker_url
          ? {
              external_tracker: {
                external_tracker_url: r.external_tracker_url,
                external_tracker_format: r.external_tracker_format,
                external_tracker_style: r.external_tracker_style,
                external_tracker_regexp_pattern: r.external_tracker_regexp,
              },
            }
          : {
              internal_tracker: {
                enable_time_tracker: !!r.enable_time_tracker,
                allow_only_contributors_to_track_time: !!r.allow_only_contributors_to_track_time,
                enable_issue_dependencies: !!r.enable_issue_dependencies,
              },
            }
        : {}),
      has_wiki: false,
      globally_editable_wiki: false,
      has_pull_requests: pulls,
      has_projects: false,
      has_releases: true,
      has_packages: true,
      has_actions: false,
      ignore_whitespace_conflicts: pulls && !!r.ignore_whitespace_conflicts,
      allow_merge_commits: pulls && !!r.allow_merge_commits,
      allow_rebase: pulls && !!r.allow_rebase,
      allow_rebase_explicit: pulls && !!r.allow_rebase_explicit,
      allow_squash_merge: pulls && !!r.allow_squash_merge,
      allow_fast_forward_only_merge: pulls && !!r.allow_fast_forward_only_merge,
      allow_rebase_update: pulls && !!r.allow_rebase_update,
      default_delete_branch_after_merge: pulls && !!r.default_delete_branch_after_merge,
      default_merge_style: pulls ? r.default_merge_style || 'merge' : 'merge',
      default_allow_maintainer_edit: pulls && !!r.default_allow_maintainer_edit,
      avatar_url: '',
      internal: !r.is_private && o.visibility === 2,
      mirror_interval: r.is_mirror ? r.mirror_interval : '',
      object_format_name: r.object_format_name,
      mirror_updated: iso(r.is_mirror ? Number(r.mirror_updated_unix) : 0),
      repo_transfer: null,
      topics: (r.topics ?? '').split(',').filter(Boolean),
      licenses: [],
    };
  };
  const inList = (values) => values.map(() => '?').join(',');
  const wip = (title) => WORK_IN_PROGRESS.some((prefix) => title.toUpperCase().startsWith(prefix));

  /** The repository (public, owner public, pull requests on) and its owner, or null. */
  async function repository(owner, name) {
    const [o] = await db.all(`SELECT * FROM ${db.user} WHERE lower_name = ? AND visibility = 0`, [owner.toLowerCase()]);
    if (!o) return null;
    const [r] = await db.all('SELECT * FROM repository WHERE owner_id = ? AND lower_name = ? AND is_private = 0 AND has_pull_requests = 1', [
      o.id,
      name.toLowerCase(),
    ]);
    return r ? { r, o } : null;
  }

  /** The JSON of a page of one repository's pull requests (their issue rows given). */
  async function page(place, issues) {
    if (issues.length === 0) return [];
    const { r, o } = place;
    const ids = issues.map((i) => Number(i.id));
    const pulls = await db.all(`SELECT * FROM pull_request WHERE issue_id IN (${inList(ids)})`, ids);
    const links = await db.all(`SELECT issue_id, label_id FROM issue_label WHERE issue_id IN (${inList(ids)}) ORDER BY id`, ids);
    const assignees = await db.all(`SELECT issue_id, assignee_id FROM issue_assignee WHERE issue_id IN (${inList(ids)}) ORDER BY id`, ids);
    const reviews = await db.all(
      `SELECT id, issue_id, type, reviewer_id, reviewer_team_id, dismissed, updated_unix FROM review WHERE issue_id IN (${inList(ids)}) ORDER BY id`,
      ids,
    );
    const labelIds = [...new Set(links.map((l) => Number(l.label_id)))];
    const labels = labelIds.length
      ? await db.all(`SELECT id, name, exclusive, archived_unix, color, description FROM label WHERE id IN (${inList(labelIds)}) ORDER BY name, id`, labelIds)
      : [];
    const pullByIssue = new Map(pulls.map((p) => [Number(p.issue_id), p]));
    const userIds = [
      ...new Set([
        ...issues.map((i) => Number(i.poster_id)),
        ...assignees.map((a) => Number(a.assignee_id)),
        ...reviews.map((v) => Number(v.reviewer_id)),
        ...pulls.filter((p) => p.has_merged && Number(p.merger_id) > 0).map((p) => Number(p.merger_id)),
      ]),
    ];
    const users = await db.all(`SELECT * FROM ${db.user} WHERE id IN (${inList(userIds)})`, userIds);
    const userById = new Map(users.map((u) => [Number(u.id), u]));
    const refs = [...new Set(pulls.flatMap((p) => [`refs/heads/${p.base_branch}`, `refs/heads/${p.head_branch}`]))];
    const tips = r.is_empty ? new Map() : await branchTips(repositoryPath(config.dataDir, o.name, r.name), refs);
    const repo = repoJson(r, o);
    const full = `${o.name}/${r.name}`;
    const api = `${rootUrl}api/v1/repos/${full}`;
    return issues.map((i) => {
      const p = pullByIssue.get(Number(i.id));
      const html = `${rootUrl}${full}/pulls/${i.repo_index}`;
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
      const assigned = assignees.filter((a) => Number(a.issue_id) === Number(i.id)).map((a) => userJson(userById.get(Number(a.assignee_id)), false));
      // Reviews: those given are counted; each reviewer's latest undismissed approval, rejection or request.
      const ofIssue = reviews.filter((v) => Number(v.issue_id) === Number(i.id));
      const latest = new Map();
      for (const v of ofIssue)
        if (Number(v.reviewer_team_id) === 0 && !v.dismissed && [REVIEW.approve, REVIEW.reject, REVIEW.request].includes(Number(v.type)))
          latest.set(Number(v.reviewer_id), v);
      const requested = [...latest.values()]
        .sort((a, b) => a.updated_unix - b.updated_unix || a.id - b.id)
        .map((v) => userById.get(Number(v.reviewer_id)))
        .filter(Boolean);
      const headSha = tips.get(`refs/heads/${p.head_branch}`);
      const blocked = [CHECKING, 0, 4].includes(Number(p.status));
      const merger = p.has_merged ? userById.get(Number(p.merger_id)) : undefined;
      return {
        id: Number(p.id),
        url: html,
        number: Number(i.repo_index),
        user: userJson(userById.get(Number(i.poster_id)), true),
        title: i.title,
        body: i.body,
        labels: issueLabels,
        milestone: null,
        assignee: assigned[0] ?? null,
        assignees: assigned.length > 0 ? assigned : null,
        requested_reviewers: requested.length > 0 ? requested.map((u) => userJson(u, false)) : null,
        requested_reviewers_teams: null,
        state: i.is_closed ? 'closed' : 'open',
        draft: wip(i.title),
        is_locked: !!i.is_locked,
        comments: Number(i.num_comments),
        review_comments: ofIssue.filter((v) => [REVIEW.approve, REVIEW.reject, REVIEW.comment].includes(Number(v.type))).length,
        additions: Number(p.additions),
        deletions: Number(p.deletions),
        changed_files: Number(p.changed_files),
        html_url: html,
        diff_url: `${html}.diff`,
        patch_url: `${html}.patch`,
        mergeable: !blocked && !wip(i.title),
        merged: !!p.has_merged,
        merged_at: p.has_merged && Number(p.merged_unix) ? iso(Number(p.merged_unix)) : null,
        merge_commit_sha: p.has_merged ? p.merged_commit_id : null,
        merged_by: merger ? userJson(merger, false) : null,
        allow_maintainer_edit: !!p.allow_maintainer_edit,
        base: { label: p.base_branch, ref: p.base_branch, sha: tips.get(`refs/heads/${p.base_branch}`) ?? '', repo_id: Number(p.base_repo_id), repo },
        head: {
          label: p.head_branch,
          ref: headSha ? p.head_branch : `refs/pull/${i.repo_index}/head`,
          sha: headSha ?? p.head_commit_id,
          repo_id: Number(p.head_repo_id),
          repo,
        },
        merge_base: p.merge_base,
        due_date: Number(i.deadline_unix) ? iso(Number(i.deadline_unix)) : null,
        created_at: iso(Number(i.created_unix)),
        updated_at: iso(Number(i.updated_unix)),
        closed_at: Number(i.closed_unix) ? iso(Number(i.closed_unix)) : null,
        pin_order: Number(i.pin_order),
      };
    });
  }

  async function list(owner, name) {
    const place = await repository(owner, name);
    if (!place) return null;
    const where = 'i.repo_id = ? AND i.is_pull = 1 AND i.is_closed = 0';
    const [{ total }] = await db.all(`SELECT COUNT(*) AS total FROM issue i WHERE ${where}`, [place.r.id]);
    const rows = await db.all(`SELECT ${ISSUE_COLUMNS} FROM issue i WHERE ${where} ORDER BY i.created_unix DESC, i.id DESC LIMIT ${PAGE}`, [place.r.id]);
    return { total: Number(total), items: await page(place, rows) };
  }

  async function one(owner, name, index) {
    const place = await repository(owner, name);
    if (!place || !/^\d{1,15}$/.test(index)) return null;
    const rows = await db.all(`SELECT ${ISSUE_COLUMNS} FROM issue i WHERE i.repo_id = ? AND i.repo_index = ? AND i.is_pull = 1`, [place.r.id, Number(index)]);
    if (rows.length === 0) return null;
    return { item: (await page(place, rows))[0] };
  }

  return http.createServer((request, response) => {
    const url = new URL(request.url, 'http://floor');
    const parts = url.pathname.split('/');
    let answer = Promise.resolve(null);
    if (parts.length === 7 && parts[6] === 'pulls' && url.searchParams.get('state') === 'open')
      answer = list(decodeURIComponent(parts[4]), decodeURIComponent(parts[5]));
    else if (parts.length === 8 && parts[6] === 'pulls') answer = one(decodeURIComponent(parts[4]), decodeURIComponent(parts[5]), parts[7]);
    answer.then(
      (result) => {
        if (!result) {
          response.writeHead(404).end();
          return;
        }
        // A newline after the document, as Anvil (and Forgejo) write it.
        const body = `${JSON.stringify(result.items ?? result.item)}\n`;
        const headers = { 'content-type': 'application/json;charset=utf-8', 'content-length': Buffer.byteLength(body) };
        if (result.items) headers['x-total-count'] = String(result.total);
        response.writeHead(200, headers);
        response.end(body);
      },
      (error) => {
        console.error(error);
        response.writeHead(500).end();
      },
    );
  });
}

// ------------------------------------------------------------------------------------------ measuring reads

// ------------------------------------------------------------------------------------------ measuring pushes

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length % 2 ? sorted[(sorted.length - 1) / 2] : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
};

async function pushes(anvil, db, owner, tag, token) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-pulls-bench-'));
  const env = { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
  const git = (cwd, args) => {
    const result = spawnSync('git', args, { cwd, env, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`git ${args[0]} exited ${result.status}: ${result.stderr.trim()}`);
    return result.stdout;
  };
  const timedGit = (cwd, args) =>
    new Promise((resolve, reject) => {
      const started = process.hrtime.bigint();
      execFile('git', args, { cwd, env }, (error, _stdout, stderr) =>
        error ? reject(new Error(`git ${args[0]}: ${stderr}`)) : resolve(Number(process.hrtime.bigint() - started) / 1e6),
      );
    });
  try {
    const sides = {};
    for (const side of ['idle', 'busy']) {
      const name = `push-${tag}-${side}`;
      const dir = path.join(work, side);
      const remote = new URL(`${anvil}/${owner}/${name}.git`);
      remote.username = owner;
      remote.password = token;
      git(work, ['clone', '--quiet', '--single-branch', '--branch', 'main', remote.href, dir]);
      git(dir, ['config', 'user.name', 'Bench']);
      git(dir, ['config', 'user.email', 'bench@example.com']);
      const [repo] = await db.all(`SELECT r.id FROM repository r JOIN ${db.user} o ON o.id = r.owner_id WHERE o.lower_name = ? AND r.lower_name = ?`, [
        owner.toLowerCase(),
        name,
      ]);
      const [{ open }] = await db.all(
        'SELECT COUNT(*) AS open FROM pull_request p JOIN issue i ON i.id = p.issue_id WHERE p.base_repo_id = ? AND p.base_branch = ? AND i.is_closed = 0 AND p.has_merged = 0',
        [repo.id, 'main'],
      );
      sides[side] = { dir, repoId: Number(repo.id), open: Number(open), times: [], drains: [] };
    }
    const checking = async (repoId) =>
      Number((await db.all('SELECT COUNT(*) AS n FROM pull_request WHERE base_repo_id = ? AND status = ?', [repoId, CHECKING]))[0].n);
    for (let round = 1; round <= PUSH_ROUNDS; round++) {
      for (const side of ['idle', 'busy']) {
        const s = sides[side];
        fs.writeFileSync(path.join(s.dir, `round-${Date.now()}-${round}.txt`), `round ${round}\n`);
        git(s.dir, ['add', '.']);
        git(s.dir, ['commit', '--quiet', '-m', `Round ${round}`]);
        const pushStarted = Date.now();
        s.times.push(await timedGit(s.dir, ['push', '--quiet', 'origin', 'main']));
        const returned = Date.now();
        if (s.open === 0 || round > DRAIN_ROUNDS) continue;
        const waiting = await checking(s.repoId);
        let left = waiting;
        while (left > 0 && Date.now() - returned < DRAIN_SECONDS * 1000) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          left = await checking(s.repoId);
        }
        const done = Date.now();
        s.drains.push({
          waitingAtReturn: waiting,
          left,
          fromReturnMs: done - returned,
          fromStartMs: done - pushStarted,
          perSecond: Number(((s.open * 1000) / (done - pushStarted)).toFixed(1)),
        });
        if (left > 0) throw new Error(`round ${round}: ${left} re-tests still waiting after ${DRAIN_SECONDS} s`);
      }
    }
    for (const side of ['idle', 'busy']) {
      const s = sides[side];
      console.log(
        JSON.stringify({ key: `push-${side}`, openPulls: s.open, rounds: s.times.length, medianMs: Math.round(median(s.times)), ms: s.times.map(Math.round) }),
      );
    }
    const drains = sides.busy.drains;
    console.log(
      JSON.stringify({
        key: 'retest-drain',
        pulls: sides.busy.open,
        medianPerSecond: median(drains.map((d) => d.perSecond)),
        medianDrainMsFromPushStart: median(drains.map((d) => d.fromStartMs)),
        medianWaitingAtPushReturn: median(drains.map((d) => d.waitingAtReturn)),
        rounds: drains,
      }),
    );
    console.log(JSON.stringify({ key: 'push', ratio: Number((median(sides.busy.times) / median(sides.idle.times)).toFixed(2)) }));
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

async function main() {
  const anvil = baseUrl();
  const owner = process.env.BENCH_OWNER;
  if (!owner || !/^[A-Za-z0-9._-]+$/.test(owner)) {
    console.error('BENCH_OWNER must name the owner of the seeded repositories');
    process.exit(2);
  }
  const tag = seedTag('p');
  const config = loadConfig(process.env);
  const db = await database(config);
  const server = floor(db, config);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const floorUrl = `http://127.0.0.1:${server.address().port}`;
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  const repoPath = `/api/v1/repos/${encodeURIComponent(owner)}/pulls-${tag}`;
  let failed = false;
  console.log(JSON.stringify({ load: fs.readFileSync('/proc/loadavg', 'utf8').trim(), at: 'start' }));
  try {
    const [{ newest }] = await db.all(
      `SELECT MAX(i.repo_index) AS newest FROM issue i JOIN repository r ON r.id = i.repo_id JOIN ${db.user} o ON o.id = r.owner_id WHERE o.lower_name = ? AND r.lower_name = ? AND i.is_pull = 1`,
      [owner.toLowerCase(), `pulls-${tag}`],
    );
    const targets = { list: `${repoPath}/pulls?state=open`, get: `${repoPath}/pulls/${newest}` };
    for (const [key, target] of Object.entries(targets)) {
      if (only.length > 0 && !only.includes(key)) continue;
      const [mine, floors] = [await get(anvil, target), await get(floorUrl, target)];
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
        if (WARMUP > 0) await load(base, target, WARMUP, CONNECTIONS);
        const result = await load(base, target, SECONDS, CONNECTIONS);
        rows[who] = loadFigures(key, who, result);
        if (result.non2xx > 0 || result.errors > 0 || result['2xx'] === 0) failed = true;
        console.log(JSON.stringify(rows[who]));
      }
      console.log(
        JSON.stringify({ key, total: mine.total === undefined ? undefined : Number(mine.total), ratio: Number((rows.anvil.rps / rows.floor.rps).toFixed(2)) }),
      );
    }
    if ((only.length === 0 || only.includes('push')) && process.env.BENCH_TOKEN) {
      try {
        await pushes(anvil, db, owner, tag, process.env.BENCH_TOKEN);
      } catch (error) {
        console.error(error.message);
        failed = true;
      }
    }
  } finally {
    console.log(JSON.stringify({ load: fs.readFileSync('/proc/loadavg', 'utf8').trim(), at: 'end' }));
    // Requests autocannon left in flight end before the database closes.
    await new Promise((resolve) => {
      server.close(resolve);
      server.closeAllConnections();
    });
    await db.close();
  }
  if (failed) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
