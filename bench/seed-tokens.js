#!/usr/bin/env node
/*
 * Gives SEED_TOKENS public individual users one access token each (scope "all"), hashed exactly as Anvil hashes
 * them (the compiled dist/src/auth/secrets.js: salted PBKDF2, indexed last eight characters), and writes the
 * plaintexts with their users' logins to SEED_TOKENS_FILE (mode 0600), for bench/run.js: the write benchmarks
 * spread over many callers, as a real site's writes do. The seeded users have no password; a token is their
 * only way in. Tokens for benchmarks only: the file holds working credentials, so keep it with the data.
 *
 *   DATA_DIR=./data SEED_TOKENS=200 SEED_TOKENS_FILE=./data/bench-tokens.json node bench/seed-tokens.js
 *
 * Environment: the server's own DATA_DIR / DATABASE_URL; SEED_TOKENS (default 200, at most 10000);
 * SEED_TOKENS_FILE (default DATA_DIR/bench-tokens.json; must not exist). Seed users first (bench/seed-users.js).
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { bounded, insertRows, loadDist } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');
const { generateSalt, generateToken, hashToken } = loadDist('auth/secrets');

async function main() {
  const count = bounded('SEED_TOKENS', 200, 10_000);
  const config = loadConfig(process.env);
  const file = path.resolve(process.env.SEED_TOKENS_FILE || path.join(config.dataDir, 'bench-tokens.json'));
  if (fs.existsSync(file)) {
    console.error(`${file} exists: choose another SEED_TOKENS_FILE`);
    process.exit(2);
  }
  const dataSource = await openDatabase(config);
  const user = dataSource.driver.escape('user');
  const started = Date.now();
  try {
    // Users who may sign in and whom everyone may see; spread over the id range rather than the first ones.
    const candidates = await dataSource.query(
      `SELECT id, name FROM ${user} WHERE type = 0 AND visibility = 0 AND is_active = 1 AND prohibit_login = 0 AND must_change_password = 0 ORDER BY id`,
    );
    const step = Math.max(1, Math.floor(candidates.length / count));
    const chosen = candidates.filter((_, index) => index % step === 0).slice(0, count);
    const now = Math.floor(Date.now() / 1000);
    const rows = [];
    const tokens = [];
    for (const { id, name } of chosen) {
      const plaintext = generateToken();
      const salt = generateSalt();
      // One at a time: hashToken queues on Anvil's KDF limiter, which refuses a deep queue.
      rows.push([Number(id), 'bench', await hashToken(plaintext, salt), salt, plaintext.slice(-8), 'all', now, now]);
      tokens.push({ login: name, token: plaintext });
    }
    await dataSource.transaction((tx) =>
      insertRows(tx, 'access_token', ['uid', 'name', 'token_hash', 'token_salt', 'token_last_eight', 'scope', 'created_unix', 'updated_unix'], rows),
    );
    fs.writeFileSync(file, `${JSON.stringify(tokens, null, 1)}\n`, { mode: 0o600 });
    console.log(`${tokens.length} tokens seeded into ${file} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
