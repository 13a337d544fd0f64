#!/usr/bin/env node
/*
 * Mirror scheduler benchmark (docs/mirrors.md): BENCH_MIRRORS (default 500) pull mirrors of local upstreams,
 * all due at once. The scheduler must drain them without starving the API (`GET /version` latency is sampled
 * by a separate process the whole time) and never run more than MIRROR_MAX_CONCURRENCY (default 4) fetches at
 * once (counted twice: by the runner, and by the upstream server as git requests in flight).
 *
 *   node bench/mirrors.bench.js                      # SQLite in a temporary DATA_DIR
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/anvil_bench node bench/mirrors.bench.js   # an existing, empty database
 *
 * It runs Anvil in this process (from dist/: run `npm run build` first), so that it can pin the clock and call the
 * scheduler's tick: the tick is driven every BENCH_TICK_MS (default 1000) instead of every 60 s, so that the
 * figure measured is the drain, not the tick interval (50 mirrors per tick as in production). The upstreams are
 * `git http-backend` behind the tests' node wrapper (test/support/git-upstream.ts) on 127.0.0.1. Each mirror is
 * created by POST /repos/migrate at version 1 of its upstream; then every upstream moves to version 2 (one more
 * commit) and the clock jumps past the interval, so that each sync really fetches.
 *
 * Environment:
 *   BENCH_MIRRORS             mirrors (default 500, at most 5000)
 *   MIRROR_MAX_CONCURRENCY    as the server setting (default 4)
 *   BENCH_TICK_MS             scheduler tick while draining (default 1000, at most 60000)
 *   DATABASE_URL              as the server setting (default: SQLite in the temporary DATA_DIR)
 * Prints the drain time, mirrors/s, peak concurrency, GET /version percentiles before (idle) and during the
 * drain, and the delay of Anvil's event loop meanwhile (to tell its own stalls from CPU contention); exits 1 when a mirror did not reach version 2 or the concurrency limit was exceeded.
 */
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const { monitorEventLoopDelay } = require('node:perf_hooks');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { bounded, loadDist, percentile } = require('./support');

/**
 * Synchronous work on Anvil's event loop, by kind: child-process spawns (fork + exec) and SQLite statements
 * (better-sqlite3 runs them synchronously). Only counted while `blocking.on` is true.
 */
const blocking = { on: false, spawn: { count: 0, total: 0, max: 0 }, sqlite: { count: 0, total: 0, max: 0 } };
function timed(kind, original) {
  return function (...args) {
    if (!blocking.on) return original.apply(this, args);
    const started = process.hrtime.bigint();
    try {
      return original.apply(this, args);
    } finally {
      const ms = Number(process.hrtime.bigint() - started) / 1e6;
      const entry = blocking[kind];
      entry.count += 1;
      entry.total += ms;
      entry.max = Math.max(entry.max, ms);
    }
  };
}
const childProcess = require('node:child_process');
childProcess.spawn = timed('spawn', childProcess.spawn);
try {
  const Sqlite = require('better-sqlite3');
  const statement = Object.getPrototypeOf(new Sqlite(':memory:').prepare('SELECT 1'));
  for (const method of ['run', 'get', 'all', 'iterate']) statement[method] = timed('sqlite', statement[method]);
} catch {
  // MySQL runs: nothing synchronous to count.
}

require('reflect-metadata');
const { createApp } = loadDist('bootstrap');
const { loadConfig } = loadDist('config/config');
const { Clock } = loadDist('common/time');
const { MirrorRunner } = loadDist('mirrors/mirror-runner');
const { MirrorScheduler } = loadDist('mirrors/mirror-scheduler');
const { UsersService } = loadDist('users/users.service');
const { AccessTokensService } = loadDist('users/access-tokens.service');

const MIRRORS = bounded('BENCH_MIRRORS', 500, 5000);
const TICK_MS = bounded('BENCH_TICK_MS', 1000, 60000);

const gitEnv = {
  PATH: process.env.PATH || '/usr/bin:/bin',
  HOME: os.tmpdir(),
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};
const git = (args, cwd) => execFileSync('git', args, { cwd, env: gitEnv, encoding: 'utf8' }).trim();

