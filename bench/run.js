#!/usr/bin/env node
/*
 * `npm run bench`: Anvil's own benchmark suite, end to end and bounded in time. It builds dist/ if a source
 * changed (scripts/build-if-changed.js), seeds a fresh database through the seeders beside it (users,
 * repositories, stars and follows, tokens), starts the built server (`node dist/src/main.js` with the flags of
 * `npm start`, on a free loopback port) and measures its cold start, loads each endpoint with autocannon (hot
 * reads, searches, then the star and follow writes spread over many users' tokens), checks afterwards that every
 * counter equals its row count (repository num_stars; user num_stars, num_followers, num_following), and prints
 * ONE Markdown table on standard output, with the server's peak RSS (VmHWM), its cold start, the seed and the machine under it.
 * Progress goes to standard error.
 *
 *   npm run --silent bench                                            # SQLite in a new temporary DATA_DIR
 *   BENCH_ONLY=star-put,follow-put BENCH_SECONDS=20 npm run --silent bench
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/anvil_bench npm run --silent bench   # MariaDB
 *   SEED_USERS=50 SEED_REPOS=200 BENCH_SECONDS=1 BENCH_WARMUP=0 BENCH_CONNS=4 npm run --silent bench  # smoke
 *
 * Environment:
 *   BENCH_SECONDS  seconds per endpoint (default 10, at most 600)
 *   BENCH_CONNS    connections (default 64, at most 1024); pipelining is always 1
 *   BENCH_WARMUP   warm-up seconds per endpoint (default 2, at most 60; 0 skips)
 *   BENCH_ONLY     comma-separated endpoint keys (see ENDPOINTS below; default all)
 *   BENCH_KEEP     1 keeps the data directory (and the MariaDB database) afterwards; its path is printed
 *   BENCH_CPU_PROF a directory: the server runs with --cpu-prof there (summarise with bench/profile-summary.js)
 *   DATABASE_URL   mysql://USER@127.0.0.1:PORT/NAME (loopback only): the database NAME is created for the run
 *                  (utf8mb4_bin) and dropped afterwards; an existing one is refused unless BENCH_RESET=1
 *   SEED_USERS 10000, SEED_REPOS 100000, SEED_STARS 5 and SEED_FOLLOWS 3 (means per user), SEED_TOKENS 200
 * Exit status: 0 when every request was a 2xx and every counter is exact; 1 otherwise (the table is printed
 * first); 2 when the run could not be set up (bad setting, build, seed or start-up failure).
 */
'use strict';

const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { stale, build } = require('../scripts/build-if-changed');
const { REPOSITORY_WORDS } = require('./support');

const ROOT = path.join(__dirname, '..');

/** A problem that stops the run before anything is measured (exit status 2). */
class SetupError extends Error {}

function fail(message) {
  throw new SetupError(message);
}

function setting(name, fallback, min, max) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) fail(`${name} must be an integer between ${min} and ${max}`);
  return value;
}

