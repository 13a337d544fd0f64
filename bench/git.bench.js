#!/usr/bin/env node
/*
 * Git transport benchmark against a running Anvil (docs/git-transports.md):
 *   1. generates a repository with BENCH_COMMITS commits (default 10 000, with git fast-import) and pushes it into
 *      a new repository of the token's user over smart HTTP;
 *   2. clones it BENCH_CLONES times, BENCH_PARALLEL at once (default 64 and 16), over HTTP and over SSH (a key made
 *      with ssh-keygen and registered through the API), and prints clones/s and latency percentiles;
 *   3. runs the same clones against the floor: the same bare repository served on loopback by
 *      `git http-backend` under a plain CGI wrapper (node http + the CGI environment), and by `git daemon`;
 *   4. pushes BENCH_PUSH_MIB (default 200) MiB of incompressible data over HTTP while sampling the server's RSS
 *      (needs BENCH_SERVER_PID, the pid of the node process; Linux /proc), and prints how much it grew.
 *
 *   BENCH_TOKEN=<token> BENCH_SERVER_PID=<pid> node bench/git.bench.js
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_SSH_PORT     the server's SSH port (default 2222); the SSH host is BENCH_URL's host
 *   BENCH_TOKEN        an access token with write:repository and write:user (creates a repository and a key)
 *   BENCH_SERVER_PID   pid of the server's node process, for the memory part (skipped without it)
 *   BENCH_COMMITS      commits in the generated repository (default 10000, at most 100000)
 *   BENCH_CLONES       clones per transport (default 64, at most 1000)
 *   BENCH_PARALLEL     clones in flight (default 16, at most 64)
 *   BENCH_PUSH_MIB     size of the big push in MiB (default 200, at most 2048)
 * Everything it creates locally lives in a temporary directory that is removed at the end; the repository and the
 * key it created on the server are deleted again. Exits 1 on any failed clone or push.
 */
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const crypto = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { bounded, baseUrl, percentile } = require('./support');

