'use strict';
/*
 * What every benchmark shares: bounded settings from the environment, a base URL that may only be a loopback
 * address (benchmarks never load another host), and latency percentiles.
 */

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** An integer setting between 1 and `max`; anything else stops the benchmark. */
function bounded(name, fallback, max, min = 1) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    console.error(`${name} must be an integer between ${min} and ${max}`);
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

/**
 * Words that seeded repository names are made of, most frequent first: picked with Zipf weights (1/rank), so
 * that single words match from over 10% down to under 0.1% of the repositories (search at every selectivity).
 */
const REPOSITORY_WORDS = (
  'api server client tool web app cli lib core data config utils plugin service test docs demo bot parser engine ' +
  'manager kit framework sdk node react python rust java kotlin swift ruby script dashboard monitor logger cache ' +
  'queue proxy router gateway auth storage backup sync deploy build template starter example sample blog site ' +
  'theme game chat mail search index graph chart image video audio stream player editor viewer reader writer ' +
  'converter generator compiler runtime scheduler worker crawler scraper analyzer validator formatter linter ' +
  'bundler loader wrapper binding driver adapter connector bridge toolkit helper common shared legacy next lite ' +
  'mini micro fast simple smart open free home cloud edge mobile desktop terminal shell dotfiles notes wiki ' +
  'journal tracker planner todo calendar budget invoice shop store market crypto wallet ledger vault secret ' +
  'cipher hash sign verify scan probe fuzz bench perf trace metrics alert pager oncall incident status health ' +
  'ping uptime cron timer clock weather forecast climate ocean forest river mountain desert island planet comet ' +
  'nebula quasar pulsar photon quantum neuron tensor vector matrix kernel module package bundle archive mirror ' +
  'fork patch diff merge rebase commit branch release version changelog license readme guide tutorial course ' +
  'lesson exercise homework thesis paper research notebook dataset model training inference pipeline workflow ' +
  'orchestrator operator controller reconciler webhook callback listener emitter reactor actor fiber coroutine ' +
  'thread mutex semaphore barrier latch channel socket packet frame codec muxer tunnel relay beacon lighthouse ' +
  'harbor anchor compass sextant astrolabe zephyr monsoon typhoon aurora borealis solstice equinox obsidian ' +
  'basalt granite marble quartz topaz sapphire emerald garnet onyx jasper agate beryl zircon'
).split(' ');

/** A picker of REPOSITORY_WORDS with Zipf weights, driven by `next` (a `random` sequence). */
function wordPicker(next) {
  const cumulative = [];
  let sum = 0;
  for (let rank = 1; rank <= REPOSITORY_WORDS.length; rank++) cumulative.push((sum += 1 / rank));
  return () => {
    const target = next() * sum;
    let low = 0;
    let high = cumulative.length - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (cumulative[middle] < target) low = middle + 1;
      else high = middle;
    }
    return REPOSITORY_WORDS[low];
  };
}

/**
 * Adds per-row deltas to an integer counter column (`deltas`: id -> delta) inside the caller's transaction, 500
 * rows per UPDATE (one CASE per batch), so that seeding a few hundred thousand rows costs a few hundred statements.
 */
async function addToCounters(tx, table, column, deltas) {
  const entries = [...deltas].filter(([, delta]) => delta !== 0);
  for (let start = 0; start < entries.length; start += 500) {
    const chunk = entries.slice(start, start + 500);
    const cases = chunk.map(() => 'WHEN ? THEN ?').join(' ');
    await tx.query(`UPDATE ${table} SET ${column} = ${column} + CASE id ${cases} END WHERE id IN (${chunk.map(() => '?').join(',')})`, [
      ...chunk.flat(),
      ...chunk.map(([id]) => id),
    ]);
  }
}

/** One JSON line's figures of a load run: throughput, median and 99th percentile, what went wrong, the loader. */
function loadFigures(key, who, result) {
  return {
    key,
    who,
    loader: result.loader ?? 'autocannon',
    rps: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    non2xx: result.non2xx,
    errors: result.errors,
  };
}

module.exports = { bounded, baseUrl, percentile, loadDist, random, insertRows, seedTag, REPOSITORY_WORDS, wordPicker, addToCounters, loadFigures };
