#!/usr/bin/env node
/*
 * Reads as a team member, against a running server on data seeded by bench/seed-teams.js: the access policy's
 * hot path when the caller's grants must be read (one statement whatever the number of their teams).
 *
 *   BENCH_URL=http://127.0.0.1:3310 BENCH_TEAMS_FILE=$DATA/bench-teams.json BENCH_WORD=monitor node bench/team-access.bench.js
 *
 * Targets (BENCH_ONLY, comma-separated; default both):
 *   team-repo    GET /api/v1/repos/{o}/{r} with a team member's token, a repository a team of theirs reaches
 *                (private ones first), rotating over SEED_TEAM_TOKENS users and up to five repositories each
 *   team-search  GET /api/v1/repos/search?q=BENCH_WORD&limit=10 with those tokens (their teams' private
 *                repositories are visible to them, so the search reads their grants)
 * Without BENCH_TEAMS_FILE it loads the same routes with the signed-in tokens and public repositories of
 * the comparison harness's bench.json (BENCH_PERF_FILE): the figure of a caller without teams, for comparison.
 * Load: BENCH_SECONDS (10), BENCH_CONNS (64), BENCH_WARMUP (2 s); loopback only, bounded. Prints one JSON line per
 * target (req/s, p50/p99 ms, non-2xx) and exits 1 if any answer was not a 2xx.
 */
'use strict';

const fs = require('node:fs');
const autocannon = require('autocannon');
const { baseUrl, bounded, loadFigures } = require('./support');

const SECONDS = bounded('BENCH_SECONDS', 10, 120);
const CONNECTIONS = bounded('BENCH_CONNS', 64, 256);
const WARMUP = bounded('BENCH_WARMUP', 2, 30);

function samples() {
  const enc = (full) => full.split('/').map(encodeURIComponent).join('/');
  if (process.env.BENCH_TEAMS_FILE) {
    const teams = JSON.parse(fs.readFileSync(process.env.BENCH_TEAMS_FILE, 'utf8'));
    const pairs = teams.samples.flatMap((s) => s.repos.map((full) => ({ token: s.token, path: `/api/v1/repos/${enc(full)}` })));
    return { pairs, tokens: teams.samples.map((s) => s.token), who: `team members (${teams.samples.length})` };
  }
  const perf = JSON.parse(fs.readFileSync(process.env.BENCH_PERF_FILE, 'utf8'));
  const tokens = perf.tokens.map((t) => t.token);
  const pairs = perf.repos.map((full, index) => ({ token: tokens[index % tokens.length], path: `/api/v1/repos/${enc(full)}` }));
  return { pairs, tokens, who: `signed-in users without teams (${tokens.length})` };
}

function load(base, items, seconds) {
  let clientIndex = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: base,
        connections: CONNECTIONS,
        pipelining: 1,
        duration: seconds,
        timeout: 30,
        requests: items,
        setupClient: (client) => {
          const offset = Math.floor((clientIndex++ * items.length) / CONNECTIONS) % items.length;
          if (offset > 0) client.setRequests([...items.slice(offset), ...items.slice(0, offset)].map((item) => ({ ...item })));
        },
      },
      (error, result) => (error ? reject(error) : resolve(result)),
    );
  });
}

async function main() {
  const base = baseUrl();
  const { pairs, tokens, who } = samples();
  const word = process.env.BENCH_WORD ?? 'monitor';
  const targets = {
    'team-repo': pairs.map((p) => ({ method: 'GET', path: p.path, headers: { authorization: `token ${p.token}` } })),
    'team-search': tokens.map((token) => ({
      method: 'GET',
      path: `/api/v1/repos/search?q=${encodeURIComponent(word)}&limit=10`,
      headers: { authorization: `token ${token}` },
    })),
  };
  const only = (process.env.BENCH_ONLY ?? '').split(',').filter(Boolean);
  let failed = false;
  for (const [key, items] of Object.entries(targets)) {
    if (only.length > 0 && !only.includes(key)) continue;
    await load(base, items, WARMUP);
    const result = await load(base, items, SECONDS);
    const row = loadFigures(key, who, result);
    if (row.non2xx > 0 || row.errors > 0 || row.ok === 0) failed = true;
    console.log(JSON.stringify(row));
  }
  process.exit(failed ? 1 : 0);
}

main().catch((error) => {
  console.error(error);
  process.exit(2);
});
