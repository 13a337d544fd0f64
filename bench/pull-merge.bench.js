#!/usr/bin/env node
/*
 * Pull request benchmark against a running Anvil: does a merge cost the change or the repository?
 *   1. generates two repositories with git fast-import and pushes each over smart HTTP into a new repository of the
 *      token's user: a large one (BENCH_COMMITS commits, default 100 000, over BENCH_FILES files, default 50 000, in
 *      50 directories of 10 subdirectories: the first commit adds every file, each further one changes one file)
 *      and a small one (100 commits over 100 files);
 *   2. in each, for every merge style, BENCH_ROUNDS times (default 3): a branch with one changed file (through the
 *      contents API), then times, one request at a time: creating the pull request (POST /pulls, which tests it before answering),
 *      its mergeability after the base moved on by one other file (from the answer of that contents API write
 *      until GET /pulls/{n} shows it mergeable again, polled every 5 ms; fast-forward-only keeps the base where
 *      it is) and the merge (POST /pulls/{n}/merge);
 *   3. with BENCH_SERVER_PID, the CPU time of the git processes the server ran during each merge (children of the
 *      server and of its git launcher, from /proc), as a share of the merge's time; with BENCH_DATA_DIR (the
 *      server's DATA_DIR), the git commands a merge runs, timed one by one on the large repository itself;
 *   4. prints one Markdown table: median milliseconds per operation, large against small, and their ratio.
 *
 *   BENCH_TOKEN=<token> BENCH_SERVER_PID=<pid> BENCH_DATA_DIR=<dir> node bench/pull-merge.bench.js
 *
 * Environment: BENCH_URL (default http://127.0.0.1:3000, loopback only), BENCH_TOKEN (write:repository, and the
 * user's own repositories), BENCH_COMMITS (at most 200 000), BENCH_FILES (at most 100 000), BENCH_ROUNDS (at most
 * 20), BENCH_SERVER_PID, BENCH_DATA_DIR (both optional), BENCH_SEED_DIRECT=1 (with BENCH_DATA_DIR: the history is
 * fetched straight into the repository directory and only its last commit pushed over HTTP, which records it: a
 * push of the whole history spends its time in pre-receive's tree budget walk, not in what is measured). The local files live in a temporary directory removed at
 * the end; the repositories are deleted again unless BENCH_KEEP=1. Exits 1 when a request fails.
 */
'use strict';

const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Readable } = require('node:stream');
const { bounded, baseUrl } = require('./support');

const BASE = baseUrl();
const TOKEN = process.env.BENCH_TOKEN;
const COMMITS = bounded('BENCH_COMMITS', 100_000, 200_000);
const FILES = bounded('BENCH_FILES', 50_000, 100_000);
const ROUNDS = bounded('BENCH_ROUNDS', 3, 20);
const SERVER_PID = process.env.BENCH_SERVER_PID ? bounded('BENCH_SERVER_PID', 1, 2 ** 22) : null;
const DATA_DIR = process.env.BENCH_DATA_DIR || null;
/** With BENCH_DATA_DIR: put the history into the repository directory directly instead of a push of all of it. */
const SEED_DIRECT = process.env.BENCH_SEED_DIRECT === '1';
const STYLES = ['merge', 'rebase', 'rebase-merge', 'squash', 'fast-forward-only'];
if (!TOKEN) {
  console.error('BENCH_TOKEN is required');
  process.exit(2);
}

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-pull-merge-bench-'));
const gitEnv = { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_TERMINAL_PROMPT: '0' };

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

const fileName = (index) =>
  `d${String(Math.floor(index / 1000) % 50).padStart(2, '0')}/s${Math.floor(index / 100) % 10}/f${String(index).padStart(6, '0')}.txt`;

