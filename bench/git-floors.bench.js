#!/usr/bin/env node
/*
 * Anvil's git transports against their floors, side by side in one run (docs/git-transports.md):
 *   1. a push of one commit, BENCH_ROUNDS times alternated: Anvil over HTTP, `git http-backend` behind a minimal
 *      node:http CGI wrapper, `file://`, and (with BENCH_SSHD) Anvil over SSH against a private OpenSSH sshd whose
 *      only command is `git-shell`;
 *   2. the first push of a BENCH_HISTORY-commit history (default 25 000, made with fast-import): Anvil over HTTP
 *      against `git push` to `file://`;
 *   3. a CI fan-out: BENCH_FANOUT (default 8) concurrent clones by one user with one token, over HTTP against the
 *      http-backend floor, and over SSH against sshd when there is one: how many were served, and clones/s;
 *   4. with BENCH_SERVER_PID (the server's process) and BENCH_SSHD: the server's main thread's CPU time for one big
 *      clone (40 files of 1 MiB of random bytes), over SSH against over HTTP, BENCH_ROUNDS (at least 3) times
 *      alternated.
 * Each figure is the median of its rounds; the ratios are Anvil / floor. The load average is printed with them:
 * figures taken on a loaded machine are not comparable with those of a quiet one.
 *
 *   BENCH_TOKEN=<token> node bench/git-floors.bench.js
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_SSH_PORT     the server's SSH port (default 2222); the SSH host is BENCH_URL's host
 *   BENCH_TOKEN        an access token with write:repository and write:user (creates repositories and a key)
 *   BENCH_SSHD         path of an OpenSSH sshd binary (e.g. /usr/sbin/sshd) for the SSH floor; SSH rows skipped without
 *   BENCH_ROUNDS       rounds of the one-commit push and of the fan-out (default 5, at most 50)
 *   BENCH_HISTORY      commits of the long history (default 25000, at most 100000; 0 skips part 2)
 *   BENCH_FANOUT       concurrent clones of part 3 (default 8, at most 64)
 *   BENCH_SERVER_PID   the server's process id, for part 4 (its main thread's CPU from /proc/<pid>/task/<pid>/schedstat)
 * Everything it creates locally lives in a temporary directory removed at the end; the repositories and the key it
 * created on the server are deleted again. Exits 1 when a push or clone failed.
 */
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const http = require('node:http');
const net = require('node:net');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { bounded, baseUrl } = require('./support');

