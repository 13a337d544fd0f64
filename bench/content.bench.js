#!/usr/bin/env node
/*
 * Repository content benchmark against a running Anvil (issue 16):
 *   1. generates a repository of BENCH_FILES files (default 5 000, in directories of 100) and BENCH_COMMITS commits
 *      (default 10 000: the first adds every file, each further one changes one file), with git fast-import, and
 *      pushes it into a new repository of the token's user over smart HTTP;
 *   2. sends BENCH_REQUESTS requests (default 4 000), BENCH_CONNECTIONS at once (default 64), half
 *      GET /repos/{o}/{r}/contents/{file} and half GET /repos/{o}/{r}/raw/{file} for random files, and prints
 *      p50/p90/p99/max per route and requests/s;
 *   3. meanwhile samples the git processes the server started (its children and its git launcher's; BENCH_SERVER_PID,
 *      Linux /proc) and prints the most seen at once, to compare with the server's GIT_MAX_PROCESSES.
 *
 *   BENCH_TOKEN=<token> BENCH_SERVER_PID=<pid> node bench/content.bench.js
 *
 * Environment: BENCH_URL (default http://127.0.0.1:3000, loopback only), BENCH_TOKEN (write:repository),
 * BENCH_SERVER_PID (optional), BENCH_FILES (at most 50 000), BENCH_COMMITS (at most 100 000), BENCH_REQUESTS (at
 * most 100 000), BENCH_CONNECTIONS (at most 256), BENCH_WARMUP (requests sent first and reported apart, default
 * 1 000: the cold start of the fresh repository; 0 measures it with the rest). The local files live in a temporary directory removed at the end;
 * the repository is deleted again. Exits 1 when a request fails.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const http = require('node:http');
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
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`${command} ${args[0]} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`))));
    if (input) input.pipe(child.stdin);
    else child.stdin.end();
  });
}

const fileName = (index) => `d${String(Math.floor(index / 100)).padStart(3, '0')}/file-${String(index).padStart(5, '0')}.txt`;

/** fast-import commands: one commit adding every file, then one commit per change of one file. */
function* history() {
  const when = 1_700_000_000;
  const commit = (n, message, body) => {
    const data = Buffer.from(message);
    return `commit refs/heads/main\ncommitter Bench <bench@example.com> ${when + n} +0000\ndata ${data.length}\n${message}\n${body}\n`;
  };
  let body = '';
  for (let index = 0; index < FILES; index++) {
    const content = `file ${index}\n${'x'.repeat(200)}\n`;
    body += `M 100644 inline ${fileName(index)}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
  }
  yield commit(0, 'add files', body);
  for (let n = 1; n < COMMITS; n++) {
    const index = (n * 7919) % FILES;
    const content = `file ${index}\nchange ${n}\n${'y'.repeat(200)}\n`;
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

/**
 * Git processes started by the server, from /proc: its children, and those of the small launcher process it
 * starts git through (git-launcher.ts); both count against GIT_MAX_PROCESSES.
 */
function gitChildren() {
  if (!SERVER_PID) return 0;
  const processes = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      processes.push({ pid: Number(entry), ppid, comm });
    } catch {
      // Gone meanwhile.
    }
  }
  const launchers = new Set(processes.filter((p) => p.ppid === SERVER_PID && p.comm.startsWith('node')).map((p) => p.pid));
  return processes.filter((p) => (p.ppid === SERVER_PID || launchers.has(p.ppid)) && p.comm.startsWith('git')).length;
}

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

    const agent = new http.Agent({ keepAlive: true, maxSockets: CONNECTIONS });
    let failures = 0;
    let maxGit = 0;
    const sampler = setInterval(() => {
      maxGit = Math.max(maxGit, gitChildren());
    }, 5);
    const request = (timings, route, file) =>
      new Promise((resolve) => {
        const encoded = file.split('/').map(encodeURIComponent).join('/');
        const url = new URL(`${BASE}/api/v1/repos/${me.login}/${name}/${route}/${encoded}`);
        const t0 = process.hrtime.bigint();
        const req = http.get(url, { agent, headers: { Authorization: `token ${TOKEN}` } }, (res) => {
          res.resume();
          res.on('end', () => {
            timings[route].push(Number(process.hrtime.bigint() - t0) / 1e6);
            if (res.statusCode !== 200) {
              failures++;
              if (failures <= 3) console.error(`${route} ${file}: ${res.statusCode}`);
            }
            resolve();
          });
        });
        req.on('error', (error) => {
          failures++;
          if (failures <= 3) console.error(`${route} ${file}: ${error.message}`);
          resolve();
        });
      });
    // `total` requests, CONNECTIONS at once, half contents and half raw, for random files; prints the figures.
    const phase = async (label, total) => {
      const timings = { contents: [], raw: [] };
      let next = 0;
      const phaseStarted = Date.now();
      const worker = async () => {
        while (next < total) {
          const index = next++;
          await request(timings, index % 2 === 0 ? 'contents' : 'raw', fileName(Math.floor(Math.random() * FILES)));
        }
      };
      await Promise.all(Array.from({ length: CONNECTIONS }, worker));
      const seconds = (Date.now() - phaseStarted) / 1000;
      console.log(`${label}: ${total} requests at ${CONNECTIONS} connections in ${seconds.toFixed(1)} s: ${(total / seconds).toFixed(0)} requests/s`);
      for (const [route, list] of Object.entries(timings)) {
        const sorted = list.sort((a, b) => a - b);
        const ms = (p) => percentile(sorted, p).toFixed(1);
        console.log(`  ${route.padEnd(8)} p50 ${ms(50)} ms  p90 ${ms(90)} ms  p99 ${ms(99)} ms  max ${sorted[sorted.length - 1].toFixed(1)} ms`);
      }
    };
    if (WARMUP > 0) await phase('warm-up (includes the cold start of the new repository)', WARMUP);
    await phase('measured', REQUESTS);
    clearInterval(sampler);
    agent.destroy();
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
