import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { TS_NODE, writeFiles } from '../../test/support/node-project';
import { codeCacheFile } from './code-cache';

/**
 * Jest loads modules through its own runtime, not Node.js's loader, so each case runs in a child `node` process
 * (this module through ts-node) against a small project: a build under dist/ whose modules use what Node.js's
 * loader gives a module (relative and package requires, `require.resolve`, `__dirname`, `module`, `exports`,
 * a dynamic `import()`), an ES module, and an installed package.
 */
const CODE_CACHE = require.resolve('./code-cache');
/** The flags of the child processes, which key the cache. */
const FLAGS = ['-r', TS_NODE];

function project(): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-code-cache-'));
  writeFiles(root, {
    'node_modules/.package-lock.json': '{"name":"fixture","lockfileVersion":3,"packages":{"node_modules/pkg":{"version":"1.0.0"}}}',
    'node_modules/pkg/package.json': '{"name":"pkg","version":"1.0.0","main":"main.js"}',
    'node_modules/pkg/main.js': "exports.name = 'pkg';",
    'dist/.tsbuildinfo-build': '{"version":"5"}',
    'dist/src/main.js': [
      "const feature = require('./feature');",
      "exports.parts = [feature.word(), require('pkg').name, path(require.resolve('./feature')), path(__dirname), path(module.filename)];",
      "exports.esm = require('./lazy');",
      'exports.sameExports = this === exports && module.exports === exports;',
      'function path(p) { return p.slice(process.env.ROOT.length); }',
    ].join('\n'),
    'dist/src/feature.js': "module.exports = { word: () => 'feature' };",
    'dist/src/lazy.js': "module.exports = () => import('./esm.mjs').then((m) => m.word);",
    'dist/src/esm.mjs': "export const word = 'esm';",
  });
  return fs.realpathSync(root);
}

/**
 * Loads the build in a child process after `setup` (code-cache.ts is `cache`, the project `root`); prints what
 * the build's main gives and `use`, when the setup sets it.
 */
function run(root: string, setup: string): { parts: string[]; esm: string; sameExports: boolean; use?: unknown; files?: number } {
  const program = [
    `const cache = require(${JSON.stringify(CODE_CACHE)}); const root = ${JSON.stringify(root)}; let use; let files;`,
    setup,
    "const main = require(root + '/dist/src/main.js');",
    'main.esm().then((esm) => console.log(JSON.stringify({ parts: main.parts, esm, sameExports: main.sameExports, use, files: files?.() })));',
  ].join('\n');
  return JSON.parse(node(FLAGS, program, root)) as ReturnType<typeof run>;
}

/** Runs `program` from a file outside the project (`node -e` would make the program text one of the flags). */
function node(flags: string[], program: string, root: string): string {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-code-cache-program-'));
  try {
    fs.writeFileSync(path.join(directory, 'program.js'), program);
    const env = { ...process.env, TS_NODE_TRANSPILE_ONLY: 'true', ROOT: root };
    return execFileSync(process.execPath, [...flags, path.join(directory, 'program.js')], { encoding: 'utf8', env }).trim();
  } finally {
    fs.rmSync(directory, { recursive: true, force: true });
  }
}

const RECORD = 'const recorder = cache.recordCodeCache(root); files = () => recorder.write();';
const USE = 'use = cache.useCodeCache(root);';
const LOADED = { parts: ['feature', 'pkg', '/dist/src/feature.js', '/dist/src', '/dist/src/main.js'], esm: 'esm', sameExports: true };

describe('code cache', () => {
  let root: string;
  beforeEach(() => {
    root = project();
  });
  afterEach(() => {
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('records the CommonJS modules inside the project, and they run from it as Node.js runs them', () => {
    expect(run(root, '')).toEqual(LOADED);
    // main.js, feature.js and the package's main.js: not lazy.js (its dynamic import needs Node.js's loader), not
    // the ES module, nor this process's own files.
    expect(run(root, RECORD)).toEqual({ ...LOADED, files: 3 });
    expect(fs.statSync(path.join(root, codeCacheFile(FLAGS))).mode & 0o777).toBe(0o644);
    expect(fs.statSync(path.dirname(path.join(root, codeCacheFile(FLAGS)))).mode & 0o777).toBe(0o755);
    expect(run(root, USE)).toEqual({ ...LOADED, use: { accepted: 3, rejected: 0, missing: 1 } });
  });

  it('gives the loader back its own compile once released: later modules load as Node.js loads them', () => {
    run(root, RECORD);
    expect(run(root, `${USE} cache.releaseCodeCache(); cache.releaseCodeCache();`)).toEqual({ ...LOADED, use: { accepted: 0, rejected: 0, missing: 0 } });
  });

  it('leaves to Node.js a file that changed since, even to a text of the same length, and one it has no entry for', () => {
    run(root, RECORD);
    // V8 would take the old code for this one: it compares only lengths.
    fs.writeFileSync(path.join(root, 'dist', 'src', 'feature.js'), "module.exports = { word: () => 'changed' };");
    fs.writeFileSync(path.join(root, 'node_modules', 'pkg', 'main.js'), "exports.name = require('./more');");
    fs.writeFileSync(path.join(root, 'node_modules', 'pkg', 'more.js'), "module.exports = 'more';");
    expect(run(root, USE)).toEqual({
      ...LOADED,
      parts: ['changed', 'more', ...LOADED.parts.slice(2)],
      use: { accepted: 1, rejected: 0, missing: 4 },
    });
  });

  it('keeps one cache per set of Node.js flags: another set finds none, and V8 refuses one made under other flags', () => {
    run(root, RECORD);
    const program = `const use = require(${JSON.stringify(CODE_CACHE)}).useCodeCache(process.env.ROOT); require(process.env.ROOT + '/dist/src/main.js'); console.log(JSON.stringify(use));`;
    const other = ['--max-semi-space-size=24', ...FLAGS];
    expect(codeCacheFile(other)).not.toBe(codeCacheFile(FLAGS));
    expect(JSON.parse(node(other, program, root))).toBeNull();
    // Named as if made under those flags: V8 sees the difference, refuses every entry, and the modules still run.
    fs.copyFileSync(path.join(root, codeCacheFile(FLAGS)), path.join(root, codeCacheFile(other)));
    expect(JSON.parse(node(other, program, root))).toEqual({ accepted: 0, rejected: 3, missing: 1 });
  });

  it('ignores a cache written for other installed packages or an older build', () => {
    run(root, RECORD);
    fs.appendFileSync(path.join(root, 'dist', '.tsbuildinfo-build'), '\n');
    expect(run(root, USE)).toEqual({ ...LOADED, use: null });
    run(root, RECORD);
    fs.appendFileSync(path.join(root, 'node_modules', '.package-lock.json'), '\n');
    expect(run(root, USE)).toEqual({ ...LOADED, use: null });
  });

  it('starts without a cache when there is none or it is not one', () => {
    expect(run(root, USE)).toEqual({ ...LOADED, use: null });
    for (const bytes of [Buffer.alloc(0), Buffer.from('\0\0\0\x05{"a":'), Buffer.from('\0\0\0\x04null'), Buffer.from('\xff\xff\xff\xffx')]) {
      fs.mkdirSync(path.dirname(path.join(root, codeCacheFile(FLAGS))), { recursive: true });
      fs.writeFileSync(path.join(root, codeCacheFile(FLAGS)), bytes);
      expect(run(root, USE)).toEqual({ ...LOADED, use: null });
    }
  });
});