/** Sequential GET /version from another process (its own event loop), latencies in ms, until stdin closes. */
const SAMPLER = `
const url = process.argv[1];
const samples = [];
let stop = false;
process.stdin.on('end', () => { stop = true; });
process.stdin.resume();
(async () => {
  while (!stop) {
    const started = process.hrtime.bigint();
    const response = await fetch(url);
    await response.arrayBuffer();
    if (response.status !== 200) { console.error('status ' + response.status); process.exit(1); }
    samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  process.stdout.write(JSON.stringify(samples));
})();`;

function sample(url) {
  const child = spawn(process.execPath, ['-e', SAMPLER, url], { stdio: ['pipe', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const done = new Promise((resolve) => child.on('close', () => resolve(JSON.parse(out || '[]'))));
  return { stop: () => (child.stdin.end(), done) };
}

/**
 * The upstream server in a process of its own, so that its CGI work does not share Anvil's event loop. It
 * prints its base URL and root; closing its stdin makes it print the peak of git requests in flight and exit.
 */
const UPSTREAM = `
require('ts-node').register({ transpileOnly: true, project: process.argv[1] });
const { GitUpstream } = require(process.argv[2]);
GitUpstream.start().then((upstream) => {
  process.stdout.write(JSON.stringify({ baseUrl: upstream.baseUrl, root: upstream.root }) + '\\n');
  process.stdin.on('data', () => { upstream.peakInFlight = 0; });
  process.stdin.on('end', async () => {
    const peak = upstream.peakInFlight;
    await upstream.close();
    process.stdout.write(JSON.stringify({ peak }) + '\\n');
  });
  process.stdin.resume();
});`;

async function startUpstream() {
  const child = spawn(
    process.execPath,
    ['-e', UPSTREAM, path.join(__dirname, '..', 'tsconfig.json'), path.join(__dirname, '..', 'test', 'support', 'git-upstream.ts')],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  );
  const lines = [];
  let buffer = '';
  let wake = () => undefined;
  child.stdout.on('data', (chunk) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n')) >= 0) {
      lines.push(JSON.parse(buffer.slice(0, end)));
      buffer = buffer.slice(end + 1);
      wake();
    }
  });
  const nextLine = () => (lines.length > 0 ? Promise.resolve(lines.shift()) : new Promise((resolve) => (wake = () => resolve(lines.shift()))));
  const { baseUrl, root } = await nextLine();
  return {
    url: (name) => `${baseUrl}${name}.git`,
    dir: (name) => path.join(root, `${name}.git`),
    resetPeak: () => child.stdin.write('reset\n'),
    close: async () => {
      child.stdin.end();
      return (await nextLine()).peak;
    },
  };
}

function summary(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value) => (Number.isNaN(value) ? '-' : value.toFixed(2).padStart(8));
  return `${label.padEnd(34)} n=${String(sorted.length).padStart(6)}  p50=${f(percentile(sorted, 50))}  p99=${f(percentile(sorted, 99))}  max=${f(sorted[sorted.length - 1] ?? NaN)} ms`;
}

