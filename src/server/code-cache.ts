import { createHash, hash } from 'node:crypto';
import * as fs from 'node:fs';
import NodeModule from 'node:module';
import * as path from 'node:path';
import * as vm from 'node:vm';
import { moduleMapFingerprint } from './module-map';

/**
 * V8's compiled code for the server's start-up modules, written at build time (after the module map) and handed
 * back to V8 at start, so that the ~2 400 modules a start loads are not parsed and compiled again at every start.
 *
 * Compiling was a fifth of a start on the 2-core machine (Node.js 20 keeps no compile cache between runs; 22 has
 * `module.enableCompileCache`). The cache is recorded by a real start (a throwaway SQLite DATA_DIR, port 0, no SSH)
 * after it listens, so it holds the functions a start runs, not only the modules' top levels.
 *
 * Safe by construction: an entry is used only for the very source it was made from (its SHA-1 is kept: V8 itself
 * compares only lengths), and V8 refuses one made by another version of itself or under other flags (it then
 * compiles afresh); the file carries the module map's fingerprint (Node.js, installed packages, build) and is
 * ignored whole when that differs. Hashing a start's 12 MB of sources costs about 20 ms; compiling them, 300. Only CommonJS `.js` files inside the project
 * are compiled here; the rest (ES modules, JSON, files outside) goes to Node.js's own loader untouched.
 *
 * V8 keys its cache to the flags a process runs with, so there is one file per set of Node.js flags the build
 * recorded: `npm start`'s and none (`node dist/src/main.js`), named after them; a start under other flags finds
 * none and compiles as usual. A flag set at run time changes the key too: the server sets its heap growth only
 * once it listens (main.ts).
 *
 * File layout: a 4-byte big-endian header length, the header (JSON: fingerprint and, per file relative to the
 * project, the offset and length of its data after the header and its source's SHA-1), then the data.
 */
export function codeCacheFile(execArgv: readonly string[] = process.execArgv): string {
  const flags = createHash('sha256').update(JSON.stringify(execArgv)).digest('hex').slice(0, 16);
  return path.join('dist', 'code-cache', `${flags}.bin`);
}

interface Header {
  fingerprint: string;
  /** The Node.js flags it was recorded under, for whoever reads the file. */
  flags: readonly string[];
  entries: Record<string, [offset: number, length: number, source: string]>;
}

type Compile = (this: CompiledModule, content: string, filename: string, format?: string) => unknown;
interface CompiledModule {
  exports: unknown;
  require(id: string): unknown;
}
// The loader itself (a default import: a namespace import would be a copy, and patching it would change nothing).
const loader = NodeModule as unknown as {
  prototype: { _compile: Compile };
  wrap(content: string): string;
  _resolveFilename(request: string, parent: unknown, isMain: boolean, options?: unknown): string;
  _resolveLookupPaths(request: string, parent: unknown): string[] | null;
  _extensions: unknown;
  _cache: unknown;
};

/**
 * What a start with the cache did: entries V8 took, entries it refused (made by another V8 or under other flags:
 * compiled afresh), and the project's CommonJS files it had no entry for, or one for another source (loaded by
 * Node.js).
 */
export interface CodeCacheUse {
  accepted: number;
  rejected: number;
  missing: number;
}

/**
 * Compiles with `vm.Script` (handing V8 the data `cachedData(file)` gives) the CommonJS modules inside `root` that
 * `take(file, content)` accepts, and runs them as Node.js's loader does; `compiled` sees each script. The rest goes
 * to the loader's own compile. Returns that compile, to restore.
 */
function compileThroughV8(
  root: string,
  take: (file: string, content: string) => boolean,
  cachedData: (file: string) => Buffer | undefined,
  compiled: (file: string, script: vm.Script) => void,
): Compile {
  const original = loader.prototype._compile;
  const prefix = root.endsWith(path.sep) ? root : `${root}${path.sep}`;
  loader.prototype._compile = function compile(content, filename, format) {
    if (format === 'module' || !filename.endsWith('.js') || !filename.startsWith(prefix) || !take(filename, content)) {
      return original.call(this, content, filename, format);
    }
    let script: vm.Script;
    try {
      script = new vm.Script(loader.wrap(content), { filename, cachedData: cachedData(filename) });
    } catch {
      // Not a CommonJS script after all (ES module syntax in a .js file): Node.js detects and loads it.
      return original.call(this, content, filename, format);
    }
    compiled(filename, script);
    const wrapper = script.runInThisContext({ displayErrors: true }) as (...args: unknown[]) => unknown;
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename));
  };
  return original;
}