const BASE = baseUrl();
const HOST = new URL(BASE).hostname.replace(/^\[|\]$/g, '');
const SSH_PORT = bounded('BENCH_SSH_PORT', 2222, 65535);
const TOKEN = process.env.BENCH_TOKEN;
const SSHD = process.env.BENCH_SSHD || null;
const ROUNDS = bounded('BENCH_ROUNDS', 5, 50);
const HISTORY = bounded('BENCH_HISTORY', 25_000, 100_000, 0);
const FANOUT = bounded('BENCH_FANOUT', 8, 64);
const SERVER_PID = process.env.BENCH_SERVER_PID ? bounded('BENCH_SERVER_PID', 0, 4_194_304) : null;
if (!TOKEN) {
  console.error('BENCH_TOKEN is required');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-git-floors-'));
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
    const child = spawn(command, args, { env: { ...gitEnv, ...options.env }, cwd: options.cwd ?? work, stdio: ['pipe', 'pipe', 'pipe'] });
    const stdout = [];
    const stderr = [];
    child.stdout.on('data', (chunk) => stdout.push(chunk));
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolve(Buffer.concat(stdout).toString())
        : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`)),
    );
    if (options.input) Readable.from([options.input]).pipe(child.stdin);
    else child.stdin.end();
  });
}

async function timed(work) {
  const started = process.hrtime.bigint();
  await work();
  return Number(process.hrtime.bigint() - started) / 1e6;
}

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)];
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

/** fast-import input for `count` commits on main, each changing one of 100 small files in 10 directories. */
function history(count, startAt = 1) {
  const lines = [];
  for (let i = startAt; i < startAt + count; i++) {
    const content = `line ${i} of a generated history\n`.repeat(4);
    lines.push('commit refs/heads/main', `mark :${i}`, `committer Bench <bench@example.com> ${1_700_000_000 + i} +0000`);
    const message = `commit ${i}`;
    lines.push(`data ${Buffer.byteLength(message)}`, message);
    if (i > startAt) lines.push(`from :${i - 1}`);
    lines.push(`M 100644 inline dir-${i % 10}/file-${i % 100}.txt`, `data ${Buffer.byteLength(content)}`, content);
  }
  return `${lines.join('\n')}\n`;
}

/** The floor over HTTP: `git http-backend` behind a minimal node:http CGI wrapper, one process per request. */
function cgiServer(projectRoot) {
  const server = http.createServer((request, response) => {
    const url = new URL(request.url, 'http://localhost');
    const child = spawn('git', ['http-backend'], {
      env: {
        ...gitEnv,
        GIT_PROJECT_ROOT: projectRoot,
        GIT_HTTP_EXPORT_ALL: '1',
        // Pushes are anonymous here: the floor has no authentication to pay for.
        REMOTE_USER: 'bench',
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

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForPort(port) {
  for (let attempt = 0; attempt < 200; attempt++) {
    const ready = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => (socket.destroy(), resolve(true)));
      socket.on('error', () => resolve(false));
    });
    if (ready) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`nothing listens on port ${port}`);
}

/** A private sshd as the current user: one key, and git-shell as the only command. */
async function sshFloor(key) {
  const dir = path.join(work, 'sshd');
  fs.mkdirSync(dir, { mode: 0o700 });
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', path.join(dir, 'host-key')]);
  fs.copyFileSync(`${key}.pub`, path.join(dir, 'authorized_keys'));
  const port = await freePort();
  fs.writeFileSync(
    path.join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${path.join(dir, 'host-key')}`,
      `AuthorizedKeysFile ${path.join(dir, 'authorized_keys')}`,
      `PidFile ${path.join(dir, 'sshd.pid')}`,
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      'UsePAM no',
      'StrictModes no',
      'ForceCommand git-shell -c "$SSH_ORIGINAL_COMMAND"',
      '',
    ].join('\n'),
  );
  const child = spawn(SSHD, ['-D', '-e', '-f', path.join(dir, 'sshd_config')], { stdio: 'ignore' });
  await waitForPort(port);
  return { port, child };
}

