/*
 * What the benchmarks against a raw floor share (bench/issues.bench.js, bench/pulls.bench.js): a query function
 * over the server's database for the floor's hand-written SQL, a GET that keeps the body, a load run (wrk or autocannon), and
 * the first difference between Anvil's answer and the floor's.
 */
'use strict';

const { execFile, fork, spawnSync } = require('node:child_process');
const http = require('node:http');
const { join } = require('node:path');
const autocannon = require('autocannon');

/** A query function over the server's database: `all(sql, params)` → rows. */
async function database(config) {
  if (config.database.type === 'sqlite') {
    const Database = require('better-sqlite3');
    const db = new Database(config.database.file, { readonly: true });
    db.pragma('journal_mode = WAL');
    const statements = new Map();
    return {
      user: '"user"',
      all: async (sql, params) => {
        let statement = statements.get(sql);
        if (!statement) statements.set(sql, (statement = db.prepare(sql)));
        return statement.all(...params);
      },
      close: async () => db.close(),
    };
  }
  const mysql = require('mysql2/promise');
  const url = new URL(process.env.DATABASE_URL);
  const pool = mysql.createPool({
    host: url.hostname,
    port: Number(url.port || 3306),
    user: decodeURIComponent(url.username) || 'root',
    password: decodeURIComponent(url.password),
    database: url.pathname.slice(1),
    connectionLimit: 10,
    supportBigNumbers: true,
  });
  return { user: '`user`', all: async (sql, params) => (await pool.execute(sql, params))[0], close: () => pool.end() };
}

function get(base, path) {
  return new Promise((resolve, reject) => {
    http
      .get(new URL(path, base), (response) => {
        const chunks = [];
        response.on('data', (chunk) => chunks.push(chunk));
        response.on('end', () =>
          resolve({ status: response.statusCode, total: response.headers['x-total-count'], body: Buffer.concat(chunks).toString('utf8') }),
        );
      })
      .on('error', reject);
  });
}

/**
 * One load run against `base` + `path`, its figures in autocannon's shape. With wrk on the machine (BENCH_LOADER
 * unset or `wrk`), wrk times the answers: a client in C on one thread, which at tens of kilobytes per answer takes
 * a fraction of what autocannon takes of the two cores the server shares with it. Otherwise (or BENCH_LOADER=
 * autocannon) autocannon, from a process of its own: the floor's server lives in the benchmark's process, and its
 * garbage or its work must not delay the client that times the answers.
 */
function load(base, path, seconds, connections) {
  const url = new URL(path, base).href;
  const loader = process.env.BENCH_LOADER || (hasWrk() ? 'wrk' : 'autocannon');
  return loader === 'wrk' ? wrkLoad(url, seconds, connections) : autocannonLoad(url, seconds, connections);
}

function hasWrk() {
  return spawnSync('wrk', ['--version']).error === undefined;
}

function wrkLoad(url, seconds, connections) {
  return new Promise((resolve, reject) => {
    const args = ['-t1', `-c${connections}`, `-d${seconds}s`, '--timeout', '30s', '-s', join(__dirname, 'wrk-summary.lua'), url];
    execFile('wrk', args, { maxBuffer: 1 << 20 }, (error, stdout, stderr) => {
      if (error) return reject(new Error(`wrk: ${error.message} ${stderr}`));
      const line = stdout.trim().split('\n').pop();
      const figures = JSON.parse(line);
      const bad = figures.status;
      resolve({
        loader: 'wrk',
        requests: { average: figures.requests / figures.seconds, total: figures.requests },
        latency: { p50: figures.p50, p90: figures.p90, p99: figures.p99, max: figures.max },
        '2xx': figures.requests - bad,
        non2xx: bad,
        errors: figures.errors,
      });
    });
  });
}

function autocannonLoad(url, seconds, connections) {
  return new Promise((resolve, reject) => {
    const child = fork(__filename, ['--load'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    let answered = false;
    child.on('message', (message) => {
      answered = true;
      if (message.error) reject(new Error(message.error));
      else resolve(message.result);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      if (!answered) reject(new Error(`the load process ended (${code}) without a result`));
    });
    child.send({ url, connections, seconds });
  });
}

if (require.main === module && process.argv[2] === '--load') {
  process.once('message', ({ url, connections, seconds }) => {
    autocannon({ url, connections, pipelining: 1, duration: seconds, timeout: 30 }, (error, result) => {
      process.send(error ? { error: error.message } : { result }, () => process.exit(0));
    });
  });
}

/** Where two JSON values first differ (path, then each side), or undefined when their texts are equal. */
function firstDifference(a, b, where) {
  if (JSON.stringify(a) === JSON.stringify(b)) return undefined;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return `${where || '.'}: ${JSON.stringify(a)} vs ${JSON.stringify(b)}`;
  if (!Array.isArray(a) && Object.keys(a).join() !== Object.keys(b).join()) return `${where || '.'}: keys ${Object.keys(a)} vs ${Object.keys(b)}`;
  for (const key of Object.keys(a)) {
    const found = firstDifference(a[key], b[key], `${where}.${key}`);
    if (found) return found;
  }
  return `${where || '.'}: lengths ${a.length} vs ${b.length}`;
}

function textDifference(a, b) {
  let at = 0;
  while (at < a.length && a[at] === b[at]) at++;
  return `at ${at}: ${JSON.stringify(a.slice(Math.max(0, at - 40), at + 40))} vs ${JSON.stringify(b.slice(Math.max(0, at - 40), at + 40))}`;
}

module.exports = { database, get, load, firstDifference, textDifference };
