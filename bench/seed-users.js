#!/usr/bin/env node
/*
 * Seeds many individual users straight into Anvil's database, search index included, for
 * bench/user-search.bench.js. Going through the API would hash a password per user (seconds per hundred);
 * this writes the same rows the API writes, using the compiled application code (run `npm run build` first)
 * so that the search grams are computed exactly as the server computes them.
 *
 *   DATA_DIR=./data SEED_COUNT=100000 node bench/seed-users.js        # SQLite, as the server uses it
 *   DATABASE_URL=mysql://root@127.0.0.1:3306/anvil node bench/seed-users.js
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL; SEED_COUNT (default 50000, at most 2000000);
 * SEED_TAG (default "s", part of every login so that several runs do not collide).
 * Seeded users have no password: they cannot sign in. About 10% are limited, 10% private, 20% hide their
 * e-mail. Stop the server on SQLite while seeding large amounts, or expect it to wait for the writer.
 */
'use strict';

const { insertRows, loadDist, random, seedTag } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');
const { searchGrams, lowerForSearch } = loadDist('users/user-search.grams');

const MAX_COUNT = 2_000_000;
const BATCH = 1000;
const FIRST = [
  'olivia',
  'liam',
  'emma',
  'noah',
  'amelia',
  'oliver',
  'ava',
  'elijah',
  'sophia',
  'lucas',
  'mia',
  'levi',
  'isabella',
  'mateo',
  'evelyn',
  'ezra',
  'harper',
  'asher',
  'luna',
  'james',
  'camila',
  'leo',
  'gianna',
  'jack',
  'elizabeth',
  'luca',
  'eleanor',
  'henry',
  'ella',
  'hudson',
  'abigail',
  'ethan',
  'sofia',
  'muhammad',
  'avery',
  'maverick',
  'scarlett',
  'theo',
  'emily',
  'aiden',
  'aria',
  'elias',
  'penelope',
  'grayson',
  'chloe',
  'jürgen',
  'zoë',
  'åsa',
  'søren',
  'renée',
];
const LAST = [
  'smith',
  'johnson',
  'williams',
  'brown',
  'jones',
  'garcia',
  'miller',
  'davis',
  'rodriguez',
  'martinez',
  'hernandez',
  'lopez',
  'gonzalez',
  'wilson',
  'anderson',
  'thomas',
  'taylor',
  'moore',
  'jackson',
  'martin',
  'lee',
  'perez',
  'thompson',
  'white',
  'harris',
  'sanchez',
  'clark',
  'ramirez',
  'lewis',
  'robinson',
  'walker',
  'young',
  'allen',
  'king',
  'wright',
  'scott',
  'torres',
  'nguyen',
  'hill',
  'flores',
  'müller',
  'schmidt',
  'öztürk',
  'dubois',
  'rossi',
  'kowalski',
  'novák',
  'jensen',
  'tanaka',
  'kim',
];

function capitalize(word) {
  return word.charAt(0).toUpperCase() + word.slice(1);
}

async function main() {
  const count = Number(process.env.SEED_COUNT ?? 50000);
  if (!Number.isSafeInteger(count) || count < 1 || count > MAX_COUNT) {
    console.error(`SEED_COUNT must be an integer between 1 and ${MAX_COUNT}`);
    process.exit(2);
  }
  const tag = seedTag('s');
  const dataSource = await openDatabase(loadConfig(process.env));
  const escape = (name) => dataSource.driver.escape(name);
  const next = random(count * 31 + tag.length);
  const now = Math.floor(Date.now() / 1000);
  const started = Date.now();
  try {
    for (let offset = 0; offset < count; offset += BATCH) {
      const users = [];
      for (let i = offset; i < Math.min(count, offset + BATCH); i++) {
        const first = FIRST[Math.floor(next() * FIRST.length)];
        const last = LAST[Math.floor(next() * LAST.length)];
        // Logins are ASCII (the username rule); full names keep the accents.
        const ascii = (word) => word.normalize('NFD').replace(/[^a-z]/g, '');
        const name = `${ascii(first)}.${ascii(last)}${tag}${i}`.slice(0, 40);
        const roll = next();
        const created = now - Math.floor(next() * 5 * 365 * 86400);
        users.push({
          name,
          fullName: `${capitalize(first)} ${capitalize(last)}`,
          email: `${name}@example.com`,
          visibility: roll < 0.8 ? 0 : roll < 0.9 ? 1 : 2,
          hideEmail: next() < 0.2 ? 1 : 0,
          created,
          updated: created + Math.floor(next() * (now - created)),
        });
      }
      await dataSource.transaction(async (tx) => {
        await insertRows(
          tx,
          escape('user'),
          ['lower_name', 'name', 'full_name', 'email', 'keep_email_private', 'visibility', 'must_change_password', 'created_unix', 'updated_unix'],
          users.map((u) => [u.name.toLowerCase(), u.name, u.fullName, u.email, u.hideEmail, u.visibility, 0, u.created, u.updated]),
        );
        const ids = new Map();
        for (let start = 0; start < users.length; start += 500) {
          const names = users.slice(start, start + 500).map((u) => u.name.toLowerCase());
          const rows = await tx.query(`SELECT id, lower_name FROM ${escape('user')} WHERE lower_name IN (${names.map(() => '?').join(',')})`, names);
          for (const row of rows) ids.set(row.lower_name, Number(row.id));
        }
        const idOf = (u) => ids.get(u.name.toLowerCase());
        await insertRows(
          tx,
          'email_address',
          ['uid', 'email', 'lower_email', 'is_activated', 'is_primary'],
          users.map((u) => [idOf(u), u.email, u.email.toLowerCase(), 1, 1]),
        );
        await insertRows(
          tx,
          'user_search_text',
          ['user_id', 'full_name', 'email'],
          users.map((u) => [idOf(u), lowerForSearch(u.fullName), lowerForSearch(u.email)]),
        );
        await insertRows(
          tx,
          'user_search_gram',
          ['gram', 'user_id'],
          users.flatMap((u) => searchGrams([u.name.toLowerCase(), u.fullName, u.email]).map((gram) => [gram, idOf(u)])),
        );
      });
      const done = Math.min(count, offset + BATCH);
      if (done % 10000 === 0 || done === count) {
        console.log(`${done} users seeded (${((Date.now() - started) / 1000).toFixed(1)} s)`);
      }
    }
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