async function main() {
  const load = () =>
    os
      .loadavg()
      .map((value) => value.toFixed(2))
      .join(' ');
  console.log(`load average at start: ${load()} (${os.availableParallelism()} cores)`);
  const me = await api('GET', '/user');
  const stamp = Date.now();
  const created = [];
  const key = path.join(work, 'bench-key');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', key]);
  const registered = await api('POST', '/user/keys', { title: `git-floors-${stamp}`, key: fs.readFileSync(`${key}.pub`, 'utf8') });
  const sshEnv = {
    GIT_SSH_COMMAND: `ssh -i ${key} -o IdentitiesOnly=yes -o IdentityAgent=none -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o BatchMode=yes -o LogLevel=ERROR`,
  };
  const sshHost = HOST.includes(':') ? `[${HOST}]` : HOST;
  const anvilHttp = (name) => {
    const url = new URL(`${me.login}/${name}.git`, `${BASE}/`);
    url.username = 'bench';
    url.password = TOKEN;
    return url.toString();
  };
  const anvilSsh = (name) => `ssh://git@${sshHost}:${SSH_PORT}/${me.login}/${name}.git`;
  const floorRoot = path.join(work, 'floor');
  fs.mkdirSync(floorRoot);
  const servers = [];
  let sshd = null;
  const rows = [];
  let failed = false;
  try {
    const cgi = await cgiServer(floorRoot);
    servers.push(cgi);
    const cgiUrl = (name) => `http://127.0.0.1:${cgi.address().port}/${name}.git`;
    if (SSHD) sshd = await sshFloor(key);
    else console.log('SSH floor skipped: set BENCH_SSHD to an OpenSSH sshd binary');
    const sshdUrl = (dir) => `ssh://${os.userInfo().username}@127.0.0.1:${sshd.port}${dir}`;

    // 1. One commit pushed onto a small repository, alternating the servers each round.
    const seed = path.join(work, 'seed');
    await run('git', ['init', '--quiet', '--initial-branch=main', seed]);
    await run('git', ['fast-import', '--quiet'], { cwd: seed, input: history(20) });
    await run('git', ['reset', '--quiet', '--hard', 'main'], { cwd: seed });
    const targets = [];
    const oneName = `floors-one-${stamp}`;
    await api('POST', '/user/repos', { name: oneName, private: false });
    created.push(oneName);
    await run('git', ['push', '--quiet', anvilHttp(oneName), 'main'], { cwd: seed });
    targets.push({ label: 'anvil http', url: anvilHttp(oneName) });
    if (sshd) targets.push({ label: 'anvil ssh', url: anvilSsh(oneName), env: sshEnv });
    for (const floor of ['cgi', 'file', ...(sshd ? ['sshd'] : [])]) {
      const bare = path.join(floorRoot, `one-${floor}.git`);
      await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', bare]);
      await run('git', ['--git-dir', bare, 'config', 'http.receivepack', 'true']);
      await run('git', ['push', '--quiet', bare, 'main'], { cwd: seed });
      if (floor === 'cgi') targets.push({ label: 'floor http-backend', url: cgiUrl(`one-${floor}`) });
      if (floor === 'file') targets.push({ label: 'floor file://', url: `file://${bare}` });
      if (floor === 'sshd') targets.push({ label: 'floor sshd git-shell', url: sshdUrl(bare), env: sshEnv });
    }
    const times = new Map(targets.map((target) => [target.label, []]));
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? targets : [...targets].reverse();
      for (const target of order) {
        const clone = path.join(work, `push-${round}-${target.label.replace(/\W+/g, '-')}`);
        await run('git', ['clone', '--quiet', target.url, clone], { env: target.env });
        fs.writeFileSync(path.join(clone, `round-${round}.txt`), `round ${round} ${target.label}\n`);
        await run('git', ['add', '.'], { cwd: clone });
        await run('git', ['commit', '--quiet', '-m', `round ${round}`], { cwd: clone });
        times.get(target.label).push(await timed(() => run('git', ['push', '--quiet', 'origin', 'main'], { cwd: clone, env: target.env })));
        fs.rmSync(clone, { recursive: true, force: true });
      }
    }
    const medianOf = (label) => median(times.get(label));
    const pushRow = (label, floor) => ({
      measure: `push 1 commit: ${label}`,
      'median ms': medianOf(label).toFixed(0),
      floor,
      ratio: (medianOf(label) / medianOf(floor)).toFixed(2),
    });
    rows.push(pushRow('anvil http', 'floor http-backend'));
    if (sshd) rows.push(pushRow('anvil ssh', 'floor sshd git-shell'));
    rows.push(pushRow('floor http-backend', 'floor file://'));

    // 2. The first push of a long history.
    if (HISTORY > 0) {
      const long = path.join(work, 'long');
      await run('git', ['init', '--quiet', '--initial-branch=main', long]);
      await run('git', ['fast-import', '--quiet'], { cwd: long, input: history(HISTORY) });
      const longName = `floors-history-${stamp}`;
      await api('POST', '/user/repos', { name: longName, private: false });
      created.push(longName);
      const fileTarget = path.join(floorRoot, 'long-file.git');
      await run('git', ['init', '--quiet', '--bare', '--initial-branch=main', fileTarget]);
      const fileMs = await timed(() => run('git', ['push', '--quiet', `file://${fileTarget}`, 'main'], { cwd: long }));
      const anvilMs = await timed(() => run('git', ['push', '--quiet', anvilHttp(longName), 'main'], { cwd: long }));
      rows.push({
        measure: `first push of ${HISTORY} commits: anvil http`,
        'median ms': anvilMs.toFixed(0),
        floor: `file:// ${fileMs.toFixed(0)} ms`,
        ratio: (anvilMs / fileMs).toFixed(2),
      });
    }

    // 3. A CI fan-out: concurrent clones by one user, all started at once.
    const fanOut = async (label, url, env) => {
      let served = 0;
      const durations = [];
      for (let round = 0; round < ROUNDS; round++) {
        const ms = await timed(() =>
          Promise.all(
            Array.from({ length: FANOUT }, async (_, index) => {
              const target = path.join(work, `fan-${label.replace(/\W+/g, '-')}-${round}-${index}`);
              try {
                await run('git', ['clone', '--quiet', '--bare', url, target], { env });
                served += 1;
              } catch (error) {
                failed = true;
                if (round === 0) console.error(`${label}: ${error.message.split('\n')[0]}`);
              }
              fs.rmSync(target, { recursive: true, force: true });
            }),
          ),
        );
        durations.push(ms);
      }
      return { served: `${served}/${FANOUT * ROUNDS}`, clonesPerSecond: (FANOUT * 1000) / median(durations) };
    };
    const fanName = `floors-history-${stamp}`;
    const fanAvailable = HISTORY > 0;
    const anvilFan = fanAvailable ? anvilHttp(fanName) : anvilHttp(oneName);
    const cgiFan = fanAvailable ? cgiUrl('long-file') : cgiUrl('one-cgi');
    const httpAnvil = await fanOut('anvil http', anvilFan);
    const httpFloor = await fanOut('floor http-backend', cgiFan);
    rows.push({
      measure: `${FANOUT} clones at once, one user: anvil http`,
      'median ms': `${httpAnvil.clonesPerSecond.toFixed(2)} clones/s, served ${httpAnvil.served}`,
      floor: `http-backend ${httpFloor.clonesPerSecond.toFixed(2)} clones/s, served ${httpFloor.served}`,
      ratio: (httpAnvil.clonesPerSecond / httpFloor.clonesPerSecond).toFixed(2),
    });
    if (sshd) {
      const floorDir = fanAvailable ? path.join(floorRoot, 'long-file.git') : path.join(floorRoot, 'one-sshd.git');
      const sshAnvil = await fanOut('anvil ssh', fanAvailable ? anvilSsh(fanName) : anvilSsh(oneName), sshEnv);
      const sshFloorRun = await fanOut('floor sshd', sshdUrl(floorDir), sshEnv);
      rows.push({
        measure: `${FANOUT} clones at once, one user: anvil ssh`,
        'median ms': `${sshAnvil.clonesPerSecond.toFixed(2)} clones/s, served ${sshAnvil.served}`,
        floor: `sshd ${sshFloorRun.clonesPerSecond.toFixed(2)} clones/s, served ${sshFloorRun.served}`,
        ratio: (sshAnvil.clonesPerSecond / sshFloorRun.clonesPerSecond).toFixed(2),
      });
    }
    // 4. One big clone's cost to the server's main thread, SSH against HTTP.
    if (SERVER_PID && sshd) {
      const bigName = `floors-big-${stamp}`;
      const big = path.join(work, 'big');
      await run('git', ['init', '--quiet', '--initial-branch=main', big]);
      for (let index = 0; index < 40; index++) fs.writeFileSync(path.join(big, `blob-${index}.bin`), randomBytes(1024 * 1024));
      await run('git', ['add', '.'], { cwd: big });
      await run('git', ['commit', '--quiet', '-m', 'big'], { cwd: big });
      await api('POST', '/user/repos', { name: bigName, private: false });
      created.push(bigName);
      await run('git', ['push', '--quiet', anvilHttp(bigName), 'main'], { cwd: big });
      const mainThreadNs = () => Number(fs.readFileSync(`/proc/${SERVER_PID}/task/${SERVER_PID}/schedstat`, 'utf8').split(' ')[0]);
      const cpu = { http: [], ssh: [] };
      const bigTargets = [
        { label: 'http', url: anvilHttp(bigName) },
        { label: 'ssh', url: anvilSsh(bigName), env: sshEnv },
      ];
      for (let round = 0; round < Math.max(ROUNDS, 3); round++) {
        for (const target of round % 2 === 0 ? bigTargets : [...bigTargets].reverse()) {
          const clone = path.join(work, `big-${target.label}-${round}`);
          const before = mainThreadNs();
          await run('git', ['clone', '--quiet', '--bare', target.url, clone], { env: target.env });
          cpu[target.label].push((mainThreadNs() - before) / 1e6);
          fs.rmSync(clone, { recursive: true, force: true });
        }
      }
      rows.push({
        measure: 'big clone (41 MiB pack), server main-thread CPU: ssh',
        'median ms': median(cpu.ssh).toFixed(1),
        floor: `http ${median(cpu.http).toFixed(1)} ms`,
        ratio: (median(cpu.ssh) / median(cpu.http)).toFixed(2),
      });
    } else console.log('big clone skipped: set BENCH_SERVER_PID to the server process id (and BENCH_SSHD)');
    console.table(rows);
    console.log(`load average at end: ${load()}; rounds ${ROUNDS}`);
  } catch (error) {
    failed = true;
    console.error(error);
  } finally {
    for (const server of servers) server.close();
    if (sshd) sshd.child.kill();
    for (const name of created) await api('DELETE', `/repos/${me.login}/${name}`).catch((error) => console.error(error.message));
    await api('DELETE', `/user/keys/${registered.id}`).catch((error) => console.error(error.message));
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (failed) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
