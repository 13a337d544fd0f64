#!/usr/bin/env node
/*
 * One request at a time: the latency of `GET /repos/search?q=WORD&limit=10` for each word, after one request
 * that stores its exact total (the target is a p95 at 1 000 000 repositories). Seed with bench/seed-users.js and
 * bench/seed-repositories.js (SEED_REPOS=1000000); the words of support.js REPOSITORY_WORDS match from over 10%
 * down to under 0.1% of the repositories.
 *
 *   BENCH_WORDS=client,ruby,emerald BENCH_REQUESTS=100 node bench/search-latency.js
 *
 * Environment: BENCH_URL (default http://127.0.0.1:3000, loopback only), BENCH_WORDS (comma-separated, required),
 * BENCH_REQUESTS (per word, default 100, at most 10 000). Prints the first request's time and p50/p95/p99/max of
 * the others; exits 1 when an answer is not a 200.
 */
'use strict';

const http = require('node:http');
const { bounded, baseUrl, percentile } = require('./support');

const BASE = new URL(baseUrl());
const REQUESTS = bounded('BENCH_REQUESTS', 100, 10_000);
const WORDS = (process.env.BENCH_WORDS ?? '').split(',').filter(Boolean);
if (WORDS.length === 0) {
  console.error('BENCH_WORDS (comma-separated words) is required');
  process.exit(2);
}
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function search(word) {
  const started = process.hrtime.bigint();
  const path = `${BASE.pathname.replace(/\/$/, '')}/api/v1/repos/search?q=${encodeURIComponent(word)}&limit=10`;
  return new Promise((resolve, reject) => {
    const request = http.get({ host: BASE.hostname, port: BASE.port, path, agent }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`${word}: answered ${response.statusCode}`));
        else resolve({ ms: Number(process.hrtime.bigint() - started) / 1e6, total: response.headers['x-total-count'] });
      });
    });
    request.on('error', reject);
  });
}

async function main() {
  const f = (value) => value.toFixed(1).padStart(7);
  for (const word of WORDS) {
    const first = await search(word);
    const samples = [];
    for (let i = 0; i < REQUESTS; i++) samples.push((await search(word)).ms);
    samples.sort((a, b) => a - b);
    console.log(
      `${word.padEnd(14)} total=${String(first.total).padStart(7)}  first=${f(first.ms)}  p50=${f(percentile(samples, 50))}  p95=${f(percentile(samples, 95))}  p99=${f(percentile(samples, 99))}  max=${f(samples[samples.length - 1])} ms`,
    );
  }
  agent.destroy();
}

main().catch((error) => {
  console.error(error.message);
  process.exit(1);
});
