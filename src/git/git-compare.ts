import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { taggedName } from '../common/process-identity';
import { GitCommand, GitStream } from './git-command';
import { CommitWithChanges, GitCommits } from './git-commits';
import { LITERAL } from './git-format';
import { RepositoryPaths } from './repository-paths';

/** The outcome of merging two commits without a work tree. */
export interface MergeTest {
  /** The merged tree (with conflict markers where the merge conflicted). */
  tree: string;
  /** Paths the merge conflicts on; empty for a clean merge. */
  conflicts: string[];
}

/** One file changed between two commits, as `diff --raw --numstat` reports it. */
export interface ChangedPath {
  path: string;
  /** The old path of a rename or copy. */
  previousPath?: string;
  /** A added, M modified, D deleted, R renamed, C copied, T type changed. */
  status: string;
  additions: number;
  deletions: number;
}

/** Totals of a diff. */
export interface DiffTotals {
  files: number;
  additions: number;
  deletions: number;
}

/**
 * Comparing two commits of one repository with plumbing, for pull requests and the compare route: the merge
 * base, a test merge (`merge-tree --write-tree`, which needs no work tree), the commits of one side, the changed
 * files and the diff or patch text. Callers hold a process slot around each call.
 */
@Injectable()
export class GitCompare {
  constructor(
    private readonly git: GitCommand,
    private readonly history: GitCommits,
    private readonly paths: RepositoryPaths,
  ) {}

  /** The best common ancestor of two commits, or null when they share no history. */
  async mergeBase(dir: string, a: string, b: string): Promise<string | null> {
    const result = await this.git.probe(['merge-base', '--end-of-options', a, b], { gitDir: dir });
    if (result.exitCode === 0) return result.stdout.trim();
    if (result.exitCode === 1) return null;
    throw new Error(`git merge-base failed (exit ${result.exitCode})`);
  }

  /** Whether `ancestor` is reachable from `descendant` (or the same commit). */
  async isAncestor(dir: string, ancestor: string, descendant: string): Promise<boolean> {
    const result = await this.git.probe(['merge-base', '--is-ancestor', '--end-of-options', ancestor, descendant], { gitDir: dir });
    if (result.exitCode === 0) return true;
    if (result.exitCode === 1) return false;
    throw new Error(`git merge-base --is-ancestor failed (exit ${result.exitCode})`);
  }

  /**
   * What merging `theirs` into `ours` gives. The merged tree is written into a scratch object directory that
   * reads the repository's objects as its alternate, and goes with it: a test runs again after every push to
   * either branch (200 open pull requests into one branch, 200 tests per push), and writing into the repository
   * would leave loose objects that nothing references, which every later push then walks (its size is measured).
   */
  async testMerge(dir: string, ours: string, theirs: string): Promise<MergeTest> {
    const scratch = path.join(this.paths.gitIndexes(), taggedName(`merge-test-${randomBytes(8).toString('hex')}`));
    await fs.mkdir(scratch, { recursive: true });
    try {
      const result = await this.git.probe(['merge-tree', '--write-tree', '--name-only', '-z', '--no-messages', '--end-of-options', ours, theirs], {
        gitDir: dir,
        // Nothing in it outlives the test: no flush to disk either.
        env: { GIT_OBJECT_DIRECTORY: scratch, GIT_ALTERNATE_OBJECT_DIRECTORIES: path.resolve(dir, 'objects'), GIT_CONFIG_PARAMETERS: "'core.fsync'='none'" },
      });
      // 0: clean, 1: conflicts; anything else is a failure of the merge itself.
      if (result.exitCode !== 0 && result.exitCode !== 1) throw new Error(`git merge-tree failed (exit ${result.exitCode})`);
      const [tree, ...paths] = result.stdout.split('\0');
      const conflicts = result.exitCode === 1 ? [...new Set(paths.filter((name) => name !== ''))] : [];
      return { tree: tree.trim(), conflicts };
    } finally {
      await fs.rm(scratch, { recursive: true, force: true });
    }
  }

