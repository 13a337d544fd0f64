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
 *   BENCH_WARMUP       requests sent first for each scenario and reported apart (default 2000, 0 for none, at most 100000):
 *                      the JIT compiling the route's code, not the steady state, is what a cold run measures
 * Prints latency percentiles per scenario (autocannon, whole milliseconds), first for `GET /user` as a baseline
 * (same authentication, no quota work), so that the quota paths' own cost shows on a loaded machine; exits 1 on
 * any unexpected answer.
 */
'use strict';

const { bounded, baseUrl } = require('./support');

const REQUEST_TIMEOUT_MS = 15_000;
const GROUP = 'bench-quota-over';

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

/**
 * One scenario through autocannon (the load generator of the project's other benchmarks): `concurrency`
 * connections, `total` requests, each answer checked by `accept(status, body)`. autocannon costs the shared
 * cores far less per request than fetch, so the figures are the server's. Latencies are whole milliseconds.
 */
/** The API's path on the server (BENCH_URL may carry a path prefix). */
const api = (base) => `${new URL(base).pathname.replace(/\/$/, '')}/api/v1`;

function scenario(base, headers, label, total, concurrency, maxSeconds, request, accept) {
  const autocannon = require('autocannon');
  let errors = 0;
  let sequence = 0;
  return new Promise((resolve, reject) => {
    autocannon(
      {
        url: base,
        connections: concurrency,
        pipelining: 1,
        amount: total,
        duration: maxSeconds,
        timeout: REQUEST_TIMEOUT_MS / 1000,
        requests: [
          {
            setupRequest: (req) => ({
              ...req,
              ...request(sequence++),
              headers: { ...headers, ...(request.json ? { 'content-type': 'application/json' } : {}) },
            }),
            onResponse: (status, body) => {
              if (!accept(status, body)) {
                errors += 1;
                if (errors <= 3) console.error(`${label}: unexpected answer ${status} ${String(body).slice(0, 200)}`);
              }
            },
          },
        ],
      },
      (error, result) => {
        if (error) return reject(error);
        const failed = errors + result.errors + result.timeouts;
        const l = result.latency;
        console.log(
          `${label.padEnd(36)} n=${String(result.requests.total).padStart(6)}  p50=${String(l.p50).padStart(4)}  p90=${String(l.p90).padStart(4)}  p99=${String(l.p99).padStart(4)}  max=${String(l.max).padStart(4)} ms  ${result.requests.average.toFixed(0)} req/s  errors=${failed}`,
        );
        resolve(failed);
      },
    );
  });
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
  const warmup = process.env.BENCH_WARMUP === '0' ? 0 : bounded('BENCH_WARMUP', 2000, 100_000);
  const headers = { Authorization: `token ${token}` };
  await setUp(base, headers);
  // Warm up connections and caches (token verification) before measuring.
  for (let i = 0; i < 20; i++) await call(base, headers, 'GET', '/user/quota/check?subject=size:repos:all');

  let errors = 0;
  // Each scenario: its warm-up (reported apart, marked "warm-up"), then the measured run.
  const measure = async (label, request, accept) => {
    if (warmup > 0) errors += await scenario(base, headers, `${label} warm-up`, warmup, concurrency, maxSeconds, request, accept);
    errors += await scenario(base, headers, label, total, concurrency, maxSeconds, request, accept);
  };
  // The same authentication and routing without any quota work: what the machine gives any request.
  await measure(
    'GET /user (baseline)',
    () => ({ method: 'GET', path: `${api(base)}/user` }),
    (status) => status === 200,
  );
  await measure(
    'GET /user/quota/check',
    () => ({ method: 'GET', path: `${api(base)}/user/quota/check?subject=size:repos:all` }),
    (status, body) => status === 200 && body.trim() === 'true',
  );
  const refused = (index) => ({ method: 'POST', path: `${api(base)}/user/repos`, body: JSON.stringify({ name: `bench-refused-${index}` }) });
  refused.json = true;
  await measure('POST /user/repos (413)', refused, (status) => status === 413);
  if (errors > 0) {
    console.error(`${errors} unexpected answers`);
    process.exit(1);
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
