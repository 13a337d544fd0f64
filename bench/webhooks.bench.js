#!/usr/bin/env node
/*
 * Webhook delivery benchmark: a local sink on 127.0.0.1 that answers each request after 1–5 ms, BENCH_HOOKS
 * (default 100) hooks on one repository, BENCH_PUSHES (default 1000) real `git push`es over HTTP. The sink
 * (bench/webhook-sink.js) stands for receivers on other machines: it runs in its own process and session at
 * nice BENCH_SINK_NICE (default 19, its autogroup too), so that on a machine shared with the server it takes
 * idle CPU, not the pushes'.
 *
 *   npm run build && node bench/webhooks.bench.js
 *
 * The server runs as a child process (dist/src/main.js, SQLite in a temporary DATA_DIR) so that it can be
 * killed with SIGKILL. After a warm-up, phases 1, 1b and 2 alternate in BENCH_ROUNDS (default 10) rounds:
 *   1. BENCH_BASELINE_PUSHES (default 100) pushes in all to a repository with no hook, each round started once
 *      every delivery arrived: the push duration and server CPU per push without webhooks.
 *  1b. The floor (BENCH_FLOOR=0 leaves it out): as many pushes to another repository with no hook, each followed by
 *      BENCH_HOOKS requests to the sink from bench/webhook-load.js, a process at the sink's priority that does
 *      only what every sender must (sign a real push payload, POST it, read the answer) and keeps nothing. The
 *      push duration then shows what that many deliveries cost a push on this machine, whoever sends them:
 *      phase 2 cannot do better than this.
 *   2. BENCH_PUSHES pushes in all to a repository with BENCH_HOOKS hooks: push durations, server CPU per push
 *      with its deliveries (each round ends when they all arrived), deliveries/s over these rounds, and per
 *      delivery the time from the end of its own `git push` (the event was recorded before the push returned;
 *      one that arrived before the push returned counts 0) to its arrival at the sink, p50/p99.
 *   3. The sink stops answering, pushes until BENCH_PENDING (default 5000) deliveries wait in the outbox, the
 *      server gets SIGKILL, the sink answers again, the server restarts: every delivery of phase 3 must arrive;
 *      a UUID may arrive twice only when it was in flight (received by the sink, unanswered) at the kill. The
 *      pushes of this phase (deliveries held) give the push duration and CPU with the outbox write alone. The
 *      drain of that backlog gives the delivery rate with work always waiting (phase 2's rate is bounded by the
 *      pushes when they are slower than the deliveries). The restarted server takes back the leases of the
 *      killed one (same machine, dead pid) before it sends; the rate of the hooks no lease held at the kill is
 *      shown apart, with the first arrival of the others.
 * Server CPU is read from /proc, in all and by part (main thread, other threads, the webhook delivery process).
 * Exits 1 when a delivery is missing or a duplicate was not in flight.
 */
'use strict';

const { fork, spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { bounded, percentile } = require('./support');

const HOOKS = bounded('BENCH_HOOKS', 100, 1000);
const PUSHES = bounded('BENCH_PUSHES', 1000, 100000);
const BASELINE = bounded('BENCH_BASELINE_PUSHES', 100, 10000);
const PENDING = bounded('BENCH_PENDING', 5000, 1000000);
const PUSHERS = bounded('BENCH_PUSHERS', 2, 16);
const ROUNDS = bounded('BENCH_ROUNDS', 10, 1000);
const FLOOR = process.env.BENCH_FLOOR !== '0';
const root = path.join(__dirname, '..');

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/**
 * `pid` (a child started in a session of its own) at nice `nice`, its autogroup too: with the kernel's autogroups
 * on, CPU is shared between sessions first, and a nice value alone would only lower the process's share of its
 * session's. Either may be refused: the process then runs as it is.
 */
async function lowerPriority(pid, nice) {
  try {
    os.setPriority(pid, nice);
  } catch {
    // not allowed here
  }
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      fs.writeFileSync(`/proc/${pid}/autogroup`, String(nice));
      return;
    } catch (error) {
      // The kernel takes a new autogroup nice value at most every 100 ms machine-wide.
      if (error.code !== 'EAGAIN') return;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
  }
}

/**
 * The sink (bench/webhook-sink.js) in a child process, in a session of its own at BENCH_SINK_NICE (default 19):
 * records (uuid, arrival) here as it reports them, and answers after 1–5 ms, or holds answers while paused.
 */
