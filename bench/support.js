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

/** A module of the compiled application (seeders write the rows exactly as the server does); needs `npm run build`. */
function loadDist(module) {
  const path = require('node:path');
  try {
    return require(path.join(__dirname, '..', 'dist', 'src', module));
  } catch (error) {
    if (error.code === 'MODULE_NOT_FOUND') {
      console.error(`cannot load ${module} from dist/: run "npm run build" first`);
      process.exit(2);
    }
    throw error;
  }
}

/** A deterministic pseudo-random sequence in [0, 1), so that two seeding runs write comparable data. */
function random(seed) {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

/** Multi-row INSERTs of at most 500 rows each, inside the caller's transaction. */
async function insertRows(tx, table, columns, rows) {
  for (let start = 0; start < rows.length; start += 500) {
    const chunk = rows.slice(start, start + 500);
    const placeholders = chunk.map(() => `(${columns.map(() => '?').join(',')})`).join(',');
    await tx.query(`INSERT INTO ${table} (${columns.join(',')}) VALUES ${placeholders}`, chunk.flat());
  }
}

/** SEED_TAG (part of every seeded name, so that several runs do not collide): 1-6 lowercase letters or digits. */
function seedTag(fallback) {
  const tag = process.env.SEED_TAG ?? fallback;
  if (!/^[a-z0-9]{1,6}$/.test(tag)) {
    console.error('SEED_TAG must be 1-6 lowercase letters or digits');
    process.exit(2);
  }
  return tag;
}

module.exports = { bounded, baseUrl, percentile, loadDist, random, insertRows, seedTag };