let SECONDS;
let CONNECTIONS;
let WARMUP;
let SEED;
const KEEP = process.env.BENCH_KEEP === '1';
const started = Date.now();
const log = (line) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}\n`);

function readSettings() {
  SECONDS = setting('BENCH_SECONDS', 10, 1, 600);
  CONNECTIONS = setting('BENCH_CONNS', 64, 1, 1024);
  WARMUP = setting('BENCH_WARMUP', 2, 0, 60);
  SEED = {
    users: setting('SEED_USERS', 10_000, 2, 2_000_000),
    repos: setting('SEED_REPOS', 100_000, 1, 2_000_000),
    stars: setting('SEED_STARS', 5, 0, 1000),
    follows: setting('SEED_FOLLOWS', 3, 0, 1000),
    tokens: setting('SEED_TOKENS', 200, 1, 10_000),
  };
}

// --------------------------------------------------------------------------------------------- state to clean up

const state = { dataDir: null, server: null, mysql: null, dataSource: null };

async function cleanUp() {
  if (state.dataSource?.isInitialized) await state.dataSource.destroy().catch(() => undefined);
  if (state.server) await stopServer(state.server);
  if (state.mysql && !KEEP) await dropMysqlDatabase(state.mysql).catch((error) => log(`could not drop database ${state.mysql.database}: ${error.message}`));
  if (state.dataDir && !KEEP) fs.rmSync(state.dataDir, { recursive: true, force: true });
  else if (state.dataDir) log(`kept ${state.dataDir}${state.mysql ? ` and database ${state.mysql.database}` : ''}`);
  state.server = state.mysql = state.dataDir = null;
}

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    log(`${signal}: stopping`);
    cleanUp().finally(() => process.exit(130));
  });
}

// --------------------------------------------------------------------------------------------- MariaDB

function mysqlTarget(raw) {
  let url;
  try {
    url = new URL(raw);
  } catch {
    return fail('DATABASE_URL is not a URL');
  }
  if (url.protocol !== 'mysql:' && url.protocol !== 'mariadb:') return fail('DATABASE_URL must be mysql://... (leave it unset for SQLite)');
  if (!['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname)) return fail('DATABASE_URL must point at a loopback host');
  const database = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!/^[A-Za-z0-9_]{1,64}$/.test(database)) return fail('the database name in DATABASE_URL must be 1-64 of [A-Za-z0-9_]');
  return {
    server: {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 3306),
      user: decodeURIComponent(url.username) || 'root',
      password: decodeURIComponent(url.password),
    },
    database,
  };
}

async function createMysqlDatabase(target) {
  const mysql = require('mysql2/promise');
  const connection = await mysql.createConnection(target.server);
  try {
    const [existing] = await connection.query('SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME = ?', [target.database]);
    if (existing.length > 0) {
      if (process.env.BENCH_RESET !== '1') return fail(`database ${target.database} exists: name another in DATABASE_URL, or set BENCH_RESET=1 to drop it`);
      await connection.query(`DROP DATABASE \`${target.database}\``);
    }
    await connection.query(`CREATE DATABASE \`${target.database}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`);
  } finally {
    await connection.end();
  }
}

async function dropMysqlDatabase(target) {
  const mysql = require('mysql2/promise');
  const connection = await mysql.createConnection(target.server);
  try {
    await connection.query(`DROP DATABASE IF EXISTS \`${target.database}\``);
  } finally {
    await connection.end();
  }
}

// --------------------------------------------------------------------------------------------- seeding

function runSeeder(script, env) {
  const at = Date.now();
  const result = spawnSync(process.execPath, [path.join(__dirname, script)], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', process.stderr, process.stderr],
    timeout: 30 * 60_000,
  });
  if (result.status !== 0) return fail(`${script} failed (status ${result.status}${result.error ? `, ${result.error.message}` : ''})`);
  log(`${script} done in ${((Date.now() - at) / 1000).toFixed(1)} s`);
}

/** Every `n`th item, so that samples spread over the whole list; at most `count`. */
function spread(list, count) {
  const step = Math.max(1, Math.floor(list.length / count));
  return list.filter((_, index) => index % step === 0).slice(0, count);
}

/** What the endpoints rotate over, read from the seeded database (public things only: anonymous reads see them). */
async function samples(dataSource, tokens) {
  const user = dataSource.driver.escape('user');
  const publicAccounts = await dataSource.query(`SELECT id, name, type FROM ${user} WHERE visibility = 0 ORDER BY id`);
  const visibleRepos = await dataSource.query(
    `SELECT o.name AS owner, r.name AS name, r.lower_name AS lower_name FROM repository r JOIN ${user} o ON o.id = r.owner_id WHERE r.is_private = 0 AND o.visibility = 0 ORDER BY r.id`,
  );
  if (visibleRepos.length === 0) return fail('the seed left no public repository of a public owner: raise SEED_REPOS');
  const perOwner = new Map();
  for (const repo of visibleRepos) perOwner.set(repo.owner, (perOwner.get(repo.owner) ?? 0) + 1);
  const byCount = [...perOwner].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const fullPages = byCount.filter(([, n]) => n >= 30);
  // Search words whose share of the anonymously visible repositories (by name, as /repos/search matches) is
  // nearest to 10%, 1% and 0.1%.
  const names = visibleRepos.map((repo) => repo.lower_name);
  const share = REPOSITORY_WORDS.filter((word) => word.length >= 4).map((word) => ({
    word,
    matches: names.reduce((n, name) => n + (name.includes(word) ? 1 : 0), 0),
  }));
  const search = [
    ['common', 0.1],
    ['medium', 0.01],
    ['rare', 0.001],
  ].map(([label, target]) => {
    const distance = (c) => Math.abs(Math.log(Math.max(c.matches, 0.5) / names.length / target));
    const best = share.slice().sort((a, b) => distance(a) - distance(b))[0];
    return { label, q: best.word, matches: best.matches, fraction: best.matches / names.length };
  });
  return {
    users: spread(
      publicAccounts.filter((a) => Number(a.type) === 0).map((a) => a.name),
      200,
    ),
    repos: spread(visibleRepos, 200).map((r) => `${r.owner}/${r.name}`),
    repoOwners: (fullPages.length >= 20 ? spread(fullPages, 100) : byCount.slice(0, 100)).map(([owner]) => owner),
    fullPageOwners: fullPages.length,
    starTargets: spread(visibleRepos, 5000).map((r) => `${r.owner}/${r.name}`),
    followTargets: spread(
      publicAccounts.map((a) => a.name),
      5000,
    ),
    visibleRepos: visibleRepos.length,
    search,
    tokens,
  };
}

