import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';

/** Runs system git against a bare repository, with a clean environment, for checks on disk. */
export function git(gitDir: string, ...args: string[]): string {
  return execFileSync('git', [`--git-dir=${gitDir}`, ...args], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', HOME: '/nonexistent' },
  });
}

/**
 * Where a repository lives: `DATA_DIR/repositories/<owner>/<name>.git`, both lowercased.
 * Written out here rather than imported from src/, so the tests check the rule, not the code's own idea of it.
 */
export function repositoryDir(dataDir: string, owner: string, name: string): string {
  return path.join(dataDir, 'repositories', owner.toLowerCase(), `${name.toLowerCase()}.git`);
}

/** Bytes of the regular files under `dir`, walked here independently of the code (the git size quota counts). */
export function regularFileBytes(dir: string, from = ''): number {
  let total = 0;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    // The commit graph is a cache written after pushes, in the background, and refs/pull/ the server's refs of
    // pull request heads: not part of a repository's size.
    if (/^commit-graphs?$/.test(entry.name) || entry.name.startsWith('tmp_graph_') || `${from}${entry.name}` === 'refs/pull') continue;
    const child = path.join(dir, entry.name);
    if (entry.isDirectory()) total += regularFileBytes(child, `${from}${entry.name}/`);
    else if (entry.isFile()) total += fs.lstatSync(child).size;
  }
  return total;
}
