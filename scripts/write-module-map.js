#!/usr/bin/env node
// The last step of `npm run build` (and of the Docker image, after its packages are pruned): loads the server's
// and the CLI's modules as their start does and writes where each require led to dist/module-map.json
// (src/server/module-map.ts). Without it the server starts as before, only slower; so a failure here is reported
// and does not fail the build.
//
// Then it records V8's code cache of a start (src/server/code-cache.ts): a child process, run with the Node.js flags
// of `npm start` and again with none (V8 refuses a cache made under other flags), starts the server on a throwaway
// SQLite DATA_DIR and writes dist/code-cache/<flags>.bin once it listens. Without it, too, the server starts as
// before, only slower.
//
// `--check` (CI) instead checks the map that is there: that it is written for this installation and build, and that
// Node.js resolves every one of its requires to the same file; and that the code cache is written for this build.
// Exit 1 when not.
'use strict';
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const Module = require('node:module');
const os = require('node:os');
const path = require('node:path');

const ROOT = path.join(__dirname, '..');
const dist = (file) => path.join(ROOT, 'dist', 'src', file);

function write() {
  try {
    const { MODULE_MAP_FILE, recordModuleMap } = require(dist('server/module-map.js'));
    const target = path.join(ROOT, MODULE_MAP_FILE);
    fs.rmSync(target, { force: true });
    const map = recordModuleMap(ROOT, () => {
      // What the entry points require at start, and what they load later in the start only (the metrics module
      // when METRICS is on, the database drivers TypeORM loads for the configured database).
      require(dist('server/serve.js'));
      require(dist('cli/cli.js'));
      require(dist('metrics/metrics.js'));
      require('better-sqlite3');
      require('mysql2');
    });
    fs.writeFileSync(target, JSON.stringify(map));
    console.log(`module map: ${Object.keys(map.entries).length} requires written to ${path.relative(ROOT, target)}`);
  } catch (error) {
    console.warn(`module map not written (the server starts without it, only slower): ${error.message}`);
  }
}

function check() {
  const { MODULE_MAP_FILE, readModuleMap } = require(dist('server/module-map.js'));
  const map = readModuleMap(ROOT);
  if (!map) return `${MODULE_MAP_FILE} is missing, malformed, or written for another installation or build`;
  const differing = [];
  for (const [key, file] of Object.entries(map.entries)) {
    const [directory, request] = key.split('\0');
    const parent = new Module(path.join(ROOT, directory, '[module-map check]'));
    parent.filename = parent.id;
    parent.paths = Module._nodeModulePaths(path.join(ROOT, directory));
    const resolved = Module._resolveFilename(request, parent, false);
    if (resolved !== path.join(ROOT, file)) differing.push(`${request} from ${directory}: ${file} in the map, ${resolved} by Node.js`);
  }
  if (differing.length > 0) return `module map: ${differing.length} requires resolve elsewhere:\n${differing.slice(0, 10).join('\n')}`;
  console.log(`module map: all ${Object.keys(map.entries).length} requires resolve as Node.js resolves them`);
  return null;
}

/** The Node.js flags `npm start` runs the server with (`node <flags> dist/src/main.js`). */
function startFlags() {
  const start = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')).scripts.start.split(/\s+/);
  return start.slice(1, start.indexOf('dist/src/main.js'));
}

/** The flag sets a cache is recorded for: `npm start`'s, and none (`node dist/src/main.js`). */
function flagSets() {
  const start = startFlags();
  return start.length > 0 ? [start, []] : [[]];
}

function writeCodeCache() {
  fs.rmSync(path.join(ROOT, 'dist', 'code-cache'), { recursive: true, force: true });
  for (const flags of flagSets()) {
    // A start takes a few seconds; one that hangs (a port it may not bind, say) must not hang the build.
    const child = spawnSync(process.execPath, [...flags, __filename, '--record-code-cache'], {
      cwd: ROOT,
      stdio: 'inherit',
      timeout: 120_000,
      killSignal: 'SIGKILL',
    });
    if (child.status !== 0) console.warn(`code cache for node ${flags.join(' ')} not written (the server starts without it, only slower)`);
  }
}

/** In the child: a start as `npm start` makes it, on a throwaway DATA_DIR, recorded once it listens. */
async function recordCodeCache() {
  const { useModuleMap } = require(dist('server/module-map.js'));
  const { codeCacheFile, recordCodeCache } = require(dist('server/code-cache.js'));
  useModuleMap(ROOT);
  const recorder = recordCodeCache(ROOT);
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-code-cache-'));
  try {
    const { loadConfig } = require(dist('config/config.js'));
    const { serve } = require(dist('server/serve.js'));
    const env = { DATA_DIR: dataDir, PORT: '0', SSH_LISTEN_HOST: '127.0.0.1', SSH_LISTEN_PORT: '0', LOG_LEVEL: 'warn' };
    const server = await serve(loadConfig(env), { info: () => undefined });
    const files = recorder.write();
    await server.stop('code cache recorded');
    console.log(
      `code cache: ${files} modules written to ${codeCacheFile()} (${process.execArgv.length > 0 ? `node ${process.execArgv.join(' ')}` : 'no Node.js flags'})`,
    );
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * The code caches are written for this build, and a start under their flags takes them: a child loads the server's
 * modules with each and reports how many entries V8 took and refused.
 */
function checkCodeCache() {
  const { codeCacheFile, codeCacheSize } = require(dist('server/code-cache.js'));
  const problems = [];
  for (const flags of flagSets()) {
    const start = `node ${[...flags, 'dist/src/main.js'].join(' ')}`;
    const entries = codeCacheSize(ROOT, flags);
    if (entries === null) {
      problems.push(`code cache for ${start}: ${codeCacheFile(flags)} is missing, malformed, or written for another build`);
      continue;
    }
    const child = spawnSync(process.execPath, [...flags, __filename, '--use-code-cache'], { cwd: ROOT, encoding: 'utf8' });
    const use = child.status === 0 ? JSON.parse(child.stdout) : null;
    // Every entry but those of the modules a start loads only once it runs (the recording started the server).
    if (!use || use.rejected > 0 || use.accepted < entries * 0.9) {
      problems.push(`code cache for ${start}: not taken: ${child.stdout}${child.stderr}`);
      continue;
    }
    console.log(`code cache for ${start}: ${entries} modules, written for this installation and build; V8 took ${use.accepted}`);
  }
  return problems.length > 0 ? problems.join('\n') : null;
}

/** In the child: the server's modules loaded as its start loads them; prints what the code cache did. */
function useCodeCache() {
  require(dist('server/module-map-install.js'));
  const use = require(dist('server/code-cache.js')).useCodeCache(ROOT);
  require(dist('server/serve.js'));
  console.log(JSON.stringify(use));
}

if (process.argv.includes('--check')) {
  const problems = [check(), checkCodeCache()].filter((problem) => problem !== null);
  for (const problem of problems) console.error(problem);
  process.exit(problems.length > 0 ? 1 : 0);
}
if (process.argv.includes('--use-code-cache')) {
  useCodeCache();
  process.exit(0);
}
if (process.argv.includes('--record-code-cache')) {
  recordCodeCache().then(
    () => process.exit(0),
    (error) => {
      console.warn(`code cache not recorded: ${error.message}`);
      process.exit(1);
    },
  );
} else {
  write();
  writeCodeCache();
  // The modules loaded above may hold handles (a pool, a timer): the work is done.
  process.exit(0);
}