// --------------------------------------------------------------------------------------------- the server

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function healthy(port) {
  return new Promise((resolve) => {
    const request = http.get({ host: '127.0.0.1', port, path: '/api/healthz', timeout: 2000 }, (response) => {
      response.resume();
      resolve(response.statusCode === 200);
    });
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve(false));
  });
}

/** Starts the built server; resolves once /api/healthz answered 200, with the cold start in milliseconds. */
/** The Node.js flags `npm start` runs the server with (package.json), so that the suite measures what users run. */
const START_FLAGS = require('../package.json')
  .scripts.start.split(' ')
  .filter((word) => word.startsWith('--'));

async function startServer(env, logFile) {
  const port = await freePort();
  const out = fs.openSync(logFile, 'a');
  const t0 = process.hrtime.bigint();
  const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(process.env.BENCH_CPU_PROF)}`] : [];
  const child = spawn(process.execPath, [...START_FLAGS, ...profile, path.join(ROOT, 'dist', 'src', 'main.js')], {
    cwd: ROOT,
    env: { ...process.env, ...env, PORT: String(port), ROOT_URL: `http://127.0.0.1:${port}/`, LOG_LEVEL: 'warn', SSH_LISTEN_PORT: '0' },
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  const server = { child, port, exited: false };
  child.on('exit', () => (server.exited = true));
  state.server = server;
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (server.exited) return fail(`the server exited during start-up; its log: ${logFile}\n${tail(logFile)}`);
    if (await healthy(port)) return { ...server, coldStartMs: Number(process.hrtime.bigint() - t0) / 1e6 };
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return fail(`the server did not answer /api/healthz within 120 s; its log: ${logFile}`);
}

function tail(file) {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-30).join('\n');
  } catch {
    return '';
  }
}

/** TERM, up to 20 s for the requests in flight, then KILL. */
async function stopServer(server) {
  if (server.exited) return;
  const gone = new Promise((resolve) => server.child.once('exit', resolve));
  server.child.kill('SIGTERM');
  const timer = setTimeout(() => server.child.kill('SIGKILL'), 20_000);
  await gone;
  clearTimeout(timer);
}

const CLOCK_TICKS = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim()) || 100;

/** CPU seconds (user + system) the process has used so far, from /proc/PID/stat; NaN where there is no /proc. */
function cpuSeconds(pid) {
  try {
    // Fields after the command name (which may hold spaces, hence the last ')'): utime and stime are 12th and 13th.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(')').pop().trim().split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return NaN;
  }
}

function memory(pid) {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const mib = (field) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN) / 1024;
    return { hwm: mib('VmHWM'), rss: mib('VmRSS') };
  } catch {
    return null;
  }
}

// --------------------------------------------------------------------------------------------- endpoints

const enc = encodeURIComponent;
const repoPath = (full) => full.split('/').map(enc).join('/');
const auth = (token) => ({ authorization: `token ${token}` });