  /** The tree of a commit. */
  async treeOf(dir: string, commit: string): Promise<string | null> {
    const result = await this.git.probe(['rev-parse', '--verify', '--quiet', '--end-of-options', `${commit}^{tree}`], { gitDir: dir });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /** How many commits are reachable from `to` and not from `from`. */
  async countBetween(dir: string, from: string, to: string): Promise<number> {
    return Number((await this.git.run(['rev-list', '--count', `${from}..${to}`, '--'], { gitDir: dir })).trim());
  }

  /** A page of the commits reachable from `to` and not from `from`, newest first. */
  commitsBetween(dir: string, from: string, to: string, page: { skip: number; limit: number; withChanges: boolean }): Promise<CommitWithChanges[]> {
    return this.history.log(dir, `${from}..${to}`, page);
  }

  /** The files changed from `from` to `to`, renames found, with line counts. */
  async changedPaths(dir: string, from: string, to: string): Promise<ChangedPath[]> {
    const output = await this.git.run(['diff', '-z', '--raw', '--numstat', '-M', '--no-color', '--no-ext-diff', from, to, '--'], { gitDir: dir, env: LITERAL });
    return parseRawNumstat(output);
  }

  /** The totals of the diff from `from` to `to` (binary files count as changed with no lines). */
  async totals(dir: string, from: string, to: string): Promise<DiffTotals> {
    const output = await this.git.run(['diff', '-z', '--numstat', '--no-renames', '--no-color', '--no-ext-diff', from, to, '--'], { gitDir: dir });
    const totals: DiffTotals = { files: 0, additions: 0, deletions: 0 };
    for (const record of output.split('\0')) {
      const match = /^(\d+|-)\t(\d+|-)\t/.exec(record);
      if (!match) continue;
      totals.files += 1;
      totals.additions += match[1] === '-' ? 0 : Number(match[1]);
      totals.deletions += match[2] === '-' ? 0 : Number(match[2]);
    }
    return totals;
  }

  /**
   * The unified diff from `from` to `to` (binary changes too with `binary`), as `git diff` writes it, streamed:
   * a diff has no size bound, so it is never collected whole.
   */
  streamDiff(dir: string, from: string, to: string, binary: boolean): GitStream {
    return this.git.stream(['diff', '--full-index', ...(binary ? ['--binary'] : []), '-M', '--no-color', '--no-ext-diff', from, to, '--'], { gitDir: dir });
  }

  /** The unified diff of one file from `from` to `to` (renames found), as text; '' when the file did not change. */
  async fileDiff(dir: string, from: string, to: string, path: string): Promise<string> {
    return this.git.run(['diff', '-M', '--no-color', '--no-ext-diff', from, to, '--', path], { gitDir: dir, env: LITERAL });
  }

  /** The commit that last changed line `line` of `path` as of `revision`, or null when there is no such line. */
  async blameLine(dir: string, revision: string, path: string, line: number): Promise<string | null> {
    const result = await this.git.probe(['blame', '--porcelain', '-L', `${line},${line}`, revision, '--', path], { gitDir: dir, env: LITERAL });
    if (result.exitCode !== 0) return null;
    const match = /^([0-9a-f]{40,64}) /.exec(result.stdout);
    return match ? match[1] : null;
  }

  /**
   * Whether a head that moved from `oldHead` to `newHead` changed what the pull request proposes: a path differs
   * in the new head from both the old head and the merge base (a combined diff), so merging the base in or
   * rebasing the same change onto it does not count.
   */
  async contentChanged(dir: string, newHead: string, oldHead: string, mergeBase: string): Promise<boolean> {
    const output = await this.git.run(['diff', '--name-only', '-z', newHead, oldHead, mergeBase, '--'], { gitDir: dir });
    return output.replace(/\0/g, '') !== '';
  }

  /**
   * One commit as Forgejo's `git/commits/{sha}.diff` writes it: its diff against its first parent (renames found),
   * or, for a root commit, `git show` of it (its header and message, then the diff). `commit` and `parent` are ids.
   */
  streamCommitDiff(dir: string, commit: string, parent: string | undefined): GitStream {
    const args =
      parent === undefined ? ['show', '--no-color', '--no-ext-diff', commit, '--'] : ['diff', '-M', '--no-color', '--no-ext-diff', parent, commit, '--'];
    return this.git.stream(args, { gitDir: dir });
  }

  /**
   * `git/commits/{sha}.patch`: the mailbox of the commits that `commit` has and its first parent has not (the
   * commit alone, unless it is a merge), or of a root commit, without format-patch's signature line.
   */
  streamCommitPatch(dir: string, commit: string, parent: string | undefined): GitStream {
    const range = parent === undefined ? ['--root', commit] : [`${commit}...${parent}`];
    return this.git.stream(['format-patch', '--no-signature', '--stdout', '--no-color', ...range, '--'], { gitDir: dir });
  }

  /** The commits from `from` to `to` as a mailbox of patches (`format-patch --stdout`), oldest first, streamed. */
  streamPatch(dir: string, from: string, to: string, binary: boolean): GitStream {
    return this.git.stream(['format-patch', '--stdout', '--full-index', ...(binary ? ['--binary'] : []), '--no-color', `${from}..${to}`, '--'], {
      gitDir: dir,
    });
  }
}

/** Parses `diff -z --raw --numstat` output: the raw records first, then the numstat records in the same order. */
export function parseRawNumstat(output: string): ChangedPath[] {
  const tokens = output.split('\0');
  const changes: ChangedPath[] = [];
  let index = 0;
  while (index < tokens.length && tokens[index].startsWith(':')) {
    const status = tokens[index].split(' ').pop() ?? 'M';
    const letter = status[0];
    if (letter === 'R' || letter === 'C') {
      changes.push({ path: tokens[index + 2], previousPath: tokens[index + 1], status: letter, additions: 0, deletions: 0 });
      index += 3;
    } else {
      changes.push({ path: tokens[index + 1], status: letter, additions: 0, deletions: 0 });
      index += 2;
    }
  }
  // Numstat: "a\td\tpath" or, for a rename, "a\td\t" followed by the old and the new path.
  let n = 0;
  while (index < tokens.length && n < changes.length) {
    const token = tokens[index].replace(/^\n/, '');
    const match = /^(\d+|-)\t(\d+|-)\t(.*)$/s.exec(token);
    if (!match) {
      index += 1;
      continue;
    }
    changes[n].additions = match[1] === '-' ? 0 : Number(match[1]);
    changes[n].deletions = match[2] === '-' ? 0 : Number(match[2]);
    index += match[3] === '' ? 3 : 1;
    n += 1;
  }
  return changes;
}
