#!/usr/bin/env node
/*
 * Seeds stars and follows straight into Anvil's database, for bench/run.js: each individual user stars about
 * SEED_STARS public repositories and follows about SEED_FOLLOWS users or organisations (means; popular targets
 * are picked more often), and the counters that mirror those rows (repository num_stars; user num_stars,
 * num_followers, num_following) are raised by exactly what was inserted, in the same transaction, so that they
 * stay equal to the row counts as Anvil keeps them. Pairs that already exist are left alone.
 *
 *   DATA_DIR=./data SEED_STARS=5 SEED_FOLLOWS=3 node bench/seed-stars-and-follows.js
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/anvil node bench/seed-stars-and-follows.js
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL; SEED_STARS (default 5, at most 1000) and SEED_FOLLOWS
 * (default 3, at most 1000), means per user. Seed users and repositories first (bench/seed-users.js,
 * bench/seed-repositories.js). Run `npm run build` first.
 */
'use strict';

const { addToCounters, insertRows, loadDist, random } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');

/** A mean per user, 0 allowed. */
function mean(name, fallback) {
  const raw = process.env[name];
  const value = raw === undefined || raw === '' ? fallback : Number(raw);
  if (!Number.isSafeInteger(value) || value < 0 || value > 1000) {
    console.error(`${name} must be an integer between 0 and 1000`);
    process.exit(2);
  }
  return value;
}

async function main() {
  const starsPerUser = mean('SEED_STARS', 5);
  const followsPerUser = mean('SEED_FOLLOWS', 3);
  const dataSource = await openDatabase(loadConfig(process.env));
  const escape = (name) => dataSource.driver.escape(name);
  const user = escape('user');
  const started = Date.now();
  try {
    const users = (await dataSource.query(`SELECT id FROM ${user} WHERE type = 0 ORDER BY id`)).map((row) => Number(row.id));
    const accounts = (await dataSource.query(`SELECT id FROM ${user} ORDER BY id`)).map((row) => Number(row.id));
    const repos = (await dataSource.query('SELECT id FROM repository WHERE is_private = 0 ORDER BY id')).map((row) => Number(row.id));
    const key = (a, b) => `${a}:${b}`;
    const existingStars = new Set((await dataSource.query('SELECT uid, repo_id FROM star')).map((row) => key(row.uid, row.repo_id)));
    const existingFollows = new Set((await dataSource.query('SELECT user_id, follow_id FROM follow')).map((row) => key(row.user_id, row.follow_id)));

    const next = random(users.length * 7 + repos.length);
    // How many per user: exponential around the mean; which: density ~ x^-2/3, so popular targets collect most.
    const howMany = (average) => (average === 0 ? 0 : Math.floor(-Math.log(1 - next()) * average));
    const popular = (list) => list[Math.floor(list.length * next() ** 3)];
    const now = Math.floor(Date.now() / 1000);
    const stars = [];
    const follows = [];
    const count = (map, id) => map.set(id, (map.get(id) ?? 0) + 1);
    const counters = { repoStars: new Map(), userStars: new Map(), followers: new Map(), following: new Map() };
    for (const uid of users) {
      for (let k = repos.length > 0 ? howMany(starsPerUser) : 0; k > 0; k--) {
        const repoId = popular(repos);
        if (existingStars.has(key(uid, repoId))) continue;
        existingStars.add(key(uid, repoId));
        stars.push([uid, repoId, now - Math.floor(next() * 365 * 86400)]);
        count(counters.repoStars, repoId);
        count(counters.userStars, uid);
      }
      for (let k = howMany(followsPerUser); k > 0; k--) {
        const followId = popular(accounts);
        if (followId === uid || existingFollows.has(key(uid, followId))) continue;
        existingFollows.add(key(uid, followId));
        follows.push([uid, followId, now - Math.floor(next() * 365 * 86400)]);
        count(counters.following, uid);
        count(counters.followers, followId);
      }
    }
    // Rows and counters in one transaction: the database is never seen with one without the other.
    await dataSource.transaction(async (tx) => {
      await insertRows(tx, 'star', ['uid', 'repo_id', 'created_unix'], stars);
      await insertRows(tx, 'follow', ['user_id', 'follow_id', 'created_unix'], follows);
      await addToCounters(tx, 'repository', 'num_stars', counters.repoStars);
      await addToCounters(tx, user, 'num_stars', counters.userStars);
      await addToCounters(tx, user, 'num_followers', counters.followers);
      await addToCounters(tx, user, 'num_following', counters.following);
    });
    console.log(`${stars.length} stars and ${follows.length} follows seeded (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
