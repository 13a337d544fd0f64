#!/usr/bin/env node
/*
 * Branch protection benchmark (docs/branch-protection.md), against a running Anvil:
 *   1. pushes: two repositories of the token's user, one under a rule for `main` with file patterns and a push
 *      whitelist (the token's user on it), one without any rule; BENCH_PUSHES rounds, each one commit touching
 *      BENCH_FILES files pushed over smart HTTP to each repository in turn (alternating which goes first), and
 *      prints the median and p90 push time of each and their ratio;
 *   2. the decision alone, in this process from dist/: BENCH_RULES rules (plain names and globs) ordered and
 *      matched, and a push judged by the governing rule with git's answers given, BENCH_ITERATIONS times; prints
 *      the time per evaluation. Needs `npm run build`.
 *
 *   BENCH_TOKEN=<token> BENCH_USER=<its user name> BENCH_PASSWORD=<password> node bench/branch-protection.bench.js
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_TOKEN        an access token with write:repository (creates and deletes two repositories)
 *   BENCH_USER         the token's user name (git over HTTP signs in with it and the token)
 *   BENCH_PUSHES       pushes per repository (default 40, at most 1000)
 *   BENCH_FILES        files changed by each pushed commit (default 20, at most 10000)
 *   BENCH_RULES        rules of the in-process evaluation (default 200, at most 10000)
 *   BENCH_ITERATIONS   evaluations (default 20000, at most 1000000)
 * Part 2 alone runs without a server when BENCH_TOKEN is not set. The repositories it creates are deleted at the
 * end; its working copies live in a temporary directory removed at the end. Exits 1 on a failed push.
 */
'use strict';

const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { bounded, baseUrl, percentile, loadDist } = require('./support');

const PUSHES = bounded('BENCH_PUSHES', 40, 1000);
const FILES = bounded('BENCH_FILES', 20, 10_000);
const RULES = bounded('BENCH_RULES', 200, 10_000);
const ITERATIONS = bounded('BENCH_ITERATIONS', 20_000, 1_000_000);
const TOKEN = process.env.BENCH_TOKEN;
const USER = process.env.BENCH_USER;

async function evaluation() {
  const { orderRules, governingRule, judgeBranchChange } = loadDist('access/branch-protection');
  const base = {
    repoId: 1,
    canPush: true,
    enableWhitelist: true,
    whitelistUserIds: [1, 2, 3],
    whitelistTeamIds: [],
    whitelistDeployKeys: false,
    enableMergeWhitelist: false,
    mergeWhitelistUserIds: [],
    mergeWhitelistTeamIds: [],
    enableStatusCheck: false,
    statusCheckContexts: [],
    enableApprovalsWhitelist: false,
    approvalsWhitelistUserIds: [],
    approvalsWhitelistTeamIds: [],
    requiredApprovals: 0,
    blockOnRejectedReviews: false,
    blockOnOfficialReviewRequests: false,
    blockOnOutdatedBranch: false,
    dismissStaleApprovals: false,
    ignoreStaleApprovals: false,
    requireSignedCommits: false,
    protectedFilePatterns: 'secret/**;*.key;.forgejo/workflows/**',
    unprotectedFilePatterns: 'docs/**',
    applyToAdmins: false,
    updatedUnix: 0,
  };
  // Half plain names, half globs; the branch pushed matches only the last glob, so every rule is tried.
  const rules = Array.from({ length: RULES }, (_, i) => ({ ...base, id: i + 1, createdUnix: i, ruleName: i % 2 === 0 ? `feature-${i}` : `team-${i}/{a,b}/*` }));
  rules[rules.length - 1].ruleName = 'release/**';
  const paths = Array.from({ length: FILES }, (_, i) => `src/module-${i}/file-${i}.ts`);
  const facts = { deletion: false, isForcePush: async () => false, firstChangedPath: async (test) => paths.find(test) ?? null };
  const pusher = { kind: 'user', userId: 2, lowerName: 'bench', canWriteCode: async () => true, memberOf: async () => false };
  const once = async () => {
    const rule = governingRule(orderRules(rules), 'release/2026/rc1');
    return judgeBranchChange(rule, { door: 'git', branch: 'release/2026/rc1', pusher, facts });
  };
  if ((await once()) !== null) throw new Error('the benchmark push should be allowed');
  for (let i = 0; i < 1000; i++) await once();
  const started = process.hrtime.bigint();
  for (let i = 0; i < ITERATIONS; i++) await once();
  const micros = Number(process.hrtime.bigint() - started) / 1000 / ITERATIONS;
  console.log(
    `evaluation of ${RULES} rules (order, match, judge a push of ${FILES} paths): ${micros.toFixed(1)} µs each over ${ITERATIONS} runs (target < 1000 µs)`,
  );
}

