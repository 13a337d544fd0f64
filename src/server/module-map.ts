import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import NodeModule from 'node:module';
import * as path from 'node:path';

/**
 * Where each `require` of the server's start-up leads, written at build time (`npm run build`, the Docker image)
 * and read at start, so that Node.js does not search for the same ~2 100 files again at every start.
 *
 * Resolving a module name is file-system work: for a bare name, Node.js looks for `node_modules` in each parent
 * directory, reads `package.json` files and their `exports`, and asks for the real path of what it finds. At start
 * Anvil loads about 2 100 modules, and that search took a fifth of the start (measured on the 2-core machine:
 * 1.93 against 1.58 s, median of three starts each, alternating). Node.js 20 keeps no such cache between runs.
 *
 * The map is exact for the installation it was written for, and only for it: it carries a fingerprint of the
 * Node.js version, the installed packages (npm's `node_modules/.package-lock.json`, rewritten by every install and
 * prune) and the build (the TypeScript compiler's record of it, `dist/.tsbuildinfo-build`, which changes with any
 * source), and a map whose fingerprint differs is ignored.
 * Paths are kept relative to the project, so a moved checkout keeps it. A name the map does not hold, or one asked
 * with options (`require.resolve(name, { paths })`), is resolved by Node.js as usual.
 */
export const MODULE_MAP_FILE = path.join('dist', 'module-map.json');

export interface ModuleMap {
  fingerprint: string;
  /** `<directory of the requiring module>\0<request>` → the file it resolved to, both relative to the project. */
  entries: Record<string, string>;
}

type Resolve = (this: unknown, request: string, parent: { path?: string } | null | undefined, isMain: boolean, options?: unknown) => string;
// The loader itself (a default import: a namespace import would be a copy, and patching it would change nothing).
const loader = NodeModule as unknown as { _resolveFilename: Resolve };

/** The installation the map is for (null when the project has no installed packages or no build). */
export function moduleMapFingerprint(root: string): string | null {
  try {
    const packages = fs.readFileSync(path.join(root, 'node_modules', '.package-lock.json'));
    const build = fs.readFileSync(path.join(root, 'dist', '.tsbuildinfo-build'));
    return createHash('sha256').update(`${process.version}\0${process.arch}\0${packages.length}\0`).update(packages).update(build).digest('hex');
  } catch {
    return null;
  }
}

/** Runs `load` and returns where each module name it required (inside the project) resolved to. */
export function recordModuleMap(root: string, load: () => void): ModuleMap {
  const fingerprint = moduleMapFingerprint(root);
  if (fingerprint === null) throw new Error(`no installed packages or no build under ${root}`);
  const entries: Record<string, string> = {};
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function record(request, parent, isMain, options) {
    const file = resolve.call(this, request, parent, isMain, options);
    if (options === undefined && parent?.path && path.isAbsolute(file) && within(root, parent.path) && within(root, file)) {
      entries[`${path.relative(root, parent.path)}\0${request}`] = path.relative(root, file);
    }
    return file;
  };
  try {
    load();
  } finally {
    loader._resolveFilename = resolve;
  }
  return { fingerprint, entries };
}

/** The project's map when it is one and was written for this installation and build, else null. */
export function readModuleMap(root: string): ModuleMap | null {
  let map: ModuleMap;
  try {
    map = JSON.parse(fs.readFileSync(path.join(root, MODULE_MAP_FILE), 'utf8')) as ModuleMap;
  } catch {
    return null;
  }
  if (typeof map?.fingerprint !== 'string' || typeof map.entries !== 'object' || map.entries === null) return null;
  return map.fingerprint === moduleMapFingerprint(root) ? map : null;
}

/**
 * Answers module names from the project's map when it was written for this installation; true when it was.
 * Call it before anything else is required.
 */
export function useModuleMap(projectRoot: string): boolean {
  const root = path.resolve(projectRoot);
  const map = readModuleMap(root);
  if (!map) return false;
  const known = new Map<string, string>();
  // The recorded paths are path.relative's (normalised; '' for the project itself): joined by hand, which is
  // several times cheaper than path.join for the ~4 000 entries.
  const prefix = root.endsWith(path.sep) ? root : `${root}${path.sep}`;
  const under = (relative: string) => (relative === '' ? root : `${prefix}${relative}`);
  for (const [key, file] of Object.entries(map.entries)) {
    const separator = key.indexOf('\0');
    if (separator < 0 || typeof file !== 'string') return false;
    known.set(`${under(key.slice(0, separator))}\0${key.slice(separator + 1)}`, under(file));
  }
  const resolve = loader._resolveFilename;
  loader._resolveFilename = function mapped(request, parent, isMain, options) {
    if (options === undefined && parent?.path !== undefined) {
      const file = known.get(`${parent.path}\0${request}`);
      if (file !== undefined) return file;
    }
    return resolve.call(this, request, parent, isMain, options);
  };
  return true;
}

function within(root: string, file: string): boolean {
  const relative = path.relative(root, file);
  return relative !== '' && !relative.startsWith('..') && !path.isAbsolute(relative);
}