/**
 * Write requests: pair k is (token k mod T, target (floor(k / T) + (k mod T) * stride) mod N), so that the
 * pairs are all different until T * N of them, and each user's consecutive writes go to scattered targets.
 * Measured runs use pairs [0, count); warm-ups use pairs after them, so that a warm-up never pre-does a measured
 * write. A DELETE run walks the same pairs as its PUT run, so that it removes what that run inserted.
 */
function pairs(tokens, targets, from, count, request) {
  const stride = Math.max(1, Math.floor(targets.length / tokens.length) + 1);
  const list = [];
  for (let k = from; k < from + count; k++) {
    const token = tokens[k % tokens.length];
    const target = targets[(Math.floor(k / tokens.length) + (k % tokens.length) * stride) % targets.length];
    list.push(request(token, target));
  }
  return list;
}

/** How many distinct write pairs a run gets: more than it can do at a generous rate, so that none repeats. */
const writeCount = (seconds) => Math.max(2000, Math.min(5_000_000, seconds * 6000));

function endpoints(s) {
  const tokens = s.tokens.map((t) => t.token);
  const star = (method) => (from, count) =>
    pairs(tokens, s.starTargets, from, count, (token, full) => ({ method, path: `/api/v1/user/starred/${repoPath(full)}`, headers: auth(token) }));
  const follow = (method) => (from, count) =>
    pairs(tokens, s.followTargets, from, count, (token, login) => ({ method, path: `/api/v1/user/following/${enc(login)}`, headers: auth(token) }));
  // Every connection stars and unstars one repository, a few connections per user: the race the counters must survive.
  const contended = s.starTargets[0];
  const reads = (list) => () => list;
  return [
    { key: 'version', label: 'GET /version', requests: reads([{ path: '/api/v1/version' }]) },
    { key: 'user', label: 'GET /users/{u}', requests: reads(s.users.map((u) => ({ path: `/api/v1/users/${enc(u)}` }))) },
    { key: 'repo', label: 'GET /repos/{o}/{r}', requests: reads(s.repos.map((full) => ({ path: `/api/v1/repos/${repoPath(full)}` }))) },
    { key: 'me', label: `GET /user (token; ${tokens.length} users)`, requests: reads(tokens.map((token) => ({ path: '/api/v1/user', headers: auth(token) }))) },
    {
      key: 'user-repos',
      label: 'GET /users/{u}/repos?limit=30',
      requests: reads(s.repoOwners.map((u) => ({ path: `/api/v1/users/${enc(u)}/repos?limit=30` }))),
    },
    ...s.search.map((w) => ({
      key: `search-${w.label}`,
      label: `GET /repos/search?q=${w.q}&limit=10 (${(w.fraction * 100).toFixed(2)}%)`,
      requests: reads([{ path: `/api/v1/repos/search?q=${enc(w.q)}&limit=10` }]),
    })),
    {
      key: 'user-search',
      label: 'GET /users/search?q=…&limit=10',
      requests: reads(['olivia', 'son', 'kowalski', 'emma.j', 'ez', 'müller', 'example'].map((q) => ({ path: `/api/v1/users/search?q=${enc(q)}&limit=10` }))),
    },
    { key: 'star-put', label: 'PUT /user/starred/{o}/{r}', write: { table: 'star', pairs: star('PUT') } },
    { key: 'star-delete', label: 'DELETE /user/starred/{o}/{r}', write: { table: 'star', pairs: star('DELETE') } },
    { key: 'follow-put', label: 'PUT /user/following/{u}', write: { table: 'follow', pairs: follow('PUT') } },
    { key: 'follow-delete', label: 'DELETE /user/following/{u}', write: { table: 'follow', pairs: follow('DELETE') } },
    {
      key: 'star-race',
      label: 'PUT+DELETE one star, 4 connections per user',
      requests: reads([]),
      perClient: (index) => {
        const token = tokens[Math.floor(index / 4) % tokens.length];
        const path = `/api/v1/user/starred/${repoPath(contended)}`;
        return [
          { method: 'PUT', path, headers: auth(token) },
          { method: 'DELETE', path, headers: auth(token) },
        ];
      },
    },
  ];
}

// --------------------------------------------------------------------------------------------- load

