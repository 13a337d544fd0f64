import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TS_NODE, writeFiles } from '../../test/support/node-project';
import type { ModuleMap } from './module-map';

/**
 * Jest loads modules through its own runtime, not Node.js's loader, so each case runs in a child `node` process
 * (this module through ts-node) against a small project: a build under dist/ that requires a file of its own and
 * an installed package, which requires a file of its own.
 */
const MODULE_MAP = require.resolve('./module-map');

function project(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-module-map-'));
  writeFiles(root, {
    'node_modules/.package-lock.json': '{"name":"fixture","lockfileVersion":3,"packages":{"node_modules/pkg":{"version":"1.0.0"}}}',
    'node_modules/pkg/package.json': '{"name":"pkg","version":"1.0.0","main":"lib/main.js"}',
    'node_modules/pkg/lib/main.js': "module.exports = 'pkg+' + require('./util');",
    'node_modules/pkg/lib/util.js': "module.exports = 'util';",
    'dist/.tsbuildinfo-build': '{"version":"5"}',
    'dist/src/main.js': "module.exports = require('./feature') + '|' + require('pkg') + '|' + require('node:path').sep;",
    'dist/src/feature/index.js': "module.exports = 'feature';",
    'dist/src/feature/decoy.js': "module.exports = 'decoy';",
  });
  return fs.realpathSync(root);
}

/** Runs `script` in a child process with `mapModule` (this module) and `root` defined; returns what it prints. */
function run(root: string, script: string): string {
  const program = `const mapModule = require(${JSON.stringify(MODULE_MAP)}); const root = ${JSON.stringify(root)};\n${script}`;
  return execFileSync(process.execPath, ['-r', TS_NODE, '-e', program], { encoding: 'utf8', env: { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true' } }).trim();
}

function record(root: string): ModuleMap {
  return JSON.parse(run(root, "console.log(JSON.stringify(mapModule.recordModuleMap(root, () => require(root + '/dist/src/main.js'))));")) as ModuleMap;
}

function saveMap(root: string, map: ModuleMap): void {
  fs.writeFileSync(path.join(root, 'dist', 'module-map.json'), JSON.stringify(map));
}

/** Loads the build with the map in use (when it is); prints whether it was, and what the build's main exports. */
const LOAD = "const used = mapModule.useModuleMap(root); console.log(JSON.stringify({ used, main: require(root + '/dist/src/main.js') }));";

describe('module map', () => {
  let root: string;
  beforeEach(() => {
    root = project();
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('records where each require inside the project led, relative to the project, and nothing of Node.js itself', () => {
    const map = record(root);
    expect(map.entries).toEqual({
      'dist/src\0./feature': 'dist/src/feature/index.js',
      'dist/src\0pkg': 'node_modules/pkg/lib/main.js',
      'node_modules/pkg/lib\0./util': 'node_modules/pkg/lib/util.js',
    });
    expect(map.fingerprint).toMatch(/^[0-9a-f]{64}$/);
  });

  it('answers requires from the map, and its answers are those Node.js gives', () => {
    const map = record(root);
    saveMap(root, map);
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: true, main: `feature|pkg+util|${path.sep}` });
    // Proof that the answer came from the map, not from a search: a map that says otherwise is followed.
    saveMap(root, { ...map, entries: { ...map.entries, 'dist/src\0./feature': 'dist/src/feature/decoy.js' } });
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: true, main: `decoy|pkg+util|${path.sep}` });
  });

  it('leaves a require with options (require.resolve with paths) to Node.js', () => {
    saveMap(root, { ...record(root), entries: { 'dist/src\0./feature': 'dist/src/feature/decoy.js' } });
    const script = "mapModule.useModuleMap(root); console.log(require.resolve('./feature', { paths: [root + '/dist/src'] }));";
    expect(run(root, script)).toBe(path.join(root, 'dist', 'src', 'feature', 'index.js'));
  });

  it('ignores a map written for other installed packages or an older build', () => {
    const tampered = (map: ModuleMap): ModuleMap => ({ ...map, entries: { ...map.entries, 'dist/src\0./feature': 'dist/src/feature/decoy.js' } });
    saveMap(root, tampered(record(root)));
    fs.appendFileSync(path.join(root, 'node_modules', '.package-lock.json'), '\n');
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: false, main: `feature|pkg+util|${path.sep}` });

    saveMap(root, tampered(record(root)));
    fs.appendFileSync(path.join(root, 'dist', '.tsbuildinfo-build'), '\n');
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: false, main: `feature|pkg+util|${path.sep}` });
  });

  it('keeps working when the project is moved', () => {
    saveMap(root, record(root));
    const moved = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-module-map-moved-')));
    try {
      fs.cpSync(root, moved, { recursive: true });
      fs.rmSync(root, { recursive: true, force: true });
      expect(JSON.parse(run(moved, LOAD))).toEqual({ used: true, main: `feature|pkg+util|${path.sep}` });
    } finally {
      fs.rmSync(moved, { recursive: true, force: true });
    }
  });

  it('starts without a map when there is none or it is not one', () => {
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: false, main: `feature|pkg+util|${path.sep}` });
    for (const text of ['{', '[]', '{"fingerprint":1,"entries":{}}', 'null']) {
      fs.writeFileSync(path.join(root, 'dist', 'module-map.json'), text);
      expect(JSON.parse(run(root, LOAD)).used).toBe(false);
    }
    const map = record(root);
    saveMap(root, { ...map, entries: { 'no separator': 'dist/src/feature/decoy.js' } });
    expect(JSON.parse(run(root, LOAD))).toEqual({ used: false, main: `feature|pkg+util|${path.sep}` });
  });
});