const BASE = baseUrl();
const HOST = new URL(BASE).hostname.replace(/^\[|\]$/g, '');
const SSH_PORT = bounded('BENCH_SSH_PORT', 2222, 65535);
const TOKEN = process.env.BENCH_TOKEN;
const SERVER_PID = process.env.BENCH_SERVER_PID ? bounded('BENCH_SERVER_PID', 1, 2 ** 22) : null;
const COMMITS = bounded('BENCH_COMMITS', 10_000, 100_000);
const CLONES = bounded('BENCH_CLONES', 64, 1000);
const PARALLEL = bounded('BENCH_PARALLEL', 16, 64);
const PUSH_MIB = bounded('BENCH_PUSH_MIB', 200, 2048);
if (!TOKEN) {
  console.error('BENCH_TOKEN is required');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-bench-'));
const home = path.join(work, 'home');
fs.mkdirSync(home);
const gitEnv = {
  PATH: process.env.PATH,
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_TERMINAL_PROMPT: '0',
  GIT_AUTHOR_NAME: 'Bench',
  GIT_AUTHOR_EMAIL: 'bench@example.com',
  GIT_COMMITTER_NAME: 'Bench',
  GIT_COMMITTER_EMAIL: 'bench@example.com',
};

function run(command, args, options = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: { ...gitEnv, ...options.env }, cwd: options.cwd ?? work, stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = [];
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`)),
    );
    if (options.input) options.input.pipe(child.stdin);
    else child.stdin.end();
  });
}

async function api(method, apiPath, body) {
  const response = await fetch(`${BASE}/api/v1${apiPath}`, {
    method,
    headers: { Authorization: `token ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${text}`);
  return text === '' ? null : JSON.parse(text);
}

/** A bare repository with `count` commits, each changing one of 100 small files. */
async function generate(dir, count) {
  await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', dir]);
  const lines = [];
  for (let i = 1; i <= count; i++) {
    const content = `line ${i} of a generated history\n`.repeat(4);
    lines.push('commit refs/heads/main', `mark :${i}`, `committer Bench <bench@example.com> ${1_700_000_000 + i} +0000`);
    const message = `commit ${i}`;
    lines.push(`data ${Buffer.byteLength(message)}`, message);
    if (i > 1) lines.push(`from :${i - 1}`);
    lines.push(`M 100644 inline file-${i % 100}.txt`, `data ${Buffer.byteLength(content)}`, content);
  }
  const stream = require('node:stream').Readable.from([lines.join('\n') + '\n']);
  await run('git', ['--git-dir', dir, 'fast-import', '--quiet'], { input: stream });
  await run('git', ['--git-dir', dir, 'gc', '--quiet', '--aggressive']);
}

/** Runs `total` clones of `url`, `parallel` at once; returns timings and failures. */
async function cloneLoad(label, url, env = {}) {
  const durations = [];
  let failures = 0;
  let next = 0;
  const started = process.hrtime.bigint();
  const worker = async () => {
    while (next < CLONES) {
      const index = next++;
      const target = path.join(work, `clone-${label}-${index}`);
      const t0 = process.hrtime.bigint();
      try {
        await run('git', ['clone', '--quiet', '--bare', url, target], { env });
        durations.push(Number(process.hrtime.bigint() - t0) / 1e6);
      } catch (error) {
        failures++;
        if (failures <= 3) console.error(`${label}: ${error.message.split('\n')[0]}`);
      }
      fs.rmSync(target, { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  durations.sort((a, b) => a - b);
  const row = {
    transport: label,
    clones: durations.length,
    failed: failures,
    'clones/s': (durations.length / seconds).toFixed(2),
    'p50 ms': Math.round(percentile(durations, 50)),
    'p99 ms': Math.round(percentile(durations, 99)),
    'max ms': Math.round(durations[durations.length - 1] ?? NaN),
  };
  console.log(JSON.stringify(row));
  return row;
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** The floor over HTTP: `git http-backend` behind the plainest CGI wrapper, one process per request. */
function cgiServer(projectRoot) {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://localhost');
    const child = spawn('git', ['http-backend'], {
      env: {
        ...gitEnv,
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        REQUEST_METHOD: request.method,
        PATH_INFO: decodeURIComponent(url.pathname),
        QUERY_STRING: url.search.slice(1),
        CONTENT_TYPE: request.headers['content-type'] ?? '',
        CONTENT_LENGTH: request.headers['content-length'] ?? '',
        HTTP_CONTENT_ENCODING: request.headers['content-encoding'] ?? '',
        GIT_PROTOCOL: request.headers['git-protocol'] ?? '',
        REMOTE_ADDR: '127.0.0.1',
      },
      stdio: ['pipe', 'pipe', 'ignore'],
    });
    request.pipe(child.stdin);
    // CGI output: headers, a blank line, then the body.
    let head = Buffer.alloc(0);
    let headersDone = false;
    child.stdout.on('data', (chunk) => {
      if (headersDone) return response.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const colon = line.indexOf(':');
        const name = line.slice(0, colon).trim();
        const value = line.slice(colon + 1).trim();
        if (name.toLowerCase() === 'status') status = Number(value.split(' ')[0]);
        else response.setHeader(name, value);
      }
      response.writeHead(status);
      response.write(head.subarray(end + 4));
    });
    child.stdout.on('end', () => response.end());
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]);
}

async function bigPush(pushUrl) {
  const dir = path.join(work, 'big');
  await run('git', ['init', '--quiet', '--initial-branch=main', dir]);
  const files = Math.max(1, Math.ceil(PUSH_MIB / 50));
  for (let i = 0; i < files; i++) {
    const size = Math.min(50, PUSH_MIB - i * 50) * 1024 * 1024;
    const out = fs.openSync(path.join(dir, `blob-${i}.bin`), 'w');
    for (let written = 0; written < size; written += 1024 * 1024) fs.writeSync(out, crypto.randomBytes(Math.min(1024 * 1024, size - written)));
    fs.closeSync(out);
  }
  await run('git', ['add', '.'], { cwd: dir });
  await run('git', ['commit', '--quiet', '-m', 'big'], { cwd: dir });
  const baseline = SERVER_PID ? rssKiB(SERVER_PID) : null;
  let peak = baseline;
  const sampler = SERVER_PID ? setInterval(() => (peak = Math.max(peak, rssKiB(SERVER_PID))), 50) : null;
  const t0 = process.hrtime.bigint();
  await run('git', ['push', '--quiet', pushUrl, 'main:refs/heads/big'], { cwd: dir });
  const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
  if (sampler) clearInterval(sampler);
  const row = { push: `${PUSH_MIB} MiB`, seconds: seconds.toFixed(1), 'MiB/s': (PUSH_MIB / seconds).toFixed(1) };
  if (baseline !== null) Object.assign(row, { 'server RSS before MiB': (baseline / 1024).toFixed(0), 'RSS growth MiB': ((peak - baseline) / 1024).toFixed(1) });
  console.log(JSON.stringify(row));
  return row;
}

async function main() {
  const me = await api('GET', '/user');
  const name = `git-bench-${Date.now()}`;
  const repo = await api('POST', '/user/repos', { name, private: false });
  const key = path.join(work, 'bench-key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const registered = await api('POST', '/user/keys', { title: name, key: fs.readFileSync(`${key}.pub`, 'utf8') });
  const sshEnv = {
    GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o IdentityAgent=none -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR`,
  };
  const servers = [];
  let daemon = null;
  try {
    const projectRoot = path.join(work, 'floor');
    const bare = path.join(projectRoot, 'repo.git');
    const t0 = Date.now();
    await generate(bare, COMMITS);
    console.log(`generated ${COMMITS} commits in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    const authUrl = new URL(`${me.login}/${name}.git`, `${BASE}/`);
    authUrl.username = 'bench';
    authUrl.password = TOKEN;
    await run('git', ['--git-dir', bare, 'push', '--quiet', authUrl.toString(), 'main']);
    console.log(`pushed to ${repo.clone_url}`);

    const results = [];
    results.push(await cloneLoad('anvil http', new URL(`${me.login}/${name}.git`, `${BASE}/`).toString()));
    results.push(await cloneLoad('anvil ssh', `ssh://git@${HOST.includes(':') ? `[${HOST}]` : HOST}:${SSH_PORT}/${me.login}/${name}.git`, sshEnv));
    const cgi = await cgiServer(projectRoot);
    servers.push(cgi);
    results.push(await cloneLoad('floor: git http-backend (CGI)', `http://127.0.0.1:${cgi.address().port}/repo.git`));
    const daemonPort = await freePort();
    daemon = spawn('git', ['daemon', '--export-all', '--reuseaddr', `--base-path=${projectRoot}`, '--listen=127.0.0.1', `--port=${daemonPort}`, projectRoot], {
      env: gitEnv,
      stdio: 'ignore',
    });
    for (let attempt = 0; attempt < 100; attempt++) {
      const ready = await new Promise((resolve) => {
        const socket = net.connect(daemonPort, '127.0.0.1', () => (socket.destroy(), resolve(true)));
        socket.on('error', () => resolve(false));
      });
      if (ready) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    results.push(await cloneLoad('floor: git daemon', `git://127.0.0.1:${daemonPort}/repo.git`));
    console.table(results);
    await bigPush(authUrl.toString());
    if (results.some((row) => row.failed > 0)) process.exitCode = 1;
  } finally {
    for (const server of servers) server.close();
    if (daemon) daemon.kill();
    await api('DELETE', `/repos/${me.login}/${name}`).catch((error) => console.error(error.message));
    await api('DELETE', `/user/keys/${registered.id}`).catch((error) => console.error(error.message));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