async function inBatches(count, parallel, work) {
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function main() {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-mirror-bench-'));
  const upstream = await startUpstream();
  let upstreamPeak = null;
  let t;
  try {
    // Two versions of one small repository; every upstream starts as a copy of v1.
    const work = path.join(root, 'work');
    git(['init', '--quiet', '--initial-branch', 'main', work]);
    for (const [file, version] of [
      ['a.txt', 'v1'],
      ['b.txt', 'v2'],
    ]) {
      fs.writeFileSync(path.join(work, file), `${version}\n`.repeat(1000));
      git(['add', file], work);
      git(['commit', '--quiet', '-m', version], work);
      git(['clone', '--quiet', '--bare', work, path.join(root, `${version}.git`)]);
    }
    const v2 = git(['rev-parse', 'HEAD'], work);
    for (let i = 0; i < MIRRORS; i++) fs.cpSync(path.join(root, 'v1.git'), upstream.dir(`r${i}`), { recursive: true });

    const dataDir = path.join(root, 'data');
    const config = loadConfig({ ...process.env, DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', SSH_ENABLED: 'false', ALLOW_LOCAL_NETWORKS: 'true' });
    config.mirrors.tickMs = 0;
    const app = await createApp(config);
    await app.listen(0, '127.0.0.1');
    const base = `http://127.0.0.1:${app.getHttpServer().address().port}`;
    t = { app };
    const user = await app.get(UsersService).create({ username: 'bench', email: 'bench@example.com', password: 'bench-password', mustChangePassword: false });
    const owner = { token: (await app.get(AccessTokensService).create(user, 'bench', ['all'])).plaintext };

    let created = Date.now();
    await inBatches(MIRRORS, 4, async (i) => {
      const response = await fetch(`${base}/api/v1/repos/migrate`, {
        method: 'POST',
        headers: { Authorization: `token ${owner.token}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({ clone_addr: upstream.url(`r${i}`), repo_name: `m${i}`, mirror: true, mirror_interval: '10m' }),
      });
      if (response.status !== 201) throw new Error(`migrate m${i}: ${response.status} ${await response.text()}`);
    });
    console.log(`created ${MIRRORS} mirrors in ${((Date.now() - created) / 1000).toFixed(1)} s`);

    for (let i = 0; i < MIRRORS; i++) {
      fs.rmSync(upstream.dir(`r${i}`), { recursive: true });
      fs.cpSync(path.join(root, 'v2.git'), upstream.dir(`r${i}`), { recursive: true });
    }

    const idle = sample(`${base}/api/v1/version`);
    await new Promise((resolve) => setTimeout(resolve, 5000));
    const idleSamples = await idle.stop();

    // Everything is due: the clock jumps past the 10 minute interval.
    const clock = app.get(Clock);
    const offset = 3600;
    const realNow = clock.nowUnix.bind(clock);
    clock.nowUnix = () => realNow() + offset;
    const runner = app.get(MirrorRunner);
    const scheduler = app.get(MirrorScheduler);
    const outcomes = new Map();
    runner.onSynced((repoId, outcome) => outcomes.set(outcome, (outcomes.get(outcome) || 0) + 1));
    upstream.resetPeak();
    const busy = sample(`${base}/api/v1/version`);
    // How long Anvil's own event loop was blocked: tells its own stalls from CPU contention on the machine.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    blocking.on = true;
    const started = Date.now();
    while ((outcomes.get('synced') || 0) + (outcomes.get('failed') || 0) < MIRRORS) {
      await scheduler.tick();
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    await runner.whenIdle();
    loopDelay.disable();
    blocking.on = false;
    const seconds = (Date.now() - started) / 1000;
    const busySamples = await busy.stop();
    upstreamPeak = await upstream.close();

    let behind = 0;
    for (let i = 0; i < MIRRORS; i++) {
      const dir = path.join(dataDir, 'repositories', 'bench', `m${i}.git`);
      if (git(['--git-dir', dir, 'rev-parse', 'refs/heads/main']) !== v2) behind += 1;
    }
    const limit = config.mirrors.maxConcurrency;
    console.log(
      `drained ${MIRRORS} due mirrors in ${seconds.toFixed(1)} s (${(MIRRORS / seconds).toFixed(1)} mirrors/s); outcomes ${JSON.stringify(Object.fromEntries(outcomes))}`,
    );
    console.log(`MIRROR_MAX_CONCURRENCY=${limit}: peak syncs running ${runner.peakActive}, peak git requests in flight at the upstream ${upstreamPeak}`);
    console.log(summary('GET /version idle', idleSamples));
    console.log(summary('GET /version while draining', busySamples));
    console.log(
      `Anvil event-loop delay while draining: p99=${(loopDelay.percentile(99) / 1e6).toFixed(2)} max=${(loopDelay.max / 1e6).toFixed(2)} ms; load average ${os
        .loadavg()
        .map((v) => v.toFixed(1))
        .join(' ')}`,
    );
    const block = (kind) => `${blocking[kind].count} calls, ${blocking[kind].total.toFixed(0)} ms in all, longest ${blocking[kind].max.toFixed(1)} ms`;
    console.log(`synchronous work on Anvil's event loop while draining: spawn ${block('spawn')}; SQLite ${block('sqlite')}`);
    console.log(`mirrors not at version 2: ${behind}`);
    if (behind > 0 || runner.peakActive > limit || upstreamPeak > limit) process.exitCode = 1;
  } finally {
    if (t) await t.app.close();
    if (upstreamPeak === null) await upstream.close();
    fs.rmSync(root, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
