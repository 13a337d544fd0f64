import { Injectable } from '@nestjs/common';
import { GitConfig } from '../config/slices';
import { BATCH_READER_ARGS, BatchReader } from './git-batch-reader';
import { GitBudgetError, GitCommand } from './git-command';
import { treeEntries } from './git-tree-format';

/** Tree counts kept between requests (a few dozen bytes each). */
export const TREE_COUNTS_KEPT = 100_000;
/** Longest one object read of a count may take. */
const READ_TIMEOUT_MS = 30_000;

/**
 * A tree names more paths than the entry budget allows (GIT_MAX_TREE_ENTRIES): the walk it would take is
 * refused before git starts it.
 */
export class GitEntryBudgetError extends GitBudgetError {
  constructor(
    readonly tree: string,
    readonly limit: number,
  ) {
    super(['ls-tree'], '');
    this.message = `the tree ${tree} has more than ${limit} files and directories: too large to walk`;
    this.name = 'GitEntryBudgetError';
  }
}

/** Where the objects of a push wait until pre-receive accepts them: git's quarantine variables. */
export type ObjectEnvironment = Record<string, string>;

/**
 * How many paths a tree expands to (every file, link, submodule and directory below it, at any depth), counted
 * over its distinct trees: count(tree) is the sum over its entries of 1, plus count(subtree) for a directory,
 * and each distinct tree is read once however often it is named. A tree of a few kilobytes that names the same
 * subtree a hundred times on each of five levels expands to 10^10 paths, which any walk of it (an archive, a
 * recursive listing, a diff against nothing) would produce one by one; counting it reads six objects.
 *
 * A count stops at the budget (a count over it is "more than the budget", not its exact value). Counts are facts
 * about object contents, so those found are kept between requests, the least recently used going first.
 */
@Injectable()
export class GitTreeBudget {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly git: GitCommand,
    private readonly gitConfig: GitConfig,
  ) {}

  /** GIT_MAX_TREE_ENTRIES: the most paths a tree may expand to before walks of it are refused. */
  get limit(): number {
    return this.gitConfig?.treeMaxEntries ?? 1_000_000;
  }

  /**
   * Throws GitEntryBudgetError when one of `revisions` (commits, tags or trees, by any name git reads) has a tree
   * that expands to more than `limit` paths. Names that are no tree-ish are skipped.
   */
  async assertWithin(dir: string, revisions: string[], limit = this.limit, env: ObjectEnvironment = {}): Promise<void> {
    const over = await this.firstOver(dir, revisions, limit, env);
    if (over !== null) throw new GitEntryBudgetError(over, limit);
  }

  /** The first tree of `revisions` that expands to more than `limit` paths, or null. */
  async firstOver(dir: string, revisions: string[], limit = this.limit, env: ObjectEnvironment = {}): Promise<string | null> {
    const wanted = [...new Set(revisions)];
    if (wanted.length === 0) return null;
    const reader = new BatchReader(await this.git.startSession([...BATCH_READER_ARGS], { gitDir: dir, env }), READ_TIMEOUT_MS);
    try {
      const pending = new Map<string, Promise<number>>();
      for (const revision of wanted) {
        const tree = await reader.info(`${revision}^{tree}`).catch(() => null);
        if (!tree || tree.type !== 'tree') continue;
        if ((await this.count(reader, tree.oid, limit, pending)) > limit) return tree.oid;
      }
      return null;
    } finally {
      reader.kill();
    }
  }

  /** The commits of `revisions` not reachable from any ref (what a push brings), by the trees they name. */
  async newTrees(dir: string, newIds: string[], env: ObjectEnvironment): Promise<string[]> {
    if (newIds.length === 0) return [];
    const output = await this.git.run(['rev-list', '--no-commit-header', '--format=%T', '--stdin', '--not', '--all'], {
      gitDir: dir,
      env,
      input: `${newIds.join('\n')}\n`,
      offload: true,
    });
    return [...new Set(output.split('\n').filter((line) => /^[0-9a-f]{40,64}$/.test(line)))];
  }

  private count(reader: BatchReader, tree: string, limit: number, pending: Map<string, Promise<number>>): Promise<number> {
    const known = this.counts.get(tree);
    // Kept counts are exact: one over this budget is "more than it" as well.
    if (known !== undefined) return Promise.resolve(this.touch(tree, known));
    const running = pending.get(tree);
    if (running) return running;
    const counting = this.countTree(reader, tree, limit, pending);
    pending.set(tree, counting);
    return counting;
  }

  private async countTree(reader: BatchReader, tree: string, limit: number, pending: Map<string, Promise<number>>): Promise<number> {
    const object = await reader.contents(tree);
    if (!object?.content || object.type !== 'tree') return 0;
    const entries = treeEntries(object.content, tree.length / 2, Infinity);
    let total = entries.length;
    if (total > limit) return this.keep(tree, limit + 1, limit);
    const subtrees = entries.filter((entry) => entry.mode === '40000').map((entry) => entry.oid);
    const counts = await Promise.all(subtrees.map((subtree) => this.count(reader, subtree, limit, pending)));
    for (const count of counts) total += count;
    return this.keep(tree, Math.min(total, limit + 1), limit);
  }

  /** Kept only when exact: a count cut at this budget may be within a larger one. */
  private keep(tree: string, count: number, limit: number): number {
    if (count <= limit) {
      this.counts.set(tree, count);
      if (this.counts.size > TREE_COUNTS_KEPT) this.counts.delete(this.counts.keys().next().value as string);
    }
    return count;
  }

  private touch(tree: string, count: number): number {
    this.counts.delete(tree);
    this.counts.set(tree, count);
    return count;
  }
}
