#!/usr/bin/env node
// `npm start` and `npm run cli` run this first: it rebuilds dist/ only when a source is newer than the last
// build (as make would), so an unchanged checkout starts at once. `npm run build` always rebuilds.
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

const ROOT = path.join(__dirname, '..');
const stampOf = (root) => path.join(root, 'dist', '.build-stamp');
const INPUTS = [
  'src',
  'openapi/forgejo-operation-ids.json',
  'openapi/swagger.v1.json',
  'ormconfig.ts',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'tsconfig.build.json',
];

/** The newest modification time (ms) under a file or directory. */
function newest(file) {
  let stat;
  try {
    stat = fs.statSync(file);
  } catch {
    return 0;
  }
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of fs.readdirSync(file)) latest = Math.max(latest, newest(path.join(file, name)));
  return latest;
}

/** True when `root` has no build yet, or a source newer than its last one. */
function stale(root = ROOT) {
  let built;
  try {
    built = fs.statSync(stampOf(root)).mtimeMs;
  } catch {
    return true;
  }
  if (!fs.existsSync(path.join(root, 'dist', 'src', 'main.js'))) return true;
  return INPUTS.some((input) => newest(path.join(root, input)) > built);
}

function build(root = ROOT) {
  const started = new Date();
  const result = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
  // The stamp is dated from the start of the build: a source saved during the build makes the next run build again.
  fs.writeFileSync(stampOf(root), '');
  fs.utimesSync(stampOf(root), started, started);
}

if (require.main === module) {
  if (process.argv.includes('--force') || stale()) build();
}

module.exports = { stale, build, INPUTS };
