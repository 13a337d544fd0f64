#!/usr/bin/env node
/*
 * Fork benchmark against a running Anvil (issue 51, "Performance"): does a fork cost refs or objects?
 *   1. generates a repository with git fast-import, BENCH_COMMITS commits (default 100 000), each writing one file of
 *      BENCH_BLOB_BYTES random bytes (default 11 000: about 1.1 GiB packed, random data does not compress) among
 *      5 000 paths, straight into a new repository of the token's user on disk (BENCH_DATA_DIR, the server's
 *      DATA_DIR): the history is imported into a scratch repository whose pack is hard-linked into the server's
 *      directory, and the last commit is pushed over HTTP, which records the branch, the size and the default
 *      branch as any push does (a push of the whole history would time the tree budget walk, not forking);
 *   2. forks it once (POST /repos/{o}/{r}/forks into a new organisation) and reports the answer's time and what
 *      DATA_DIR grew by (`du --block-size=1 -s`: allocated bytes, hard links counted once);
 *   3. forks it BENCH_FORKS times more (default 99, 100 forks in all), one organisation each, and reports the
 *      median and slowest answer and DATA_DIR's growth over all forks; then repacks every member of the network
 *      as git's automatic gc does (`git repack -a -d -l`, the source too) and measures DATA_DIR again;
 *   4. clones the source and a fork over HTTP (`git clone --mirror`), alternately, BENCH_CLONE_ROUNDS times
 *      (default 2), before the repacks, and reports the median seconds and their ratio;
 *   5. prints one Markdown table.
 *
 *   BENCH_TOKEN=<admin token> BENCH_DATA_DIR=<the server's DATA_DIR> node bench/forks.bench.js
 *
 * Environment: BENCH_URL (default http://127.0.0.1:3000, loopback only), BENCH_TOKEN (write:repository,
 * write:organization), BENCH_DATA_DIR (required), BENCH_COMMITS (at most 200 000), BENCH_BLOB_BYTES (at most
 * 100 000), BENCH_FORKS (at most 500), BENCH_CLONE_ROUNDS (at most 10), BENCH_SEED_REPO=<dir> (a bare repository
 * the history is generated into and kept; a later run reuses it instead of generating it again, and a new source
 * hard-links its pack: no disk), BENCH_SOURCE=owner/name (a source a BENCH_KEEP=1 run left, to measure again; the
 * first fork then finds its pool made). The scratch files live in a temporary directory removed at the end; the
 * repositories and organisations are deleted again unless BENCH_KEEP=1. Exits 1 when a request fails.
 */
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const { randomBytes } = require('node:crypto');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { bounded, baseUrl } = require('./support');

const BASE = baseUrl();
const TOKEN = process.env.BENCH_TOKEN;
const DATA_DIR = process.env.BENCH_DATA_DIR;
const COMMITS = bounded('BENCH_COMMITS', 100_000, 200_000);
const BLOB_BYTES = bounded('BENCH_BLOB_BYTES', 11_000, 100_000);
const FORKS = bounded('BENCH_FORKS', 99, 500);
const CLONE_ROUNDS = bounded('BENCH_CLONE_ROUNDS', 2, 10);
const PATHS = 5_000;
if (!TOKEN || !DATA_DIR) {
  console.error('BENCH_TOKEN and BENCH_DATA_DIR are required');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-forks-bench-'));
const gitEnv = { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };
const MiB = 1024 * 1024;

function run(command, args, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { env: gitEnv, cwd: work, stdio: ['pipe', 'ignore', 'pipe'] });
    const stderr = [];
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} ${args.join(' ')} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`)),
    );
    if (input) input.pipe(child.stdin);
    else child.stdin.end();
  });
}

const git = (dir, ...args) => execFileSync('git', ['--git-dir', dir, ...args], { env: gitEnv, encoding: 'utf8' }).trim();

/** fast-import commands: each commit writes one path (of PATHS) with new random bytes. */
function* history() {
  const when = 1_700_000_000;
  for (let n = 0; n < COMMITS; n++) {
    const file = `d${String(n % 50).padStart(2, '0')}/f${String(n % PATHS).padStart(4, '0')}.bin`;
    const message = `change ${n}`;
    const blob = randomBytes(BLOB_BYTES);
    yield Buffer.concat([
      Buffer.from(
        `commit refs/heads/main\ncommitter Bench <bench@example.com> ${when + n} +0000\ndata ${message.length}\n${message}\nM 100644 inline ${file}\ndata ${blob.length}\n`,
      ),
      blob,
      Buffer.from('\n\n'),
    ]);
  }
}

async function api(method, apiPath, body, expected) {
  const started = process.hrtime.bigint();
  const response = await fetch(`${BASE}/api/v1${apiPath}`, {
    method,
    headers: { Authorization: `token ${TOKEN}`, 'Content-Type': 'application/json' },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await response.text();
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (expected ? response.status !== expected : !response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${text}`);
  return { body: text ? JSON.parse(text) : null, ms };
}

