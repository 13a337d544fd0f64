import { forwardRef, Inject, Injectable } from '@nestjs/common';
import { GitCommand, GitStream } from './git-command';
import { LITERAL, RECORD } from './git-format';
import { GitTreeBudget } from './git-tree-budget';

/** One entry of a tree as `ls-tree --long` gives it. */
export interface TreeEntry {
  /** Octal mode: 100644, 100755, 120000 (symlink), 040000 (tree), 160000 (submodule commit). */
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  oid: string;
  /** Bytes of a blob; 0 for trees and submodules. */
  size: number;
  /** The path from the root of the tree. */
  path: string;
}

/**
 * Reading trees and blobs with plumbing: entries, listings, submodules, blobs, archives, and the last commit of
 * paths. Every call goes through GitCommand (time limit, clean environment); callers hold a process slot around
 * them.
 */
@Injectable()
export class GitTrees {
  constructor(
    private readonly git: GitCommand,
    // Resolved lazily, so that no order of loading the git files (a test may load git-tree-budget first) leaves it
    // undefined when this class is decorated.
    @Inject(forwardRef(() => GitTreeBudget)) private readonly budget: GitTreeBudget,
  ) {}

  /** The entry at `path` in `commit`, or null; the empty path is the root tree. */
  async entry(dir: string, commit: string, path: string): Promise<TreeEntry | null> {
    if (path === '') {
      const tree = (await this.git.run(['rev-parse', `${commit}^{tree}`], { gitDir: dir })).trim();
      return { mode: '040000', type: 'tree', oid: tree, size: 0, path: '' };
    }
    const entries = parseTree(await this.git.run(['ls-tree', '-z', '--long', '--full-tree', commit, '--', path], { gitDir: dir, env: LITERAL }));
    return entries.find((entry) => entry.path === path) ?? null;
  }

  /** The entries directly inside the directory `path` of `commit`, in git's order. */
  async list(dir: string, commit: string, path: string): Promise<TreeEntry[]> {
    const args = ['ls-tree', '-z', '--long', '--full-tree', commit];
    if (path !== '') args.push('--', `${path}/`);
    return parseTree(await this.git.run(args, { gitDir: dir, env: LITERAL }));
  }

  /** The entries at each of `paths` in `commit` that exist, in one call. */
  async entries(dir: string, commit: string, paths: string[]): Promise<Map<string, TreeEntry>> {
    if (paths.length === 0) return new Map();
    const entries = parseTree(await this.git.run(['ls-tree', '-z', '--long', '--full-tree', commit, '--', ...paths], { gitDir: dir, env: LITERAL }));
    const wanted = new Set(paths);
    return new Map(entries.filter((entry) => wanted.has(entry.path)).map((entry) => [entry.path, entry]));
  }

  /** The URLs of the submodules `.gitmodules` declares at `commit`, by path. */
  async submoduleUrls(dir: string, commit: string): Promise<Map<string, string>> {
    const result = await this.git.probe(['config', '-z', '--blob', `${commit}:.gitmodules`, '--get-regexp', '^submodule\\..*\\.(path|url)$'], { gitDir: dir });
    const byName = new Map<string, { path?: string; url?: string }>();
    if (result.exitCode !== 0) return new Map();
    for (const item of result.stdout.split('\0')) {
      const newline = item.indexOf('\n');
      if (newline < 0) continue;
      const key = item.slice(0, newline);
      const value = item.slice(newline + 1);
      const match = /^submodule\.(.*)\.(path|url)$/.exec(key);
      if (!match) continue;
      const entry = byName.get(match[1]) ?? {};
      entry[match[2] as 'path' | 'url'] = value;
      byName.set(match[1], entry);
    }
    const urls = new Map<string, string>();
    for (const entry of byName.values()) if (entry.path && entry.url) urls.set(entry.path, entry.url);
    return urls;
  }

  async blob(dir: string, oid: string): Promise<Buffer> {
    return this.git.runBuffer(['cat-file', 'blob', oid], { gitDir: dir });
  }

  /** A blob as a stream, for raw downloads. */
  streamBlob(dir: string, oid: string): GitStream {
    return this.git.stream(['cat-file', 'blob', oid], { gitDir: dir });
  }

  /** `git archive` of a commit as a stream, every file under `prefix/`. */
  streamArchive(dir: string, commit: string, format: 'zip' | 'tar.gz', prefix: string): GitStream {
    return this.git.stream(['archive', `--format=${format}`, `--prefix=${prefix}/`, commit], { gitDir: dir });
  }

