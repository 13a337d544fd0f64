#!/usr/bin/env node
// The last step of `npm run build` (and of the Docker image, after its packages are pruned): loads the server's
// and the CLI's modules as their start does and writes where each require led to dist/module-map.json
// (src/server/module-map.ts). Without it the server starts as before, only slower; so a failure here is reported
// and does not fail the build.
//
// `--check` (CI) instead checks the map that is there: that it is written for this installation and build, and that
// Node.js resolves every one of its requires to the same file. Exit 1 when not.
'use strict';
const fs = require('node:fs');
const Module = require('node:module');
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

if (process.argv.includes('--check')) {
  const problem = check();
  if (problem) console.error(problem);
  process.exit(problem ? 1 : 0);
}
write();
// The modules loaded above may hold handles (a pool, a timer): the work is done.
process.exit(0);
