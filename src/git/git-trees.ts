import { forwardRef, Inject, Injectable } from '@nestjs/common';
import { GitCommand, GitStream } from './git-command';
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

/** A ref and what it points at, with the commit it peels to. */
export interface RefInfo {
  /** Full name (`refs/heads/main`). */
  ref: string;
  /** What the ref holds: a commit, or an annotated tag object. */
  oid: string;
  objectType: string;
  /** The commit it peels to. */
  commit: CommitHeader;
  /** Annotated tags only. */
  tag?: { message: string; taggerName: string; taggerEmail: string; taggerDate: string };
}

export interface CommitHeader {
  oid: string;
  tree: string;
  parents: string[];
  authorName: string;
  authorEmail: string;
  /** Strict ISO 8601 with the commit's own offset. */
  authorDate: string;
  committerName: string;
  committerEmail: string;
  committerDate: string;
  message: string;
}

/** What one commit changed against its first parent. */
export interface CommitChange {
  path: string;
  /** A added, M modified, D deleted, T type changed. */
  status: string;
  additions: number;
  deletions: number;
}

export interface CommitWithChanges extends CommitHeader {
  changes: CommitChange[] | null;
}

export interface LogQuery {
  /** Path limiting (`-- path`). */
  path?: string;
  since?: string;
  until?: string;
  skip: number;
  limit: number;
  /** Read the changed files and line counts as well. */
  withChanges: boolean;
}

const FIELD = '\x02';
const RECORD = '\x01';
/** Paths callers give are names, never pathspec magic or globs. */
const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };
const COMMIT_FORMAT = `${RECORD}%H${FIELD}%T${FIELD}%P${FIELD}%an${FIELD}%ae${FIELD}%aI${FIELD}%cn${FIELD}%ce${FIELD}%cI${FIELD}%B${FIELD}`;

