#!/usr/bin/env node
/*
 * Seeds many repository rows straight into Anvil's database, for bench/quota.bench.js and bench/run.js:
 * SEED_REPOS rows over the first SEED_OWNERS users and organisations (by id), skewed so that a few owners have
 * many repositories (the first hundredth of the owners about a tenth of them) and most have a few; names made
 * of words with Zipf weights (support.js REPOSITORY_WORDS), so that a search word matches anywhere from over 10%
 * down to under 0.1% of the repositories; about 70% with a description; each with a pseudo-random stored git
 * size, about 30% private; the owners' repository counters are raised to match. Only rows are written, no git
 * directories: quota usage is summed from the stored sizes and never reads the disk (docs/quota.md), and
 * GET /repos/{o}/{r} and searches read only the database, so those paths see exactly what they would see with
 * real repositories. Do not open these repositories' contents.
 *
 *   DATA_DIR=./data SEED_REPOS=100000 SEED_OWNERS=10000 node bench/seed-repositories.js
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/anvil SEED_REPOS=100000 node bench/seed-repositories.js
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL; SEED_REPOS (default 100000, at most 2000000);
 * SEED_OWNERS (default 10000); SEED_TAG (default "q", part of every name so that several runs do not collide).
 * Seed users first (bench/seed-users.js). Run `npm run build` first.
 */
'use strict';

const { addToCounters, bounded, insertRows, loadDist, random, seedTag, wordPicker } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');

const BATCH = 2000;

async function main() {
  const count = bounded('SEED_REPOS', 100000, 2_000_000);
  const ownerCount = bounded('SEED_OWNERS', 10000, 2_000_000);
  const tag = seedTag('q');
  const dataSource = await openDatabase(loadConfig(process.env));
  const escape = (name) => dataSource.driver.escape(name);
  const next = random(count * 17 + ownerCount);
  const word = wordPicker(next);
  const now = Math.floor(Date.now() / 1000);
  const started = Date.now();
  try {
    const owners = (await dataSource.query(`SELECT id FROM ${escape('user')} ORDER BY id LIMIT ${ownerCount}`)).map((row) => Number(row.id));
    if (owners.length === 0) {
      console.error('no users to own repositories: seed users first (bench/seed-users.js)');
      process.exit(2);
    }
    const perOwner = new Map();
    for (let offset = 0; offset < count; offset += BATCH) {
      const rows = [];
      for (let i = offset; i < Math.min(count, offset + BATCH); i++) {
        // Density ~ x^-1/2 over the owner list: the first 1% of the owners get about 10% of the repositories.
        const ownerId = owners[Math.floor(owners.length * next() ** 2)];
        perOwner.set(ownerId, (perOwner.get(ownerId) ?? 0) + 1);
        // Unique by the tag and number; the words are what searches find.
        const name = `${word()}-${word()}-${tag}${i}`;
        const description = next() < 0.7 ? `A ${word()} ${word()} for ${word()} ${word()}` : '';
        // Sizes from a few KiB to about 64 MiB, skewed towards small repositories.
        const size = Math.floor(4096 + next() ** 3 * 64 * 1024 * 1024);
        const created = now - Math.floor(next() * 3 * 365 * 86400);
        rows.push([ownerId, name, name, description, 'main', 'sha1', next() < 0.3 ? 1 : 0, 0, size, created, created]);
      }
      await dataSource.transaction(async (tx) => {
        await insertRows(
          tx,
          'repository',
          [
            'owner_id',
            'lower_name',
            'name',
            'description',
            'default_branch',
            'object_format_name',
            'is_private',
            'is_empty',
            'git_size',
            'created_unix',
            'updated_unix',
          ],
          rows,
        );
      });
      const done = Math.min(count, offset + BATCH);
      if (done % 20000 === 0 || done === count) console.log(`${done} repositories seeded (${((Date.now() - started) / 1000).toFixed(1)} s)`);
    }
    await dataSource.transaction((tx) => addToCounters(tx, escape('user'), 'num_repos', perOwner));
    console.log(`${owners.length} owners, ${count} repositories`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