// A script compiled through `vm` has no loader for a dynamic `import()` (Node.js 20 offers one only as an
// experimental option, which does not survive the cache): a module that may hold one is left to Node.js. The test
// is on the text, so a mention in a comment leaves a module out too, which costs only its cache entry.
const DYNAMIC_IMPORT = /\bimport\s*\(/;

function sourceHash(content: string): string {
  return hash('sha1', content, 'base64');
}

/** The `require` a module sees, as Node.js's loader makes it. */
function requireFor(module: CompiledModule): NodeJS.Require {
  const require = ((id: string) => module.require(id)) as NodeJS.Require;
  require.resolve = Object.assign((request: string, options?: { paths?: string[] }) => loader._resolveFilename(request, module, false, options), {
    paths: (request: string) => loader._resolveLookupPaths(request, module),
  });
  require.main = process.mainModule;
  require.extensions = loader._extensions as NodeJS.RequireExtensions;
  require.cache = loader._cache as NodeJS.Dict<NodeJS.Module>;
  return require;
}

/**
 * Records the compiled code of every module loaded from now on; `write()` (once the start to record is done: the
 * functions it ran are then compiled too) writes the cache and returns how many files it holds.
 */
export function recordCodeCache(projectRoot: string): { write(): number } {
  const root = path.resolve(projectRoot);
  const fingerprint = moduleMapFingerprint(root);
  if (fingerprint === null) throw new Error(`no installed packages or no build under ${root}`);
  const scripts = new Map<string, { script: vm.Script; source: string }>();
  const sources = new Map<string, string>();
  compileThroughV8(
    root,
    (file, content) => {
      if (DYNAMIC_IMPORT.test(content)) return false;
      sources.set(file, sourceHash(content));
      return true;
    },
    () => undefined,
    (file, script) => scripts.set(file, { script, source: sources.get(file)! }),
  );
  return {
    write() {
      const header: Header = { fingerprint, flags: process.execArgv, entries: {} };
      const data: Buffer[] = [];
      let offset = 0;
      for (const [file, { script, source }] of scripts) {
        const code = script.createCachedData();
        header.entries[path.relative(root, file)] = [offset, code.length, source];
        data.push(code);
        offset += code.length;
      }
      const head = Buffer.from(JSON.stringify(header));
      const length = Buffer.alloc(4);
      length.writeUInt32BE(head.length);
      const target = path.join(root, codeCacheFile());
      fs.mkdirSync(path.dirname(target), { recursive: true });
      // Readable by the user the server runs as, whoever built it (a start may narrow the umask first).
      fs.chmodSync(path.dirname(target), 0o755);
      const temporary = `${target}.${process.pid}.tmp`;
      fs.writeFileSync(temporary, Buffer.concat([length, head, ...data]));
      fs.chmodSync(temporary, 0o644);
      fs.renameSync(temporary, target);
      return scripts.size;
    },
  };
}

/**
 * The cache's header and data when the project has one written for this installation, build and the flags given,
 * else null.
 */
function readCodeCache(root: string, execArgv?: readonly string[]): { header: Header; data: Buffer } | null {
  let file: Buffer;
  try {
    file = fs.readFileSync(path.join(root, codeCacheFile(execArgv)));
    const length = file.readUInt32BE(0);
    const header = JSON.parse(file.toString('utf8', 4, 4 + length)) as Header;
    if (typeof header?.fingerprint !== 'string' || typeof header.entries !== 'object' || header.entries === null) return null;
    return header.fingerprint === moduleMapFingerprint(root) ? { header, data: file.subarray(4 + length) } : null;
  } catch {
    return null;
  }
}

/** How many modules the cache for `execArgv` holds, when there is one for this installation and build. */
export function codeCacheSize(projectRoot: string, execArgv: readonly string[]): number | null {
  const cache = readCodeCache(path.resolve(projectRoot), execArgv);
  return cache && Object.keys(cache.header.entries).length;
}

/**
 * Hands V8 the project's cache when it was written for this installation and build; what it did so far, or null
 * when there is no such cache (Node.js then compiles as usual). Call it before the modules to load are required.
 */
export function useCodeCache(projectRoot: string): CodeCacheUse | null {
  const root = path.resolve(projectRoot);
  let cache = readCodeCache(root);
  if (!cache) return null;
  const use: CodeCacheUse = { accepted: 0, rejected: 0, missing: 0 };
  const prefix = `${root}${path.sep}`;
  const entryOf = (file: string) => {
    const entry = cache?.header.entries[file.slice(prefix.length)];
    return Array.isArray(entry) && entry[0] + entry[1] <= cache!.data.length ? entry : undefined;
  };
  const original = compileThroughV8(
    root,
    (file, content) => {
      // Only the sources the cache has data for: the recording chose them; a file new or changed since is Node.js's.
      if (entryOf(file)?.[2] === sourceHash(content)) return true;
      use.missing++;
      return false;
    },
    (file) => {
      const [offset, length] = entryOf(file)!;
      return cache!.data.subarray(offset, offset + length);
    },
    (_file, script) => {
      if (script.cachedDataRejected) use.rejected++;
      else use.accepted++;
    },
  );
  release = () => {
    loader.prototype._compile = original;
    cache = null;
    release = () => undefined;
  };
  return use;
}

let release = (): void => undefined;

/**
 * Gives the loader back its own compile and lets the cache go (its 8 MB): called once the start is over, when
 * what is still to load is what a start does not load.
 */
export function releaseCodeCache(): void {
  release();
}