/** Bytes DATA_DIR allocates on disk, hard links counted once. */
function diskBytes() {
  return Number(execFileSync('du', ['--block-size=1', '-s', DATA_DIR], { encoding: 'utf8' }).split('\t')[0]);
}

const repositoryDir = (owner, name) => path.join(DATA_DIR, 'repositories', owner.toLowerCase(), `${name.toLowerCase()}.git`);

/** The median; of an even count, the mean of the middle two. */
const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  if (sorted.length === 0) return NaN;
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

async function prepareSource(me) {
  const name = `forks-bench-${Date.now()}`;
  await api('POST', '/user/repos', { name, private: false });
  const local = process.env.BENCH_SEED_REPO || path.join(work, 'source.git');
  let started = Date.now();
  if (fs.existsSync(path.join(local, 'refs'))) {
    console.error(`reusing the history of ${local}: ${git(local, 'rev-list', '--count', 'main')} commits`);
  } else {
    await run('git', ['init', '--quiet', '--bare', local]);
    await run('git', ['--git-dir', local, 'fast-import', '--quiet'], Readable.from(history()));
    console.error(`generated ${COMMITS} commits in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
  const packBytes = fs
    .readdirSync(path.join(local, 'objects', 'pack'))
    .reduce((sum, file) => sum + fs.statSync(path.join(local, 'objects', 'pack', file)).size, 0);
  console.error(`${(packBytes / MiB).toFixed(0)} MiB packed`);
  // The pack goes into the server's directory (hard-linked: the scratch copy goes at the end), all but the last
  // commit is the branch there, and the push of the last commit over HTTP records it.
  const serverDir = repositoryDir(me.login, name);
  for (const file of fs.readdirSync(path.join(local, 'objects', 'pack'))) {
    const from = path.join(local, 'objects', 'pack', file);
    const to = path.join(serverDir, 'objects', 'pack', file);
    try {
      fs.linkSync(from, to);
    } catch {
      fs.copyFileSync(from, to);
    }
  }
  git(serverDir, 'update-ref', 'refs/heads/main', git(local, 'rev-parse', 'main~1'));
  const remote = new URL(`${BASE}/${me.login}/${name}.git`);
  remote.username = me.login;
  remote.password = TOKEN;
  started = Date.now();
  await run('git', ['--git-dir', local, 'push', '--quiet', remote.toString(), 'main']);
  console.error(`recorded by a push of the last commit in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { owner: me.login, name, packBytes, remote };
}

function existingSource(fullName) {
  const [owner, name] = fullName.split('/');
  const pack = path.join(repositoryDir(owner, name), 'objects', 'pack');
  const packBytes = fs.readdirSync(pack).reduce((sum, file) => sum + fs.statSync(path.join(pack, file)).size, 0);
  return { owner, name, packBytes, kept: true };
}

async function fork(source, org) {
  await api('POST', '/orgs', { username: org, visibility: 'public' }, 201);
  const answer = await api('POST', `/repos/${source.owner}/${source.name}/forks`, { organization: org }, 202);
  return { ms: answer.ms, owner: org, name: answer.body.name };
}

async function timeClone(user, repo) {
  const remote = new URL(`${BASE}/${repo.owner}/${repo.name}.git`);
  remote.username = user;
  remote.password = TOKEN;
  const target = path.join(work, `clone-${Date.now()}`);
  const started = process.hrtime.bigint();
  await run('git', ['clone', '--quiet', '--mirror', remote.toString(), target]);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  const bytes = fs
    .readdirSync(path.join(target, 'objects', 'pack'))
    .reduce((sum, file) => sum + fs.statSync(path.join(target, 'objects', 'pack', file)).size, 0);
  fs.rmSync(target, { recursive: true, force: true });
  return { seconds, bytes };
}

async function main() {
  const me = (await api('GET', '/user')).body;
  const stamp = Date.now().toString(36);
  const forks = [];
  let source = null;
  const lines = [];
  try {
    source = process.env.BENCH_SOURCE ? existingSource(process.env.BENCH_SOURCE) : await prepareSource(me);
    const load = () =>
      os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ');

    const beforeFirst = diskBytes();
    const first = await fork(source, `fb${stamp}o0`);
    forks.push(first);
    const afterFirst = diskBytes();
    console.error(`first fork: ${first.ms.toFixed(0)} ms, DATA_DIR +${((afterFirst - beforeFirst) / 1024).toFixed(0)} KiB (load ${load()})`);

    const times = [first.ms];
    for (let n = 1; n <= FORKS; n++) {
      const made = await fork(source, `fb${stamp}o${n}`);
      forks.push(made);
      times.push(made.ms);
      if (n % 20 === 0) console.error(`${n + 1} forks, last ${made.ms.toFixed(0)} ms (load ${load()})`);
    }
    const afterAll = diskBytes();

    const clones = { source: [], fork: [] };
    for (let round = 0; round < CLONE_ROUNDS; round++) {
      clones.source.push(await timeClone(me.login, source));
      clones.fork.push(await timeClone(me.login, forks[forks.length - 1]));
      console.error(`clone round ${round + 1}: source ${clones.source[round].seconds.toFixed(1)} s, fork ${clones.fork[round].seconds.toFixed(1)} s`);
    }

    const repackStarted = Date.now();
    for (const member of [{ owner: source.owner, name: source.name }, ...forks]) {
      execFileSync('git', ['--git-dir', repositoryDir(member.owner, member.name), 'repack', '-a', '-d', '-l', '-q'], { env: gitEnv });
    }
    const repackSeconds = (Date.now() - repackStarted) / 1000;
    const afterRepack = diskBytes();

    const sourceClone = median(clones.source.map((clone) => clone.seconds));
    const forkClone = median(clones.fork.map((clone) => clone.seconds));
    lines.push(
      `Forks of a ${COMMITS}-commit repository of ${(source.packBytes / MiB).toFixed(0)} MiB packed (fast-import, ${BLOB_BYTES} random bytes per commit)`,
      '',
      '| Measure | Figure | Target |',
      '|---|---|---|',
      `| first fork (makes the pool): answer | ${first.ms.toFixed(0)} ms | < 1 s |`,
      `| first fork: DATA_DIR growth | ${((afterFirst - beforeFirst) / 1024).toFixed(0)} KiB | < 1 MiB |`,
      `| ${forks.length} forks: answer, median / slowest | ${median(times).toFixed(0)} / ${Math.max(...times).toFixed(0)} ms | < 1 s |`,
      `| ${forks.length} forks: DATA_DIR growth in all | ${((afterAll - beforeFirst) / MiB).toFixed(1)} MiB | < 100 MiB |`,
      `| after \`git repack -a -d -l\` of all ${forks.length + 1} members (${repackSeconds.toFixed(0)} s, ${(repackSeconds / (forks.length + 1)).toFixed(1)} s each): growth over the start | ${((afterRepack - beforeFirst) / MiB).toFixed(1)} MiB | < 100 MiB |`,
      `| clone --mirror over HTTP, median of ${CLONE_ROUNDS}: source / fork | ${sourceClone.toFixed(1)} / ${forkClone.toFixed(1)} s (ratio ${(forkClone / sourceClone).toFixed(2)}; per round ${clones.fork.map((clone, n) => (clone.seconds / clones.source[n].seconds).toFixed(2)).join(', ')}) | fork ≤ 1.1× |`,
      `| pack received: source / fork | ${(median(clones.source.map((c) => c.bytes)) / MiB).toFixed(0)} / ${(median(clones.fork.map((c) => c.bytes)) / MiB).toFixed(0)} MiB | |`,
      '',
      `Load average at the end ${load()}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; ${execFileSync('git', ['version'], { encoding: 'utf8' }).trim()}`,
    );
    console.log(lines.join('\n'));
  } finally {
    if (process.env.BENCH_KEEP !== '1') {
      for (const made of forks.reverse()) {
        await api('DELETE', `/repos/${made.owner}/${made.name}`, undefined, 204).catch(() => undefined);
        await api('DELETE', `/orgs/${made.owner}`, undefined, 204).catch(() => undefined);
      }
      if (source && !source.kept) await api('DELETE', `/repos/${source.owner}/${source.name}`, undefined, 204).catch(() => undefined);
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