/** fast-import commands: one commit adding every file, then one commit per change of one file. */
function* history(commits, files) {
  const when = 1_700_000_000;
  yield `commit refs/heads/main\ncommitter Bench <bench@example.com> ${when} +0000\ndata 9\nadd files\n`;
  let body = '';
  for (let index = 0; index < files; index++) {
    const content = `file ${index}\n${'x'.repeat(100)}\n`;
    body += `M 100644 inline ${fileName(index)}\ndata ${Buffer.byteLength(content)}\n${content}\n`;
    if (body.length > 1 << 20) {
      yield body;
      body = '';
    }
  }
  yield `${body}\n`;
  for (let n = 1; n < commits; n++) {
    const index = (n * 7919) % files;
    const content = `file ${index}\nchange ${n}\n`;
    const message = `change ${n}`;
    yield `commit refs/heads/main\ncommitter Bench <bench@example.com> ${when + n} +0000\ndata ${message.length}\n${message}\nM 100644 inline ${fileName(index)}\ndata ${Buffer.byteLength(content)}\n${content}\n\n`;
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

/** The children of `pid` (Linux /proc, summed over its threads). */
function childrenOf(pid) {
  const children = [];
  let threads = [];
  try {
    threads = fs.readdirSync(`/proc/${pid}/task`);
  } catch {
    return children;
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

/** CPU seconds of the waited-for children of `pid` (cutime + cstime): git processes once they exited. */
function childrenCpu(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return 0;
  }
}

/** git CPU seconds so far: the server's own children and those of its git launcher (a node child of it). */
function gitCpu() {
  if (!SERVER_PID) return 0;
  let total = childrenCpu(SERVER_PID);
  for (const child of childrenOf(SERVER_PID)) {
    try {
      if (fs.readFileSync(`/proc/${child}/comm`, 'utf8').startsWith('node')) total += childrenCpu(child);
    } catch {
      // Gone meanwhile.
    }
  }
  return total;
}

const median = (list) => {
  const sorted = [...list].sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor((sorted.length - 1) / 2)];
};

async function prepareRepository(me, label, commits, files) {
  const name = `pull-merge-bench-${label}-${Date.now()}`;
  await api('POST', '/user/repos', { name, private: false });
  const local = path.join(work, `${label}.git`);
  await run('git', ['init', '--quiet', '--bare', local]);
  let started = Date.now();
  await run('git', ['--git-dir', local, 'fast-import', '--quiet'], Readable.from(history(commits, files)));
  console.error(`${label}: generated ${commits} commits over ${files} files in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const remote = new URL(`${BASE}/${me.login}/${name}.git`);
  remote.username = me.login;
  remote.password = TOKEN;
  started = Date.now();
  const serverDir = DATA_DIR && SEED_DIRECT ? path.join(DATA_DIR, 'repositories', me.login.toLowerCase(), `${name.toLowerCase()}.git`) : null;
  if (serverDir && fs.existsSync(serverDir)) {
    // Seeded straight into the repository directory (as the row seeders write rows): all but the last commit,
    // whose push over HTTP then records the branch, the size and the default branch as any push does.
    await run('git', ['--git-dir', local, 'update-ref', 'refs/heads/seed', 'main~1']);
    await run('git', ['--git-dir', serverDir, 'fetch', '--quiet', local, 'refs/heads/seed:refs/heads/main']);
    await run('git', ['--git-dir', local, 'push', '--quiet', remote.toString(), 'main']);
  } else {
    await run('git', ['--git-dir', local, 'push', '--quiet', remote.toString(), 'main']);
  }
  console.error(`${label}: pushed in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { owner: me.login, name, files, local };
}

/** One pull request of one changed file, per style and round; returns the three timings and git's CPU share. */
async function measure(repo, style, round) {
  const base = `/repos/${repo.owner}/${repo.name}`;
  const branch = `bench-${style}-${round}`;
  const changed = fileName((round * 31 + STYLES.indexOf(style) * 7) % repo.files);
  const current = await api('GET', `${base}/contents/${changed}?ref=main`);
  await api('PUT', `${base}/contents/${changed}`, {
    content: Buffer.from(`changed by ${branch}\n`).toString('base64'),
    sha: current.body.sha,
    branch: 'main',
    new_branch: branch,
    message: `change for ${branch}`,
  });
  const created = await api('POST', `${base}/pulls`, { base: 'main', head: branch, title: `Bench ${branch}` }, 201);
  const index = created.body.number;
  // The base moves on by one other file (fast-forward-only keeps it): the pull request is tested again in the
  // background, and its mergeability is timed from that push's answer until GET /pulls/{n} shows it decided.
  if (style !== 'fast-forward-only') {
    const other = fileName((round * 31 + STYLES.indexOf(style) * 7 + repo.files / 2) % repo.files);
    const otherNow = await api('GET', `${base}/contents/${other}?ref=main`);
    await api('PUT', `${base}/contents/${other}`, {
      content: Buffer.from(`base moved for ${branch}\n`).toString('base64'),
      sha: otherNow.body.sha,
      branch: 'main',
      message: `base moves for ${branch}`,
    });
  }
  const decidedFrom = process.hrtime.bigint();
  let mergeableMs = 0;
  for (;;) {
    const pull = await api('GET', `${base}/pulls/${index}`);
    if (pull.body.mergeable === true) {
      mergeableMs = Number(process.hrtime.bigint() - decidedFrom) / 1e6;
      break;
    }
    if (Number(process.hrtime.bigint() - decidedFrom) > 60e9) throw new Error(`pull ${index} not mergeable after 60 s`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const cpuBefore = gitCpu();
  const merged = await api('POST', `${base}/pulls/${index}/merge`, { Do: style });
  const gitSeconds = gitCpu() - cpuBefore;
  return { create: created.ms, mergeable: mergeableMs, merge: merged.ms, gitShare: SERVER_PID ? (1000 * gitSeconds) / merged.ms : NaN };
}

/** The git commands of a merge, timed one by one on the repository directory the server keeps. */
function timeCommands(repo) {
  if (!DATA_DIR) return [];
  const dir = path.join(DATA_DIR, 'repositories', repo.owner.toLowerCase(), `${repo.name.toLowerCase()}.git`);
  if (!fs.existsSync(dir)) return [];
  const env = { ...gitEnv, GIT_AUTHOR_NAME: 'B', GIT_AUTHOR_EMAIL: 'b@example.com', GIT_COMMITTER_NAME: 'B', GIT_COMMITTER_EMAIL: 'b@example.com' };
  const git = (args, input) => {
    const started = process.hrtime.bigint();
    const out = execFileSync('git', ['--git-dir', dir, ...args], { env, input, encoding: 'utf8', stdio: ['pipe', 'pipe', 'ignore'] }).trim();
    return { out, ms: Number(process.hrtime.bigint() - started) / 1e6 };
  };
  const main = git(['rev-parse', 'refs/heads/main']).out;
  const parent = git(['rev-parse', 'refs/heads/main~1']).out;
  const rows = [];
  const time = (label, args, input) => {
    const result = git(args, input);
    rows.push([label, result.ms]);
    return result.out;
  };
  time('merge-base --is-ancestor', ['merge-base', '--is-ancestor', parent, main]);
  const tree = time('merge-tree --write-tree', ['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', main, parent]).split('\0')[0];
  const commit = time('commit-tree', ['commit-tree', tree, '-p', main, '-p', parent], 'bench\n');
  time('rev-list (commits to replay)', ['rev-list', '--reverse', '--topo-order', '--right-only', '--cherry-pick', '--no-merges', `${parent}...${main}`]);
  time('update-ref (compare-and-swap)', ['update-ref', 'refs/bench/scratch', commit, '']);
  time('commit-graph write --split (after every ref change)', ['commit-graph', 'write', '--reachable', '--changed-paths', '--split']);
  git(['update-ref', '-d', 'refs/bench/scratch']);
  return rows;
}

async function main() {
  const me = (await api('GET', '/user')).body;
  const repos = [];
  try {
    repos.push(await prepareRepository(me, 'small', 100, 100));
    repos.push(await prepareRepository(me, 'large', COMMITS, FILES));
    const results = {};
    for (const repo of repos) {
      for (const style of STYLES) {
        const rounds = [];
        for (let round = 0; round < ROUNDS; round++) rounds.push(await measure(repo, style, round));
        results[`${repo === repos[0] ? 'small' : 'large'} ${style}`] = rounds;
        console.error(`${repo.name} ${style}: ${rounds.map((r) => `${r.create.toFixed(0)}/${r.mergeable}/${r.merge.toFixed(0)} ms`).join(', ')}`);
      }
    }
    const lines = [
      `Pull requests on a ${COMMITS}-commit, ${FILES}-file repository against a 100-commit, 100-file one: median of ${ROUNDS}, one request at a time (ms)`,
      '',
      '| Operation | Style | 100 commits | large | ratio | git CPU share of the merge (large) |',
      '|---|---|---|---|---|---|',
    ];
    for (const style of STYLES) {
      const small = results[`small ${style}`];
      const large = results[`large ${style}`];
      for (const [operation, key] of [
        ['create', 'create'],
        ['mergeability', 'mergeable'],
        ['merge', 'merge'],
      ]) {
        const a = median(small.map((r) => r[key]));
        const b = median(large.map((r) => r[key]));
        const share = key === 'merge' && SERVER_PID ? `${(100 * median(large.map((r) => r.gitShare))).toFixed(0)}%` : '';
        lines.push(`| ${operation} | ${style} | ${a.toFixed(0)} | ${b.toFixed(0)} | ${(b / Math.max(a, 1)).toFixed(2)} | ${share} |`);
      }
    }
    const commands = timeCommands(repos[1]);
    if (commands.length > 0) {
      lines.push('', 'git commands of a merge on the large repository, run one by one (ms):', '', '| Command | ms |', '|---|---|');
      for (const [label, ms] of commands) lines.push(`| ${label} | ${ms.toFixed(1)} |`);
    }
    lines.push(
      '',
      `Load average ${os
        .loadavg()
        .map((n) => n.toFixed(2))
        .join(' ')}; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'cpu'}; git ${execFileSync('git', ['version'], { encoding: 'utf8' }).trim()}`,
    );
    console.log(lines.join('\n'));
  } finally {
    if (process.env.BENCH_KEEP !== '1') {
      for (const repo of repos) await api('DELETE', `/repos/${repo.owner}/${repo.name}`, undefined, 204).catch(() => undefined);
    }
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
