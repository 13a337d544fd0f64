import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * For unit tests of what Node.js's own loader does (the module map, the code cache): Jest loads modules through its
 * own runtime, so they run child `node` processes, with the sources through ts-node, against a small project.
 */
export const TS_NODE = require.resolve('ts-node/register/transpile-only');

/** Writes `files` (path relative to `root` → text) under `root`, making their directories. */
export function writeFiles(root: string, files: Record<string, string>): void {
  for (const [name, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, name)), { recursive: true });
    fs.writeFileSync(path.join(root, name), text);
  }
}
