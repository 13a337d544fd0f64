#!/usr/bin/env node
/*
 * Load benchmark of GET /users/search against a running Anvil, simulating people typing names into a user
 * picker: every prefix of a few names (one character, two, three...), plus substrings from the middle of
 * logins, full names and e-mail addresses. Seed the database first with bench/seed-users.js.
 *
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_TOKEN=<40 hex> node bench/user-search.bench.js
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_TOKEN        access token (read:user); without it the searches are anonymous
 *   BENCH_REQUESTS     total requests (default 400, at most 10000)
 *   BENCH_CONCURRENCY  requests in flight (default 4, at most 32)
 *   BENCH_MAX_SECONDS  stop after this long whatever is left (default 120, at most 900)
 * Prints latency percentiles per query length and overall, and the error count; exits 1 on any error.
 */
'use strict';

const { bounded, baseUrl, percentile } = require('./support');

const REQUEST_TIMEOUT_MS = 15_000;

/** What a user types: every prefix of a name, then a few substrings that start mid-word. */
function workload() {
  const typed = ['olivia', 'kowalski', 'hernandez', 'müller', 'sophia.g', 'taylor'];
  const middles = ['ander', 'son', 'ez', 'ia.', 'example', 's12', '1234', 'zzzq', 'ö', 'e'];
  const queries = [];
  for (const word of typed) for (let i = 1; i <= word.length; i++) queries.push(word.slice(0, i));
  queries.push(...middles);
  return queries;
}

function summary(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value) => (Number.isNaN(value) ? '-' : value.toFixed(1).padStart(8));
  return `${label.padEnd(14)} n=${String(sorted.length).padStart(5)}  p50=${f(percentile(sorted, 50))}  p90=${f(percentile(sorted, 90))}  p99=${f(percentile(sorted, 99))}  max=${f(sorted[sorted.length - 1] ?? NaN)} ms`;
}

async function main() {
  const base = baseUrl();
  const total = bounded('BENCH_REQUESTS', 400, 10_000);
  const concurrency = bounded('BENCH_CONCURRENCY', 4, 32);
  const deadline = Date.now() + bounded('BENCH_MAX_SECONDS', 120, 900) * 1000;
  const headers = process.env.BENCH_TOKEN ? { Authorization: `token ${process.env.BENCH_TOKEN}` } : {};
  const queries = workload();
  const byLength = new Map();
  const all = [];
  const totals = new Map();
  let errors = 0;
  let issued = 0;

  async function worker() {
    while (issued < total && Date.now() < deadline) {
      const query = queries[issued % queries.length];
      issued += 1;
      const url = `${base}/api/v1/users/search?q=${encodeURIComponent(query)}&limit=10`;
      const started = process.hrtime.bigint();
      try {
        const response = await fetch(url, { headers, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        totals.set(query, response.headers.get('x-total-count'));
      } catch (error) {
        errors += 1;
        if (errors <= 5) console.error(`${query}: ${error.message}`);
        continue;
      }
      const millis = Number(process.hrtime.bigint() - started) / 1e6;
      const bucket = query.length >= 4 ? '4+ chars' : `${query.length} char${query.length === 1 ? '' : 's'}`;
      if (!byLength.has(bucket)) byLength.set(bucket, []);
      byLength.get(bucket).push(millis);
      all.push(millis);
    }
  }

  const started = Date.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (Date.now() - started) / 1000;
  console.log(
    `GET /users/search: ${all.length} ok, ${errors} errors, ${seconds.toFixed(1)} s, ${(all.length / seconds).toFixed(1)} req/s, concurrency ${concurrency}`,
  );
  for (const bucket of ['1 char', '2 chars', '3 chars', '4+ chars']) if (byLength.has(bucket)) console.log(summary(bucket, byLength.get(bucket)));
  console.log(summary('all', all));
  const sample = ['o', 'ol', 'oli', 'olivia', 'kowalski', 'zzzq'].filter((query) => totals.has(query));
  console.log(`X-Total-Count: ${sample.map((query) => `${query}=${totals.get(query)}`).join(' ')}`);
  if (errors > 0) process.exit(1);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