/** Revisions given by callers: never an option, never a range or revision expression beyond a plain name. */
export function isPlainRevision(revision: string): boolean {
  return revision !== '' && !revision.startsWith('-') && !/[\x00-\x20\x7f~^:?*[\\]|\.\.|@\{/.test(revision);
}

/**
 * Reading a bare repository with plumbing: refs, trees, blobs and history. Every call goes through GitCommand
 * (time limit, clean environment); callers hold a process slot around them.
 */
@Injectable()
export class GitTrees {
  constructor(
    private readonly git: GitCommand,
    // git-tree-budget reaches this file back through git-objects: resolved lazily, the class is defined by then.
    @Inject(forwardRef(() => GitTreeBudget)) private readonly budget: GitTreeBudget,
  ) {}

  /** The commit `revision` names (branch, tag, full or short id), or null. */
  async resolveCommit(dir: string, revision: string): Promise<string | null> {
    if (!isPlainRevision(revision)) return null;
    const result = await this.git.probe(['rev-parse', '--verify', '--quiet', '--end-of-options', `${revision}^{commit}`], { gitDir: dir });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /**
   * The commits that the given full ref names peel to, for those that exist, in one call (refs that name
   * trees or blobs are left out).
   */
  async peelRefs(dir: string, refs: string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (refs.length === 0) return found;
    const output = await this.git.run(['for-each-ref', `--format=%(refname)${FIELD}%(objecttype)${FIELD}%(objectname)${FIELD}%(*objecttype)${FIELD}%(*objectname)`, ...refs], { gitDir: dir });
    const wanted = new Set(refs);
    for (const line of output.split('\n')) {
      const [ref, type, oid, peeledType, peeled] = line.split(FIELD);
      if (!wanted.has(ref)) continue;
      if (type === 'commit') found.set(ref, oid);
      else if (type === 'tag' && peeledType === 'commit') found.set(ref, peeled);
    }
    return found;
  }

  /** RefLookup.peelFirst, with one command for all the refs. */
  async peelFirst(dir: string, refs: string[]): Promise<{ ref: string; commit: string } | null> {
    const found = await this.peelRefs(dir, refs);
    const ref = refs.find((name) => found.has(name));
    return ref === undefined ? null : { ref, commit: found.get(ref)! };
  }

  /** Refs under `prefix` (`refs/heads/`, `refs/tags/`), with the commit each peels to, in one call. */
  async refs(dir: string, prefix: string, sort = 'refname'): Promise<RefInfo[]> {
    const fields = [
      '%(refname)', '%(objectname)', '%(objecttype)', '%(*objectname)',
      '%(contents)', '%(taggername)', '%(taggeremail:trim)', '%(taggerdate:iso-strict)',
    ];
    const output = await this.git.run(['for-each-ref', `--sort=${sort}`, `--format=${RECORD}${fields.join(FIELD)}`, prefix], { gitDir: dir });
    const rows = output.split(RECORD).filter((row) => row !== '').map((row) => row.split(FIELD));
    const commitIds = rows.map(([, oid, type, peeled]) => (type === 'tag' ? peeled : oid));
    const commits = await this.commits(dir, commitIds.filter((oid) => oid !== ''));
    const result: RefInfo[] = [];
    rows.forEach(([ref, oid, objectType, , contents, taggerName, taggerEmail, taggerDate], index) => {
      const commit = commits.get(commitIds[index]);
      // Tags of trees or blobs have no commit to show.
      if (!commit) return;
      const info: RefInfo = { ref, oid, objectType, commit };
      if (objectType === 'tag') info.tag = { message: contents, taggerName, taggerEmail, taggerDate: taggerDate.trim() };
      result.push(info);
    });
    return result;
  }

  /** The headers of the given commits, read in one call. */
  async commits(dir: string, oids: string[]): Promise<Map<string, CommitHeader>> {
    const unique = [...new Set(oids)];
    if (unique.length === 0) return new Map();
    const output = await this.git.run(['log', '--no-walk=unsorted', '--stdin', `--format=${COMMIT_FORMAT}`], { gitDir: dir, input: unique.join('\n') + '\n' });
    return new Map(parseLog(output, false).map((commit) => [commit.oid, commit]));
  }

  /** One commit with its changes against the first parent. */
  async commit(dir: string, oid: string, withChanges: boolean): Promise<CommitWithChanges | null> {
    const [commit] = await this.log(dir, oid, { skip: 0, limit: 1, withChanges });
    return commit ?? null;
  }

  /** How many commits `log` would walk for this query, in one walk (`rev-list --count`). */
  async count(dir: string, head: string, query: Pick<LogQuery, 'path' | 'since' | 'until'>): Promise<number> {
    const args = ['rev-list', '--count', ...historyFilters(query), head];
    if (query.path) args.push('--', query.path);
    return Number((await this.git.run(args, { gitDir: dir, env: LITERAL })).trim());
  }

  /**
   * A page of history from `head`, newest first, in one call. With the changes of each commit, the trees of the
   * page's commits and of their first parents are measured first (GitTreeBudget): git computes a commit's whole
   * diff before it writes any of it, so only a count made beforehand can refuse a diff of billions of paths.
   */
  async log(dir: string, head: string, query: LogQuery): Promise<CommitWithChanges[]> {
    const page = [`--skip=${query.skip}`, `--max-count=${query.limit}`, ...historyFilters(query), head, ...(query.path ? ['--', query.path] : [])];
    if (query.withChanges) {
      const listed = (await this.git.run(['log', '--format=%H %P', ...page], { gitDir: dir, env: LITERAL })).split(/\s+/);
      await this.budget.assertWithin(dir, listed.filter((oid) => oid !== ''));
    }
    const args = ['log', `--format=${COMMIT_FORMAT}`];
    if (query.withChanges) args.push('-z', '--no-renames', '--raw', '--numstat', '--diff-merges=first-parent');
    args.push(...page);
    return parseLog(await this.git.run(args, { gitDir: dir, env: LITERAL }), query.withChanges);
  }

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

function historyFilters(query: Pick<LogQuery, 'since' | 'until'>): string[] {
  const filters: string[] = [];
  if (query.since) filters.push(`--since=${query.since}`);
  if (query.until) filters.push(`--until=${query.until}`);
  return filters;
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

/** Parses COMMIT_FORMAT records, each optionally followed by `-z --raw --numstat` output. */
function parseLog(output: string, withChanges: boolean): CommitWithChanges[] {
  return output
    .split(RECORD)
    .filter((record) => record !== '')
    .map((record) => {
      const fields = record.split(FIELD);
      const [oid, tree, parents, authorName, authorEmail, authorDate, committerName, committerEmail, committerDate, message] = fields;
      const rest = fields.slice(10).join(FIELD);
      return {
        oid,
        tree,
        parents: parents === '' ? [] : parents.split(' '),
        authorName,
        authorEmail,
        authorDate,
        committerName,
        committerEmail,
        committerDate,
        message,
        changes: withChanges ? parseChanges(rest) : null,
      };
    });
}

function parseChanges(output: string): CommitChange[] {
  const tokens = output.split('\0').map((token) => token.replace(/^\n/, ''));
  const changes = new Map<string, CommitChange>();
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index];
    if (token.startsWith(':')) {
      const status = token.split(' ').pop() ?? 'M';
      const path = tokens[++index];
      changes.set(path, { path, status: status[0], additions: 0, deletions: 0 });
    } else if (/^(\d+|-)\t(\d+|-)\t/.test(token)) {
      const [additions, deletions, ...pathParts] = token.split('\t');
      const change = changes.get(pathParts.join('\t'));
      if (change) {
        change.additions = additions === '-' ? 0 : Number(additions);
        change.deletions = deletions === '-' ? 0 : Number(deletions);
      }
    }
  }
  return [...changes.values()];
}
