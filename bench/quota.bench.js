#!/usr/bin/env node
/*
 * Load benchmark of the quota engine against a running Anvil: `GET /user/quota/check` and a `POST /user/repos`
 * refused with 413, the two answers that must stay cheap whatever the number of repositories. Seed first
 * (bench/seed-users.js, then bench/seed-repositories.js) so that usage is summed over a realistic table.
 *
 *   BENCH_URL=http://127.0.0.1:3000 BENCH_TOKEN=<admin token> BENCH_CONCURRENCY=8 node bench/quota.bench.js
 *
 * The token must belong to a site admin (scope all): the benchmark first puts that admin into a quota group
 * `bench-quota-over` whose rule `bench-quota-over` (size:repos:all, limit 1 byte) it is always over, so that
 * every creation is refused and nothing is created. It leaves the group in place; delete it afterwards with
 * `DELETE /api/v1/admin/quota/groups/bench-quota-over` to lift the limit.
 *
 * Environment:
 *   BENCH_URL          server base URL (default http://127.0.0.1:3000); loopback hosts only
 *   BENCH_TOKEN        admin access token (required)
 *   BENCH_REQUESTS     requests per scenario (default 2000, at most 100000)
 *   BENCH_CONCURRENCY  requests in flight (default 8, at most 32)
 *   BENCH_MAX_SECONDS  stop a scenario after this long (default 120, at most 900)
 * Prints latency percentiles per scenario, first for `GET /user` as a baseline (same authentication, no quota
 * work), so that the quota paths' own cost shows on a loaded machine; exits 1 on any unexpected answer.
 */
'use strict';

const { bounded, baseUrl, percentile } = require('./support');

const REQUEST_TIMEOUT_MS = 15_000;
const GROUP = 'bench-quota-over';

function summary(label, samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const f = (value) => (Number.isNaN(value) ? '-' : value.toFixed(2).padStart(8));
  return `${label.padEnd(28)} n=${String(sorted.length).padStart(6)}  p50=${f(percentile(sorted, 50))}  p90=${f(percentile(sorted, 90))}  p99=${f(percentile(sorted, 99))}  max=${f(sorted[sorted.length - 1] ?? NaN)} ms`;
}

async function call(base, headers, method, path, body) {
  const response = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  });
  const text = await response.text();
  return { status: response.status, text };
}

/** The admin joins a group it is always over (idempotent: existing rule, group or membership are fine). */
async function setUp(base, headers) {
  const me = await call(base, headers, 'GET', '/user');
  if (me.status !== 200) throw new Error(`GET /user answered ${me.status}: is BENCH_TOKEN valid?`);
  const login = JSON.parse(me.text).login;
  const group = await call(base, headers, 'POST', '/admin/quota/groups', { name: GROUP, rules: [{ name: GROUP, limit: 1, subjects: ['size:repos:all'] }] });
  if (group.status !== 201 && group.status !== 409) throw new Error(`creating the quota group answered ${group.status} ${group.text}`);
  const member = await call(base, headers, 'PUT', `/admin/quota/groups/${GROUP}/users/${encodeURIComponent(login)}`);
  if (member.status !== 204 && member.status !== 409) throw new Error(`joining the quota group answered ${member.status} ${member.text}`);
  const repos = await call(base, headers, 'GET', `/admin/users/${encodeURIComponent(login)}/quota`);
  const used = JSON.parse(repos.text).used.size.repos;
  console.log(`benchmarking as ${login}: ${used.public + used.private} bytes of repositories, group ${GROUP} (limit 1 byte)`);
  return login;
}

async function scenario(label, total, concurrency, deadline, request) {
  const samples = [];
  let issued = 0;
  let errors = 0;
  async function worker() {
    while (issued < total && Date.now() < deadline) {
      const index = issued++;
      const started = process.hrtime.bigint();
      try {
        const ok = await request(index);
        if (!ok) errors += 1;
      } catch (error) {
        errors += 1;
        if (errors <= 3) console.error(`${label}: ${error.message}`);
      }
      samples.push(Number(process.hrtime.bigint() - started) / 1e6);
    }
  }
  const wall = Date.now();
  await Promise.all(Array.from({ length: concurrency }, worker));
  const seconds = (Date.now() - wall) / 1000;
  console.log(`${summary(label, samples)}  ${(samples.length / seconds).toFixed(0)} req/s  errors=${errors}`);
  return errors;
}

async function main() {
  const base = baseUrl();
  const token = process.env.BENCH_TOKEN;
  if (!token) {
    console.error('BENCH_TOKEN (an admin token) is required');
    process.exit(2);
  }
  const total = bounded('BENCH_REQUESTS', 2000, 100_000);
  const concurrency = bounded('BENCH_CONCURRENCY', 8, 32);
  const maxSeconds = bounded('BENCH_MAX_SECONDS', 120, 900);
  const headers = { Authorization: `token ${token}` };
  await setUp(base, headers);
  // Warm up connections and caches (token verification) before measuring.
  for (let i = 0; i < 20; i++) await call(base, headers, 'GET', '/user/quota/check?subject=size:repos:all');

  let errors = 0;
  // The same authentication and routing without any quota work: what the machine gives any request.
  errors += await scenario('GET /user (baseline)', total, concurrency, Date.now() + maxSeconds * 1000, async () => {
    const answer = await call(base, headers, 'GET', '/user');
    return answer.status === 200;
  });
  errors += await scenario('GET /user/quota/check', total, concurrency, Date.now() + maxSeconds * 1000, async () => {
    const answer = await call(base, headers, 'GET', '/user/quota/check?subject=size:repos:all');
    return answer.status === 200 && answer.text.trim() === 'true';
  });
  errors += await scenario('POST /user/repos (413)', total, concurrency, Date.now() + maxSeconds * 1000, async (index) => {
    const answer = await call(base, headers, 'POST', '/user/repos', { name: `bench-refused-${index}` });
    return answer.status === 413;
  });
  if (errors > 0) {
    console.error(`${errors} unexpected answers`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