  /**
   * Whether the files of `commit`'s tree stay within `budget` (how many, how many bytes in all), counted from
   * a streamed `ls-tree -r` that is stopped as soon as there are too many: a tree of a few kilobytes can expand
   * to billions of paths (or name one large blob thousands of times), and only counting says so (git itself
   * would write such an archive for hours).
   */
  async withinBudget(dir: string, commit: string, budget: { entries: number; bytes: number }): Promise<boolean> {
    // Without --long: asking each entry's size reads each object again (100 times slower on loose objects);
    // the sizes of the distinct blobs are asked once afterwards.
    const stream = this.git.stream(['ls-tree', '-r', '-z', '--full-tree', commit], { gitDir: dir });
    const blobs = new Map<string, number>();
    let entries = 0;
    let pending = '';
    let within = true;
    try {
      for await (const chunk of stream.stdout) {
        pending += (chunk as Buffer).toString('latin1');
        const lines = pending.split('\0');
        pending = lines.pop() ?? '';
        for (const line of lines) {
          entries += 1;
          const blob = /^\S+ blob (\S+)\t/.exec(line);
          if (blob) blobs.set(blob[1], (blobs.get(blob[1]) ?? 0) + 1);
        }
        if (entries > budget.entries) {
          within = false;
          break;
        }
      }
    } finally {
      if (!within) stream.kill();
    }
    await stream.exited;
    if (!within || blobs.size === 0) return within;
    const sizes = await this.git.run(['cat-file', '--batch-check=%(objectname) %(objectsize)'], { gitDir: dir, input: `${[...blobs.keys()].join('\n')}\n` });
    let bytes = 0;
    for (const line of sizes.split('\n')) {
      const [oid, size] = line.split(' ');
      if (oid && size && /^\d+$/.test(size)) bytes += Number(size) * (blobs.get(oid) ?? 0);
    }
    return bytes <= budget.bytes;
  }

  /**
   * The last commit that touched `path` (or the whole tree) from `commit`. Started through the launcher: run for
   * most `contents` answers, it would otherwise fork the whole server each time (git-launcher.ts).
   */
  async lastCommit(dir: string, commit: string, path: string): Promise<string> {
    const args = ['log', '-1', '--format=%H', commit];
    if (path !== '') args.push('--', path);
    return (await this.git.run(args, { gitDir: dir, env: LITERAL, offload: true })).trim();
  }

  /**
   * The last commit of each of `names` (entries of the directory `path`) in one walk of history: git reports
   * the files each commit changed, and the walk stops once every name has been seen.
   */
  async lastCommits(dir: string, commit: string, path: string, names: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (names.length === 0) return found;
    // A root commit's diff is its whole tree, produced in full before the walk reads a name of it.
    await this.budget.assertWithin(dir, [commit]);
    const wanted = new Set(names);
    const prefix = path === '' ? '' : `${path}/`;
    const args = ['log', '-z', '--format=%x01%H', '--name-only', '--no-renames', '--diff-merges=first-parent', commit];
    if (path !== '') args.push('--', path);
    const stream = this.git.stream(args, { gitDir: dir, env: LITERAL });
    let pending = '';
    let current = '';
    const consume = (token: string) => {
      const start = token.indexOf(RECORD);
      if (start >= 0) {
        current = token.slice(start + 1).trim();
        return;
      }
      const file = token.replace(/^\n/, '');
      if (!file.startsWith(prefix)) return;
      const name = file.slice(prefix.length).split('/')[0];
      if (wanted.has(name) && !found.has(name)) found.set(name, current);
    };
    for await (const chunk of stream.stdout) {
      pending += (chunk as Buffer).toString('utf8');
      const tokens = pending.split('\0');
      pending = tokens.pop() ?? '';
      tokens.forEach(consume);
      if (found.size === wanted.size) {
        stream.kill();
        break;
      }
    }
    if (pending !== '') consume(pending);
    await stream.exited;
    return found;
  }
}

function parseTree(output: string): TreeEntry[] {
  return output
    .split('\0')
    .filter((line) => line !== '')
    .map((line) => {
      const tab = line.indexOf('\t');
      const [mode, type, oid, size] = line.slice(0, tab).split(/ +/);
      return { mode, type: type as TreeEntry['type'], oid, size: size === '-' ? 0 : Number(size), path: line.slice(tab + 1) };
    });
}