/**
 * One autocannon run. `perClient(index)` gives each connection its own request list; by default every
 * connection walks the shared list from its own offset (reads), or its own contiguous slice of it (writes).
 */
function load(port, items, seconds, perClient) {
  const autocannon = require('autocannon');
  let clientIndex = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: `http://127.0.0.1:${port}`,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        timeout: 30,
        // Every connection would build request buffers for this whole list before setupClient replaces it:
        // give it the list only when no per-connection list follows.
        requests: (perClient?.(0) ?? items).length > 0 && perClient?.(0) ? [{ ...perClient(0)[0] }] : items.map((item) => ({ ...item })),
        setupClient: (client) => {
          const index = clientIndex++;
          const own = perClient ? perClient(index) : null;
          if (own) client.setRequests(own.map((item) => ({ ...item })));
        },
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

/** Reads: each connection starts at its own offset of the shared list. Writes: each connection has its own slice. */
function clientLists(items, sliced) {
  return (index) => {
    if (items.length < 2) return null;
    if (sliced) {
      const size = Math.floor(items.length / CONNECTIONS);
      return size > 0 ? items.slice(index * size, (index + 1) * size) : [items[index % items.length]];
    }
    const offset = Math.floor((index * items.length) / CONNECTIONS) % items.length;
    return [...items.slice(offset), ...items.slice(0, offset)];
  };
}

const summarize = (result) => ({
  rps: result.requests.average,
  total: result.requests.total,
  p50: result.latency.p50,
  p99: result.latency.p99,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
});
const failed = (run) => run.non2xx + run.errors + run.timeouts + (run.total === 0 ? 1 : 0);

/** One request through the same queues as the run just done: its answer means the server has worked off the run. */
function settle(port, item) {
  return new Promise((resolve) => {
    const request = http.request(
      { host: '127.0.0.1', port, method: item.method ?? 'GET', path: item.path, headers: item.headers ?? {}, timeout: 120_000 },
      (response) => {
        response.resume();
        response.on('end', resolve);
      },
    );
    request.on('timeout', () => request.destroy());
    request.on('error', () => resolve());
    request.end();
  });
}

async function rowCount(dataSource, table) {
  const [{ n }] = await dataSource.query(`SELECT COUNT(*) AS n FROM ${table}`);
  return Number(n);
}

/** Token verification costs a PBKDF2 on first use: verify every token once (two at a time) before measuring. */
async function primeTokens(port, tokens) {
  let next = 0;
  const worker = async () => {
    while (next < tokens.length) await settle(port, { path: '/api/v1/user', headers: auth(tokens[next++].token) });
  };
  await Promise.all([worker(), worker()]);
}

// --------------------------------------------------------------------------------------------- counters

/** Counters that differ from their row counts (each query counts the rows whose counter is wrong). */
async function counterMismatches(dataSource) {
  const user = dataSource.driver.escape('user');
  const checks = {
    'repository.num_stars': 'SELECT COUNT(*) AS n FROM repository r WHERE r.num_stars <> (SELECT COUNT(*) FROM star s WHERE s.repo_id = r.id)',
    'user.num_stars': `SELECT COUNT(*) AS n FROM ${user} u WHERE u.num_stars <> (SELECT COUNT(*) FROM star s WHERE s.uid = u.id)`,
    'user.num_followers': `SELECT COUNT(*) AS n FROM ${user} u WHERE u.num_followers <> (SELECT COUNT(*) FROM follow f WHERE f.follow_id = u.id)`,
    'user.num_following': `SELECT COUNT(*) AS n FROM ${user} u WHERE u.num_following <> (SELECT COUNT(*) FROM follow f WHERE f.user_id = u.id)`,
  };
  const wrong = {};
  for (const [counter, sql] of Object.entries(checks)) {
    const [{ n }] = await dataSource.query(sql);
    if (Number(n) > 0) wrong[counter] = Number(n);
  }
  return wrong;
}

// --------------------------------------------------------------------------------------------- main

async function main() {
  readSettings();
  const loadBefore = os.loadavg();
  if (stale()) {
    log('building dist/ (a source changed since the last build)');
    build();
  }
  const { loadDist } = require('./support');
  const target = process.env.DATABASE_URL ? mysqlTarget(process.env.DATABASE_URL) : null;
  state.dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-bench-'));
  const env = { DATA_DIR: state.dataDir };
  if (target) {
    await createMysqlDatabase(target);
    state.mysql = target;
    env.DATABASE_URL = process.env.DATABASE_URL;
  } else {
    env.DATABASE_URL = '';
  }
  log(`data directory ${state.dataDir}${target ? `, database ${target.database}` : ' (SQLite)'}`);

  // 1. Seed, through the seeders (each a process of its own, as one would run them by hand).
  const tokensFile = path.join(state.dataDir, 'bench-tokens.json');
  runSeeder('seed-users.js', { ...env, SEED_COUNT: String(SEED.users), SEED_TAG: 'b' });
  runSeeder('seed-repositories.js', { ...env, SEED_REPOS: String(SEED.repos), SEED_OWNERS: String(SEED.users), SEED_TAG: 'b' });
  runSeeder('seed-stars-and-follows.js', { ...env, SEED_STARS: String(SEED.stars), SEED_FOLLOWS: String(SEED.follows) });
  runSeeder('seed-tokens.js', { ...env, SEED_TOKENS: String(SEED.tokens), SEED_TOKENS_FILE: tokensFile });

  const { loadConfig } = loadDist('config/config');
  const { openDatabase } = loadDist('database/data-source');
  state.dataSource = await openDatabase(loadConfig({ ...process.env, ...env }));
  const dataSource = state.dataSource;
  const seeded = { stars: await rowCount(dataSource, 'star'), follows: await rowCount(dataSource, 'follow') };
  const s = await samples(dataSource, JSON.parse(fs.readFileSync(tokensFile, 'utf8')));
  log(
    `samples: ${s.visibleRepos} visible repositories, ${s.fullPageOwners} owners with 30+ public repositories; search ${s.search.map((w) => `${w.q} ${w.matches}`).join(', ')}`,
  );

  const all = endpoints(s);
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  const unknown = only.filter((key) => !all.some((e) => e.key === key));
  if (unknown.length > 0) return fail(`unknown BENCH_ONLY key(s) ${unknown.join(', ')} (known: ${all.map((e) => e.key).join(', ')})`);
  const selected = only.length > 0 ? all.filter((e) => only.includes(e.key)) : all;

  // 2. The server, and its cold start (process start to the first 200 from /api/healthz).
  const server = await startServer(env, path.join(state.dataDir, 'anvil.log'));
  log(`server (pid ${server.child.pid}) answered /api/healthz after ${server.coldStartMs.toFixed(0)} ms`);
  await primeTokens(server.port, s.tokens);

  // 3. Load, endpoint by endpoint.
  const rows = [];
  const notes = [];
  for (const endpoint of selected) {
    let items;
    let warmItems;
    let before;
    if (endpoint.write) {
      const count = writeCount(SECONDS);
      // PUT and DELETE of one table walk the same pairs; warm-ups take theirs from beyond every measured run.
      items = endpoint.write.pairs(0, count);
      warmItems = endpoint.write.pairs(count, writeCount(WARMUP || 1));
      before = await rowCount(dataSource, endpoint.write.table);
    } else {
      items = endpoint.requests();
      warmItems = items;
    }
    const perClient = endpoint.perClient ?? clientLists(items, Boolean(endpoint.write));
    if (WARMUP > 0) {
      const warmClients = endpoint.perClient ?? clientLists(warmItems, Boolean(endpoint.write));
      const warm = summarize(await load(server.port, warmItems, WARMUP, warmClients));
      await settle(server.port, warmItems[0] ?? endpoint.perClient(0)[0]);
      if (failed(warm)) log(`warm-up ${endpoint.key}: ${warm.non2xx} non-2xx, ${warm.errors} errors, ${warm.timeouts} timeouts`);
      if (endpoint.write) before = await rowCount(dataSource, endpoint.write.table);
    }
    const cpuBefore = cpuSeconds(server.child.pid);
    const run = summarize(await load(server.port, items, SECONDS, perClient));
    // The server's own CPU per answered request: unlike req/s, it hardly moves with what else loads the machine.
    run.cpuMicros = ((cpuSeconds(server.child.pid) - cpuBefore) * 1e6) / Math.max(1, run.total);
    await settle(server.port, items[0] ?? endpoint.perClient(0)[0]);
    log(
      `${endpoint.key}: ${run.rps.toFixed(0)} req/s, p50 ${run.p50} ms, p99 ${run.p99} ms, ${run.cpuMicros.toFixed(0)} µs CPU/req${failed(run) ? `, ${run.non2xx} non-2xx, ${run.errors} errors, ${run.timeouts} timeouts` : ''}`,
    );
    if (endpoint.write) {
      const after = await rowCount(dataSource, endpoint.write.table);
      notes.push(
        `${endpoint.label}: ${run.total} requests, ${after - before >= 0 ? '+' : ''}${after - before} ${endpoint.write.table} rows` +
          (run.total > items.length ? ` (more requests than distinct pairs: ${run.total - items.length} repeated)` : ''),
      );
    }
    rows.push({ endpoint, run });
  }

  const mem = memory(server.child.pid);
  await stopServer(server);
  state.server = null;

  // 4. Counters: every one must equal its row count, whatever the races above did.
  const wrong = await counterMismatches(dataSource);
  const final = { stars: await rowCount(dataSource, 'star'), follows: await rowCount(dataSource, 'follow') };
  await dataSource.destroy();
  const loadAfter = os.loadavg();

  // 5. The table.
  const number = (n) => Math.round(n).toLocaleString('en-US');
  const lines = [
    '| endpoint | req/s | p50 ms | p99 ms | non-2xx | server CPU µs/req |',
    '|---|---:|---:|---:|---:|---:|',
    ...rows.map(({ endpoint, run }) => {
      const bad = run.errors + run.timeouts ? ` (+${run.errors} errors, ${run.timeouts} timeouts)` : '';
      return `| ${endpoint.label} | ${number(run.rps)} | ${run.p50} | ${run.p99} | ${run.non2xx}${bad} | ${Number.isNaN(run.cpuMicros) ? '–' : number(run.cpuMicros)} |`;
    }),
    '',
    `- Peak RSS (VmHWM) of the server after the runs: ${mem ? `${mem.hwm.toFixed(0)} MiB (VmRSS ${mem.rss.toFixed(0)} MiB)` : 'unavailable'}`,
    `- Cold start (process start → first 200 from /api/healthz): ${server.coldStartMs.toFixed(0)} ms`,
    `- Counters after the runs: ${
      Object.keys(wrong).length === 0
        ? 'exact (repository num_stars; user num_stars, num_followers, num_following = row counts)'
        : `**WRONG**: ${Object.entries(wrong)
            .map(([c, n]) => `${c} on ${n} rows`)
            .join(', ')}`
    }`,
    ...notes.map((note) => `- ${note}`),
    `- ${target ? 'MariaDB' : 'SQLite'}; seed: ${SEED.users} users, ${SEED.repos} repositories (${s.visibleRepos} anonymously visible), ${seeded.stars} stars, ${seeded.follows} follows ` +
      `(${final.stars} and ${final.follows} after the runs), ${s.tokens.length} tokens`,
    `- autocannon: ${SECONDS} s per endpoint, ${CONNECTIONS} connections, pipelining 1, ${WARMUP} s warm-up; load generator and server on this machine ` +
      `(${os.cpus().length} × ${os.cpus()[0]?.model.trim() ?? 'CPU'}, node ${process.version}); load average ${loadBefore[0].toFixed(2)} before, ${loadAfter[0].toFixed(2)} after`,
  ];
  console.log(lines.join('\n'));
  const failures = rows.filter(({ run }) => failed(run) > 0).map(({ endpoint }) => endpoint.key);
  await cleanUp();
  if (failures.length > 0) process.stderr.write(`bench: failed requests in ${failures.join(', ')}\n`);
  if (Object.keys(wrong).length > 0) process.stderr.write('bench: counters differ from their row counts\n');
  process.exit(failures.length > 0 || Object.keys(wrong).length > 0 ? 1 : 0);
}

main().catch((error) => {
  process.stderr.write(error instanceof SetupError ? `bench: ${error.message}\n` : `${error.stack ?? error}\n`);
  cleanUp().finally(() => process.exit(2));
});