async function startSink() {
  const child = fork(path.join(__dirname, 'webhook-sink.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true });
  const nice = Math.min(19, Math.max(0, Number.parseInt(process.env.BENCH_SINK_NICE ?? '19', 10) || 0));
  await lowerPriority(child.pid, nice);
  const sink = { child, nice: os.getPriority(child.pid), arrivals: [], byUuid: new Map(), waiters: [], questions: new Map(), asked: 0 };
  sink.pause = (paused) => child.send({ paused });
  sink.inFlight = () =>
    new Promise((resolve) => {
      const id = ++sink.asked;
      sink.questions.set(id, resolve);
      child.send({ inFlight: true, id });
    });
  sink.stop = () => child.kill('SIGTERM');
  /** The body of the next push delivery the sink receives. */
  sink.sample = () =>
    new Promise((resolve) => {
      sink.sampled = resolve;
      child.send({ sample: true });
    });
  const port = await new Promise((resolve, reject) => {
    child.once('error', reject);
    child.on('message', (message) => {
      if (message.ready) resolve(message.ready);
      if (message.sample !== undefined) sink.sampled?.(message.sample);
      if (message.inFlight) {
        sink.questions.get(message.id)(new Set(message.inFlight));
        sink.questions.delete(message.id);
      }
      if (message.arrivals) {
        for (const [uuid, at, ref, hookPath] of message.arrivals) {
          sink.arrivals.push({ uuid, arrival: at - performance.timeOrigin, ref, hookPath });
          sink.byUuid.set(uuid, (sink.byUuid.get(uuid) ?? 0) + 1);
        }
        for (const waiter of sink.waiters.splice(0)) waiter();
      }
    });
  });
  sink.url = `http://127.0.0.1:${port}`;
  return sink;
}

/** CPU time (user + system, ms) the process `pid` has used so far, from /proc (Linux; 0 elsewhere). */
function cpuMs(pid) {
  try {
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
  } catch {
    return 0;
  }
}

/** The pid of the server's webhook delivery process (a child of it, in a session of its own), or 0. */
function deliveryPid(serverPid) {
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = fs.readFileSync(`/proc/${entry}/stat`, 'utf8').split(') ')[1].split(' ');
      if (Number(fields[1]) === serverPid && fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes('webhook-delivery.process')) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return 0;
}

/** CPU time (ms) of the server and of its delivery process. */
const serverCpuMs = (pid) => {
  const delivery = deliveryPid(pid);
  return cpuMs(pid) + (delivery ? cpuMs(delivery) : 0);
};

/**
 * The server's CPU time (ms): its main thread, its other threads (libuv's pool, V8's helpers), and its webhook
 * delivery process (all its threads), from /proc (Linux).
 */
function threadCpuMs(pid) {
  const split = { main: 0, delivery: 0, other: 0 };
  let tasks = [];
  try {
    tasks = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return split;
  }
  for (const tid of tasks) {
    try {
      const fields = fs.readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8').split(') ')[1].split(' ');
      split[tid === String(pid) ? 'main' : 'other'] += ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // the thread ended meanwhile
    }
  }
  const delivery = deliveryPid(pid);
  if (delivery) split.delivery = cpuMs(delivery);
  return split;
}

/** `total` plus what each thread used from `before` to `after`. */
const addUsed = (total, before, after) => ({
  main: total.main + after.main - before.main,
  delivery: total.delivery + after.delivery - before.delivery,
  other: total.other + after.other - before.other,
});

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let out = '';
    let err = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.stderr.on('data', (chunk) => (err += chunk));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${command} ${args.join(' ')}: ${code}\n${err}`))));
  });
}

async function waitForServer(base) {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      const response = await fetch(`${base}/api/v1/version`);
      if (response.ok) return;
    } catch {
      // not yet listening
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('the server did not start');
}

async function main() {
  if (!fs.existsSync(path.join(root, 'dist', 'src', 'main.js'))) {
    console.error('run "npm run build" first');
    process.exit(2);
  }
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-webhooks-bench-'));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    ROOT_URL: `${base}/`,
    SSH_ENABLED: 'false',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOWED_HOSTS: 'loopback',
  };
  delete env.DATABASE_URL;
  let server = null;
  const startServer = async () => {
    // BENCH_CPU_PROF=dir: each server run writes a V8 CPU profile there when it exits (bench/profile-summary.js):
    // the one of phases 1, 1b and 2 (stopped for it) and the one that drains phase 3's backlog.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    server = spawn(process.execPath, [...profile, path.join(root, 'dist', 'src', 'main.js')], { env, stdio: ['ignore', 'ignore', 'inherit'] });
    await waitForServer(base);
  };
  const sink = await startSink();
  const sinkUrl = sink.url;
  const gitEnv = {
    ...process.env,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    HOME: dataDir,
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  };
  try {
    const token = (
      await run(
        process.execPath,
        [
          path.join(root, 'dist', 'src', 'cli', 'main.js'),
          'admin',
          'user',
          'create',
          '--username',
          'bench',
          '--email',
          'bench@example.com',
          '--random-password',
          '--admin',
          '--access-token',
          '--must-change-password',
          'false',
        ],
        { env },
      )
    )
      .trim()
      .split('\n')
      .pop()
      .trim();
    await startServer();
    const api = async (method, apiPath, body) => {
      const response = await fetch(`${base}/api/v1${apiPath}`, {
        method,
        headers: { Authorization: `token ${token}`, 'Content-Type': 'application/json' },
        body: body ? JSON.stringify(body) : undefined,
      });
      if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
      return response.status === 204 ? null : response.json();
    };
    await api('POST', '/user/repos', { name: 'plain' });
    await api('POST', '/user/repos', { name: 'hooked' });
    // The floor pushes to a repository of its own: each side's repository grows by its own pushes alone (a push's
    // cost grows with the loose objects piling up between two auto-gcs).
    if (FLOOR) await api('POST', '/user/repos', { name: 'floor' });
    // One working copy per pusher and repository, each on its own branch, so that pushes run side by side.
    const pushersOf = (repo) => {
      const remote = `http://bench:${token}@127.0.0.1:${port}/bench/${repo}.git`;
      const works = [];
      for (let index = 0; index < PUSHERS; index++) {
        const work = path.join(dataDir, `${repo}-${index}`);
        execFileSync('git', ['init', '--quiet', '--initial-branch', `b${index}`, work], { env: gitEnv });
        works.push({ work, remote, branch: `b${index}`, count: 0 });
      }
      return works;
    };
    const plain = pushersOf('plain');
    const hookedWorks = pushersOf('hooked');
    const floorWorks = FLOOR ? pushersOf('floor') : [];
    const pushOnce = async (pusher) => {
      pusher.count += 1;
      fs.writeFileSync(path.join(pusher.work, 'file.txt'), `${pusher.count}\n`);
      execFileSync('git', ['add', 'file.txt'], { cwd: pusher.work, env: gitEnv });
      execFileSync('git', ['commit', '--quiet', '-m', `commit ${pusher.count}`], { cwd: pusher.work, env: gitEnv });
      const started = performance.now();
      await run('git', ['push', '--quiet', pusher.remote, `${pusher.branch}:${pusher.branch}`], { cwd: pusher.work, env: gitEnv });
      const ended = performance.now();
      return { started, ended, commit: execFileSync('git', ['rev-parse', 'HEAD'], { cwd: pusher.work, env: gitEnv, encoding: 'utf8' }).trim() };
    };
    const pushes = async (works, count, afterEach = () => undefined) => {
      const results = [];
      let next = 0;
      await Promise.all(
        works.map(async (pusher) => {
          while (next < count) {
            next += 1;
            results.push(await pushOnce(pusher));
            afterEach();
          }
        }),
      );
      return results;
    };
    let expectedArrivals = 0;
    const allArrived = async () => {
      while (sink.arrivals.length < expectedArrivals) await new Promise((resolve) => sink.waiters.push(resolve));
    };

    for (let index = 0; index < HOOKS; index++) {
      await api('POST', '/repos/bench/hooked/hooks', {
        type: 'forgejo',
        active: true,
        events: ['push'],
        config: { url: `${sinkUrl}/hook/${index}`, content_type: 'json', secret: `secret-${index}` },
      });
    }
    // Warm-up (not measured): the first pushes create the branches and warm the server up.
    const sample = sink.sample();
    await pushes(plain, PUSHERS * 2);
    await pushes(hookedWorks, PUSHERS * 2);
    if (FLOOR) await pushes(floorWorks, PUSHERS * 2);
    expectedArrivals += PUSHERS * 2 * HOOKS;
    await allArrived();
    // The floor's sender, at the sink's priority, sends a real push payload as the server does.
    const load = FLOOR ? fork(path.join(__dirname, 'webhook-load.js'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], detached: true }) : null;
    if (load) {
      await lowerPriority(load.pid, sink.nice);
      load.send({ payload: await sample, maxSockets: Number(process.env.WEBHOOK_DELIVERY_WORKERS || 16) });
    }

    // Phases 1 and 2, alternating rounds: pushes to a repository with no hook (each round starts once every
    // delivery arrived) and to the one with HOOKS hooks (deliveries flowing, the round ends when all arrived).
    const baselineDurations = [];
    const hookedDurations = [];
    const hooked = [];
    const arrivalsOfHooked = [];
    let baselineCpu = 0;
    let hookedCpu = 0;
    const floorDurations = [];
    let floorCpu = 0;
    let floorOthersCpu = 0;
    let baselineThreads = { main: 0, delivery: 0, other: 0 };
    let hookedThreads = { main: 0, delivery: 0, other: 0 };
    let hookedSeconds = 0;
    // The sink's CPU per hooked push: it shares the machine's cores (at a low priority, see startSink).
    let sinkCpu = 0;
    const loads = [];
    const rounds = Math.min(ROUNDS, BASELINE, PUSHES);
    for (let round = 0; round < rounds; round++) {
      const count = (total) => Math.floor(total / rounds) + (round < total % rounds ? 1 : 0);
      const sides = (round % 2 === 0 ? ['plain', 'floor', 'hooked'] : ['hooked', 'floor', 'plain']).filter((side) => side !== 'floor' || load);
      loads.push(os.loadavg()[0]);
      for (const side of sides) {
        await allArrived();
        const cpu = serverCpuMs(server.pid);
        const threads = threadCpuMs(server.pid);
        const started = performance.now();
        if (side === 'plain') {
          const results = await pushes(plain, count(BASELINE));
          baselineDurations.push(...results.map((push) => push.ended - push.started));
          baselineCpu += serverCpuMs(server.pid) - cpu;
          baselineThreads = addUsed(baselineThreads, threads, threadCpuMs(server.pid));
        } else if (side === 'floor') {
          const others = cpuMs(sink.child.pid) + cpuMs(load.pid);
          const results = await pushes(floorWorks, count(BASELINE), () => {
            expectedArrivals += HOOKS;
            load.send({ send: { url: sinkUrl, hooks: HOOKS } });
          });
          await allArrived();
          floorCpu += serverCpuMs(server.pid) - cpu;
          floorOthersCpu += cpuMs(sink.child.pid) + cpuMs(load.pid) - others;
          floorDurations.push(...results.map((push) => push.ended - push.started));
        } else {
          const before = sink.arrivals.length;
          const own = cpuMs(sink.child.pid);
          const results = await pushes(hookedWorks, count(PUSHES));
          expectedArrivals += results.length * HOOKS;
          await allArrived();
          hookedSeconds += (performance.now() - started) / 1000;
          hookedCpu += serverCpuMs(server.pid) - cpu;
          hookedThreads = addUsed(hookedThreads, threads, threadCpuMs(server.pid));
          sinkCpu += cpuMs(sink.child.pid) - own;
          hooked.push(...results);
          hookedDurations.push(...results.map((push) => push.ended - push.started));
          arrivalsOfHooked.push(...sink.arrivals.slice(before));
        }
      }
    }
    baselineDurations.sort((a, b) => a - b);
    hookedDurations.sort((a, b) => a - b);
    floorDurations.sort((a, b) => a - b);
    load?.kill('SIGTERM');
    const expected = hooked.length * HOOKS;
    // Latency: each arrival against the end of its own push (the push whose commit its event reports, read
    // from the outbox); 0 for one that arrived before its `git push` had returned.
    const endOf = new Map(hooked.map((push) => [push.commit, push.ended]));
    const Database = require('better-sqlite3');
    const commitOf = new Map();
    {
      const database = new Database(path.join(dataDir, 'anvil.db'), { readonly: true });
      const rows = database
        .prepare(
          "SELECT d.uuid AS uuid, json_extract(e.payload, '$.after') AS after FROM webhook_delivery d JOIN webhook_event e ON e.id = d.event_id WHERE d.done = 1",
        )
        .all();
      for (const row of rows) commitOf.set(row.uuid, row.after);
      database.close();
    }
    const latencies = [];
    for (const arrival of arrivalsOfHooked) {
      const ended = endOf.get(commitOf.get(arrival.uuid));
      if (ended === undefined) throw new Error(`delivery ${arrival.uuid} does not report a measured push`);
      latencies.push(Math.max(0, arrival.arrival - ended));
    }
    latencies.sort((a, b) => a - b);

    // Profiling (BENCH_CPU_PROF): the server of phases 1, 1b and 2 stops with SIGTERM, so that its profile (the
    // pushes, with and without hooks) is written; phase 3 starts a fresh one.
    if (process.env.BENCH_CPU_PROF) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
      await startServer();
    }

    // Phase 3: SIGKILL with PENDING deliveries waiting.
    sink.pause(true);
    const phase3Before = new Set(sink.byUuid.keys());
    const phase3Pushes = Math.ceil(PENDING / HOOKS);
    const heldCpu = serverCpuMs(server.pid);
    const held = (await pushes(hookedWorks, phase3Pushes)).map((push) => push.ended - push.started).sort((a, b) => a - b);
    const heldCpuUsed = serverCpuMs(server.pid) - heldCpu;
    server.kill('SIGKILL');
    await new Promise((resolve) => server.once('exit', resolve));
    // Asked once the server is dead (answers are held): every delivery that reached the sink unanswered.
    const inFlightAtKill = await sink.inFlight();
    const database = new Database(path.join(dataDir, 'anvil.db'), { readonly: true });
    const waiting = database.prepare('SELECT COUNT(*) AS n FROM webhook_delivery WHERE done = 0').get().n;
    // Deliveries of phases 1 and 2 that needed more than one attempt, by the answer of their last one.
    const retried = database.prepare('SELECT COUNT(*) AS n, MAX(attempts) AS most FROM webhook_delivery WHERE done = 1 AND attempts > 1').get();
    database.close();
    sink.pause(false);
    const restartStarted = performance.now();
    const loadAtDrain = os.loadavg();
    await startServer();
    const drainCpu = serverCpuMs(server.pid);
    const phase3Expected = phase3Pushes * HOOKS;
    const phase3Uuids = () => [...sink.byUuid.keys()].filter((uuid) => !phase3Before.has(uuid));
    while (phase3Uuids().length < phase3Expected)
      await new Promise((resolve) => {
        sink.waiters.push(resolve);
        setTimeout(resolve, 500);
      });
    const recovered = performance.now() - restartStarted;
    const drainCpuUsed = serverCpuMs(server.pid) - drainCpu;
    // The drain rate: a backlog of PENDING deliveries, from the first arrival after the restart to the last.
    const afterRestart = sink.arrivals.filter((arrival) => arrival.arrival >= restartStarted).map((arrival) => arrival.arrival);
    const drainSeconds = (Math.max(...afterRestart) - Math.min(...afterRestart)) / 1000;
    // The hooks the killed server was sending to keep their leases (WEBHOOK_TIMEOUT + 5 s from their last
    // renewal): their deliveries wait for that, the others' show the rate the restarted server sends at.
    const leasedAtKill = new Set(sink.arrivals.filter((arrival) => inFlightAtKill.has(arrival.uuid)).map((arrival) => arrival.hookPath));
    const unleased = sink.arrivals
      .filter((arrival) => arrival.arrival >= restartStarted && !leasedAtKill.has(arrival.hookPath))
      .map((arrival) => arrival.arrival);
    const unleasedSeconds = (Math.max(...unleased) - Math.min(...unleased)) / 1000;
    const leasedFirst = Math.min(
      ...sink.arrivals.filter((arrival) => arrival.arrival >= restartStarted && leasedAtKill.has(arrival.hookPath)).map((arrival) => arrival.arrival),
    );
    const duplicates = phase3Uuids().filter((uuid) => sink.byUuid.get(uuid) > 1);
    const unexpected = duplicates.filter((uuid) => !inFlightAtKill.has(uuid));

    const ms = (value) => `${value.toFixed(1)} ms`;
    const p = (sorted, q) => percentile(sorted, q);
    console.log(`hooks ${HOOKS}, pushes ${PUSHES} (${PUSHERS} pushers), sink 1–5 ms at nice ${sink.nice}, SQLite, ${os.availableParallelism()} cores`);
    const mean = (values) => values.reduce((sum, value) => sum + value, 0) / values.length;
    console.log(`${rounds} alternating rounds; load average (1 min) at their starts: ${loads.map((value) => value.toFixed(1)).join(' ')}`);
    console.log(
      `push without hooks: p50 ${ms(p(baselineDurations, 50))}, mean ${ms(mean(baselineDurations))}, p99 ${ms(p(baselineDurations, 99))} (${BASELINE} pushes); server CPU ${ms(baselineCpu / BASELINE)} per push`,
    );
    console.log(
      `push with ${HOOKS} hooks: p50 ${ms(p(hookedDurations, 50))}, mean ${ms(mean(hookedDurations))}, p99 ${ms(p(hookedDurations, 99))} (${PUSHES} pushes, deliveries flowing); server CPU ${ms(hookedCpu / PUSHES)} per push, its deliveries included; the sink's ${ms(sinkCpu / PUSHES)}`,
    );
    const slower = (sorted) => `${((p(sorted, 50) / p(baselineDurations, 50) - 1) * 100).toFixed(1)}%`;
    if (load) {
      console.log(
        `floor, push without hooks and ${HOOKS} requests after each from a minimal sender: p50 ${ms(p(floorDurations, 50))} (${slower(floorDurations)} over none), mean ${ms(mean(floorDurations))} (${floorDurations.length} pushes); server CPU ${ms(floorCpu / floorDurations.length)} per push; sender and sink ${ms(floorOthersCpu / floorDurations.length)}`,
      );
    }
    console.log(`push with ${HOOKS} hooks, deliveries flowing: ${slower(hookedDurations)} over none`);
    const byThread = (split, count) =>
      `main thread ${ms(split.main / count)}, other threads ${ms(split.other / count)}, delivery process ${ms(split.delivery / count)}`;
    console.log(`server CPU per push by thread: without hooks ${byThread(baselineThreads, BASELINE)}; with ${HOOKS} hooks ${byThread(hookedThreads, PUSHES)}`);
    console.log(
      `push with ${HOOKS} hooks, deliveries held (sink not answering): p50 ${ms(p(held, 50))}, mean ${ms(mean(held))} (${held.length} pushes); server CPU ${ms(heldCpuUsed / held.length)} per push`,
    );
    console.log(`deliveries: ${expected} in ${hookedSeconds.toFixed(1)} s of hooked rounds = ${(expected / hookedSeconds).toFixed(0)} deliveries/s`);
    const seen = new Map();
    for (const arrival of arrivalsOfHooked) seen.set(arrival.uuid, (seen.get(arrival.uuid) ?? 0) + 1);
    const again = [...seen.values()].filter((count) => count > 1).length;
    console.log(`deliveries sent more than once before the kill: ${retried.n}${retried.n > 0 ? ` (at most ${retried.most} attempts)` : ''}`);
    console.log(
      `push end to arrival: p50 ${ms(p(latencies, 50))}, p99 ${ms(p(latencies, 99))}, max ${ms(latencies[latencies.length - 1])}, ${latencies.filter((value) => value > 1000).length} over 1 s; ${again} deliveries arrived more than once`,
    );
    console.log(
      `backlog drain after the restart: ${afterRestart.length} deliveries in ${drainSeconds.toFixed(1)} s = ${(afterRestart.length / drainSeconds).toFixed(0)} deliveries/s`,
    );
    console.log(
      `  of the ${HOOKS - leasedAtKill.size} hooks no lease held at the kill: ${unleased.length} in ${unleasedSeconds.toFixed(1)} s = ${(unleased.length / unleasedSeconds).toFixed(0)} deliveries/s; the ${leasedAtKill.size} others' first arrival ${((leasedFirst - restartStarted) / 1000).toFixed(1)} s after the restart began`,
    );
    console.log(
      `server CPU per delivery: ${(drainCpuUsed / phase3Expected).toFixed(2)} ms draining the backlog (${(drainCpuUsed / 1000).toFixed(1)} s for ${phase3Expected}); ${(hookedCpu / expected).toFixed(2)} ms while pushing (pushes included)`,
    );
    console.log(
      `load average at the drain: ${loadAtDrain.map((value) => value.toFixed(1)).join(' ')}; at the end: ${os
        .loadavg()
        .map((value) => value.toFixed(1))
        .join(' ')}`,
    );
    console.log(
      `kill -9 with ${waiting} deliveries waiting (${inFlightAtKill.size} in flight at the sink): all ${phase3Expected} arrived ${(recovered / 1000).toFixed(1)} s after the restart began; duplicates ${duplicates.length}, of them not in flight ${unexpected.length}`,
    );
    if (phase3Uuids().length < phase3Expected || unexpected.length > 0) process.exitCode = 1;
  } finally {
    if (server && server.exitCode === null) server.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 500));
    sink.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