function git(args, cwd, env) {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env, stdio: ['ignore', 'ignore', 'pipe'] });
    const stderr = [];
    child.stderr.on('data', (chunk) => stderr.push(chunk));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve() : reject(new Error(`git ${args.join(' ')} exited ${code}: ${Buffer.concat(stderr).toString().trim()}`)),
    );
  });
}

async function pushes() {
  const BASE = baseUrl();
  const api = async (method, apiPath, body) => {
    const response = await fetch(`${BASE}/api/v1${apiPath}`, {
      method,
      headers: { Authorization: `token ${TOKEN}`, 'Content-Type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`${method} ${apiPath}: ${response.status} ${await response.text()}`);
    return response.status === 204 ? null : response.json();
  };
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-protection-bench-'));
  const env = {
    PATH: process.env.PATH,
    HOME: work,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_AUTHOR_NAME: 'Bench',
    GIT_AUTHOR_EMAIL: 'bench@example.com',
    GIT_COMMITTER_NAME: 'Bench',
    GIT_COMMITTER_EMAIL: 'bench@example.com',
  };
  const names = { protected: `bench-protected-${process.pid}`, open: `bench-open-${process.pid}` };
  const created = [];
  try {
    for (const name of Object.values(names)) {
      await api('POST', '/user/repos', { name, auto_init: true, default_branch: 'main' });
      created.push(name);
    }
    await api('POST', `/repos/${USER}/${names.protected}/branch_protections`, {
      rule_name: 'main',
      enable_push: true,
      enable_push_whitelist: true,
      push_whitelist_usernames: [USER],
      protected_file_patterns: 'secret/**;*.key;.forgejo/workflows/**',
      unprotected_file_patterns: 'docs/**',
    });
    const url = (name) => {
      const u = new URL(`${BASE}/${USER}/${name}.git`);
      u.username = encodeURIComponent(USER);
      u.password = encodeURIComponent(TOKEN);
      return u.toString();
    };
    const clones = {};
    for (const [key, name] of Object.entries(names)) {
      clones[key] = path.join(work, key);
      await git(['clone', '--quiet', url(name), clones[key]], work, env);
    }
    const times = { protected: [], open: [] };
    for (let round = 0; round < PUSHES; round++) {
      const order = round % 2 === 0 ? ['protected', 'open'] : ['open', 'protected'];
      for (const key of order) {
        const dir = clones[key];
        for (let i = 0; i < FILES; i++) {
          fs.mkdirSync(path.join(dir, `src/module-${i}`), { recursive: true });
          fs.writeFileSync(path.join(dir, `src/module-${i}/file-${i}.ts`), `export const round = ${round};\n`);
        }
        await git(['add', '-A'], dir, env);
        await git(['commit', '--quiet', '-m', `round ${round}`], dir, env);
        const started = process.hrtime.bigint();
        await git(['push', '--quiet', 'origin', 'HEAD:main'], dir, env);
        times[key].push(Number(process.hrtime.bigint() - started) / 1e6);
      }
    }
    const summary = {};
    for (const key of ['protected', 'open']) {
      const sorted = [...times[key]].sort((a, b) => a - b);
      summary[key] = { p50: percentile(sorted, 50), p90: percentile(sorted, 90) };
      console.log(
        `push to main, ${key === 'protected' ? 'under a rule' : 'no rule    '}: p50 ${summary[key].p50.toFixed(1)} ms, p90 ${summary[key].p90.toFixed(1)} ms over ${PUSHES} pushes of ${FILES} files`,
      );
    }
    console.log(`ratio (p50 with rule / without): ${(summary.protected.p50 / summary.open.p50).toFixed(3)} (target ≤ 1.1)`);
  } finally {
    for (const name of created) await api('DELETE', `/repos/${USER}/${name}`).catch((error) => console.error(`cleanup: ${error.message}`));
    fs.rmSync(work, { recursive: true, force: true });
  }
}

(async () => {
  await evaluation();
  if (!TOKEN) {
    console.log('BENCH_TOKEN not set: the push part is skipped');
    return;
  }
  if (!USER) {
    console.error('BENCH_USER is required with BENCH_TOKEN');
    process.exit(2);
  }
  await pushes();
})().catch((error) => {
  console.error(error);
  process.exit(1);
});
