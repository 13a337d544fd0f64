'use strict';
/*
 * What every benchmark shares: bounded settings from the environment, a base URL that may only be a loopback
 * address (benchmarks never load another host), and latency percentiles.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** An integer setting between 1 and `max`; anything else stops the benchmark. */
function bounded(name, fallback, max) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    console.error(`${name} must be an integer between 1 and ${max}`);
    process.exit(2);
  }
  return value;
}

/** BENCH_URL (default http://127.0.0.1:3000), refused unless it is a loopback address. */
function baseUrl() {
  let url;
  try {
    url = new URL(process.env.BENCH_URL || 'http://127.0.0.1:3000');
  } catch {
    console.error('BENCH_URL is not a URL');
    process.exit(2);
  }
  const host = url.hostname;
  if (!LOOPBACK.has(host) && !/^127(\.\d{1,3}){3}$/.test(host)) {
    console.error(`refusing to load ${host}: the benchmark only targets loopback addresses`);
    process.exit(2);
  }
  return url.origin + url.pathname.replace(/\/$/, '');
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

module.exports = { bounded, baseUrl, percentile };
