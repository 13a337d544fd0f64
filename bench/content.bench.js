#!/usr/bin/env node
/*
 * Repository content benchmark against a running Anvil:
 *   1. generates a repository of BENCH_FILES files (default 5 000, in directories of 100) and BENCH_COMMITS commits
 *      (default 10 000: the first adds every file, each further one changes one file), with git fast-import, and
 *      pushes it into a new repository of the token's user over smart HTTP;
 *   2. sends BENCH_REQUESTS requests (default 4 000) with autocannon (the lightest client, so that the figures are
 *      the server's, not the load generator's: both share the machine), BENCH_CONNECTIONS at once (default 64),
 *      half GET /repos/{o}/{r}/contents/{file} and half GET /repos/{o}/{r}/raw/{file} for random files, checks
 *      that every answer is a 200 carrying the file's bytes, and prints p50/p90/p99/max per route and requests/s
 *      (the first answer on each connection apart: it includes the connection's set-up, see `phase`);
 *      then checks BENCH_SAMPLE whole answers (default 100) one at a time;
 *   3. meanwhile samples the git processes the server started (its children and its git launcher's; BENCH_SERVER_PID,
 *      Linux /proc) and prints the most seen at once, to compare with the server's GIT_MAX_PROCESSES.
 *
 *   BENCH_TOKEN=<token> BENCH_SERVER_PID=<pid> node bench/content.bench.js
 *
 * Environment: BENCH_URL (default http://127.0.0.1:3000, loopback only), BENCH_TOKEN (write:repository),
 * BENCH_SERVER_PID (optional), BENCH_FILES (at most 50 000), BENCH_COMMITS (at most 100 000), BENCH_REQUESTS (at
 * most 100 000), BENCH_CONNECTIONS (at most 256), BENCH_WARMUP (requests sent first and reported apart, default
 * 1 000: the cold start of the fresh repository), BENCH_SAMPLE (at most 10 000). The local files live in a temporary directory removed at the end;
 * the repository is deleted again. Exits 1 when a request fails.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { bounded, baseUrl, percentile } = require('./support');

const BASE = baseUrl();
const TOKEN = process.env.BENCH_TOKEN;
const SERVER_PID = process.env.BENCH_SERVER_PID ? bounded('BENCH_SERVER_PID', 1, 2 ** 22) : null;
const FILES = bounded('BENCH_FILES', 5_000, 50_000);
const COMMITS = bounded('BENCH_COMMITS', 10_000, 100_000);
const REQUESTS = bounded('BENCH_REQUESTS', 4_000, 100_000);
const CONNECTIONS = bounded('BENCH_CONNECTIONS', 64, 256);
/** Requests sent first and reported apart: the cold start (history walk, readers starting) of a fresh repository. */
const WARMUP = bounded('BENCH_WARMUP', 1_000, 100_000);
/** Files whose whole `contents` and `raw` answers are checked one at a time after the load. */
const SAMPLE = bounded('BENCH_SAMPLE', 100, 10_000);
if (!TOKEN) {
  console.error('BENCH_TOKEN is required');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-content-bench-'));
const gitEnv = {
  PATH: process.env.PATH,
  HOME: work,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
};

function run(command, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: gitEnv, cwd: work, stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = [];
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args[0]} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`)),
    );
    if (input) input.pipe(child.stdin);
    else child.stdin.end();
  });
}

const fileName = (index) => `d${String(Math.floor(index / 100)).padStart(3, '0')}/file-${String(index).padStart(5, '0')}.txt`;

/** The file the n-th commit changes (n >= 1). */
const changedBy = (n) => (n * 7919) % FILES;
const initialContent = (index) => `file ${index}\n${'x'.repeat(200)}\n`;
const changedContent = (index, n) => `file ${index}\nchange ${n}\n${'y'.repeat(200)}\n`;

/** Each file's content at the tip of the generated history: what every answer must carry. */
function finalContents() {
  const last = new Array(FILES).fill(0);
  for (let n = 1; n < COMMITS; n++) last[changedBy(n)] = n;
  return last.map((n, index) => (n === 0 ? initialContent(index) : changedContent(index, n)));
}

/** fast-import commands: one commit adding every file, then one commit per change of one file. */
function* history() {
  const when = 1_700_000_000;
  const commit = (n, message, body) => {
    const data = Buffer.from(message);
    return `commit refs/heads/main\ncommitter Bench <bench@example.com> ${when + n} +0000\ndata ${data.length}\n${message}\n${body}\n`;
  };
  let body = '';
  for (let index = 0; index < FILES; index++) {
    const content = initialContent(index);
    body += `M 100644 inline ${fileName(index)}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  yield commit(0, 'add files', body);
  for (let n = 1; n < COMMITS; n++) {
    const index = changedBy(n);
    const content = changedContent(index, n);
    yield commit(n, `change ${n}`, `M 100644 inline ${fileName(index)}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
  }
}

async function api(method, apiPath, body) {
  const response = await fetch(`${BASE}/api/v1${apiPath}`, {
    method,
    headers: { Authorization: `token ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** The children of `pid` (Linux /proc/<pid>/task/<tid>/children, summed over its threads). */
function childrenOf(pid) {
  const children = [];
  let threads;
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return children; // Gone meanwhile.
  }
  for (const thread of threads) {
    try {
      for (const child of fs.readFileSync(`/proc/${pid}/task/${thread}/children`, 'utf8').split(' ')) if (child) children.push(Number(child));
    } catch {
      // Gone meanwhile.
    }
  }
  return children;
}

function commandOf(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

/**
 * Git processes started by the server, from /proc: its children, and those of the small launcher process it
 * starts git through (git-launcher.ts); both count against GIT_MAX_PROCESSES. Reads only the server's and the
 * launchers' children lists, not every process of the machine: the sampler shares the cores with the server.
 */
function gitChildren() {
  if (!SERVER_PID) return 0;
  let count = 0;
  for (const child of childrenOf(SERVER_PID)) {
    const command = commandOf(child);
    if (command.startsWith('git')) count++;
    else if (command.startsWith('node')) count += childrenOf(child).filter((grandchild) => commandOf(grandchild).startsWith('git')).length;
  }
  return count;
}

/** CPU seconds (user + system) a process has used so far, from /proc (its own threads, not its children). */
function cpuSeconds(pid) {
  if (!pid) return 0;
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime and stime, in clock ticks of 1/100 s
  } catch {
    return 0;
  }
}

const routes = ['contents', 'raw'];
const encodedName = (index) => fileName(index).split('/').map(encodeURIComponent).join('/');

/**
 * `total` requests with autocannon, CONNECTIONS at once (pipelining 1), half `contents` and half `raw` for random
 * files: each connection walks its own list. autocannon measures each answer's latency; the route and the check
 * of the answer come from the request's `onResponse`, which autocannon calls just before it reports the latency
 * of the same answer. Every answer is checked cheaply (status 200 and the file's exact bytes: raw as is,
 * contents as the base64 string inside the JSON); `validateSample` checks whole answers afterwards.
 */
function phase(target, total) {
  const autocannon = require('autocannon');
  const base = `${new URL(BASE).pathname.replace(/\/$/, '')}/api/v1/repos/${encodeURIComponent(target.owner)}/${encodeURIComponent(target.name)}`;
  const result = { timings: { contents: [], raw: [] }, firstOnConnection: [], failures: 0, seconds: 0 };
  let answered = null;
  const item = (route, index) => {
    const expected = route === 'raw' ? EXPECTED[index] : `"content":"${Buffer.from(EXPECTED[index]).toString('base64')}"`;
    return {
      method: 'GET',
      path: `${base}/${route}/${encodedName(index)}`,
      onResponse: (status, body) => {
        const ok = status === 200 && (route === 'raw' ? body === expected : body.includes(expected));
        answered = route;
        if (!ok) {
          result.failures++;
          if (result.failures <= 3) console.error(`${route} ${fileName(index)}: ${status} ${String(body).slice(0, 200)}`);
        }
      },
    };
  };
  const perConnection = Math.ceil(total / CONNECTIONS) + 1;
  const list = (client) => Array.from({ length: perConnection }, (_, k) => item(routes[(client + k) % 2], Math.floor(Math.random() * FILES)));
  let clients = 0;
  const started = Date.now();
  const cpuAtStart = { server: cpuSeconds(SERVER_PID), client: process.cpuUsage() };
  return new Promise((resolve, reject) => {
    const instance = autocannon(
      {
        url: BASE.replace(/\/$/, ''),
        connections: CONNECTIONS,
        pipelining: 1,
        amount: total,
        timeout: 30,
        headers: { Authorization: `token ${TOKEN}` },
        requests: [item('raw', 0)],
        setupClient: (client) => client.setRequests(list(clients++)),
      },
      (error, summary) => {
        if (error) return reject(error);
        result.seconds = (Date.now() - started) / 1000;
        const client = process.cpuUsage(cpuAtStart.client);
        result.cpu = { server: cpuSeconds(SERVER_PID) - cpuAtStart.server, client: (client.user + client.system) / 1e6 };
        result.total = summary.requests.total;
        result.failures += summary.errors + summary.timeouts;
        if (summary.errors + summary.timeouts > 0) console.error(`${summary.errors} errors, ${summary.timeouts} timeouts`);
        resolve(result);
      },
    );
    const answers = new WeakMap();
    instance.on('response', (client, status, bytes, milliseconds) => {
      // The first answer on each new connection also waits for the server to accept it, which a busy Node
      // server does one connection per turn of its event loop: reported apart, as connection set-up.
      const first = !answers.has(client);
      answers.set(client, true);
      if (answered) (first ? result.firstOnConnection : result.timings[answered]).push(milliseconds);
      answered = null;
    });
  });
}

/** Prints a phase's figures; returns its failures. */
function report(label, result) {
  console.log(
    `${label}: ${result.total} requests at ${CONNECTIONS} connections in ${result.seconds.toFixed(1)} s: ${(result.total / result.seconds).toFixed(0)} requests/s`,
  );
  const share = (seconds) => `${seconds.toFixed(1)} s (${((100 * seconds) / result.seconds).toFixed(0)}% of a core)`;
  console.log(
    `  CPU: ${SERVER_PID ? `server ${share(result.cpu.server)}, ` : ''}load generator ${share(result.cpu.client)}; load average ${os
      .loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
  );
  for (const [route, list] of Object.entries(result.timings)) {
    const sorted = list.sort((a, b) => a - b);
    const ms = (p) => percentile(sorted, p).toFixed(1);
    console.log(
      `  ${route.padEnd(8)} p50 ${ms(50)} ms  p90 ${ms(90)} ms  p99 ${ms(99)} ms  max ${sorted[sorted.length - 1].toFixed(1)} ms  (${sorted.length})`,
    );
  }
  const first = result.firstOnConnection.sort((a, b) => a - b);
  if (first.length > 0) {
    console.log(
      `  first answer on each new connection (accepted one per event-loop turn of the busy server): p50 ${percentile(first, 50).toFixed(1)} ms  max ${first[first.length - 1].toFixed(1)} ms  (${first.length})`,
    );
  }
  return result.failures;
}

/**
 * Whole answers for SAMPLE random files, one at a time after the load: `contents` as Forgejo's ContentsResponse
 * (type, path, size, base64 content, the blob's sha as git computes it, the ref's last commit) and `raw`'s bytes.
 */
async function validateSample(target, count) {
  const crypto = require('node:crypto');
  let failures = 0;
  const fail = (file, message) => {
    failures++;
    if (failures <= 3) console.error(`sample ${file}: ${message}`);
  };
  for (let k = 0; k < count; k++) {
    const index = Math.floor(Math.random() * FILES);
    const file = fileName(index);
    const expected = Buffer.from(EXPECTED[index]);
    const blobSha = crypto.createHash('sha1').update(`blob ${expected.length}\0`).update(expected).digest('hex');
    const headers = { Authorization: `token ${TOKEN}` };
    const base = `${BASE}/api/v1/repos/${target.owner}/${target.name}`;
    const contents = await fetch(`${base}/contents/${encodedName(index)}`, { headers });
    if (contents.status !== 200) {
      fail(file, `contents ${contents.status}`);
      continue;
    }
    const body = await contents.json();
    const problems = [];
    if (body.type !== 'file') problems.push(`type ${body.type}`);
    if (body.path !== file || body.name !== file.split('/').pop()) problems.push(`path ${body.path} name ${body.name}`);
    if (body.size !== expected.length) problems.push(`size ${body.size}`);
    if (body.encoding !== 'base64' || Buffer.from(body.content ?? '', 'base64').compare(expected) !== 0) problems.push('content');
    if (body.sha !== blobSha) problems.push(`sha ${body.sha}`);
    if (!/^[0-9a-f]{40}$/.test(body.last_commit_sha ?? '')) problems.push(`last_commit_sha ${body.last_commit_sha}`);
    if (problems.length > 0) fail(file, `contents: ${problems.join(', ')}`);
    const raw = await fetch(`${base}/raw/${encodedName(index)}`, { headers });
    const bytes = Buffer.from(await raw.arrayBuffer());
    if (raw.status !== 200 || bytes.compare(expected) !== 0) fail(file, `raw ${raw.status}, ${bytes.length} bytes`);
  }
  console.log(`validated ${count} whole contents and raw answers one at a time: ${failures} wrong`);
  return failures;
}

/** Each file's bytes at the tip of the history. */
const EXPECTED = finalContents();

async function main() {
  const me = await api('GET', '/user');
  const name = `content-bench-${Date.now()}`;
  await api('POST', '/user/repos', { name, private: false });
  try {
    const local = path.join(work, 'source.git');
    await run('git', ['init', '--quiet', '--bare', local]);
    let started = Date.now();
    await run('git', ['--git-dir', local, 'fast-import', '--quiet'], Readable.from(history()));
    console.log(`generated ${COMMITS} commits over ${FILES} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const remote = new URL(`${BASE}/${me.login}/${name}.git`);
    remote.username = me.login;
    remote.password = TOKEN;
    started = Date.now();
    await run('git', ['--git-dir', local, 'push', '--quiet', remote.toString(), 'main']);
    console.log(`pushed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

    const target = { owner: me.login, name };
    let maxGit = 0;
    const sampler = setInterval(() => {
      maxGit = Math.max(maxGit, gitChildren());
    }, 5);
    let failures = 0;
    if (WARMUP > 0) failures += report('warm-up (includes the cold start of the new repository)', await phase(target, WARMUP));
    failures += report('measured', await phase(target, REQUESTS));
    clearInterval(sampler);
    failures += await validateSample(target, SAMPLE);
    console.log(`${failures} failed`);
    if (SERVER_PID) console.log(`git processes of the server at once: at most ${maxGit} (sampled every 5 ms)`);
    if (failures > 0) process.exitCode = 1;
  } finally {
    await api('DELETE', `/repos/${me.login}/${name}`).catch((error) => console.error(error.message));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  fs.rmSync(work, { recursive: true, force: true });
  process.exit(1);
});
