import { Injectable } from '@nestjs/common';
import { GitConfig } from '../config/slices';
import { BATCH_READER_ARGS, BatchObject, BatchReader } from './git-batch-reader';
import { GitBudgetError, GitCommand } from './git-command';
import { treeShape } from './git-tree-format';

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

  /**
   * The first tree of `revisions` that expands to more than `limit` paths, or null. The trees are read level by
   * level, each level's in batches written to one `cat-file` at once and answered in one stream, so a push of a
   * long history costs a few round trips to git, not one per tree; the counts are then summed in memory. `trees`
   * are ids known to name trees (a push's commits' trees, from rev-list): counted as they are, without asking git
   * what each one names first.
   */
  async firstOver(dir: string, revisions: string[], limit = this.limit, env: ObjectEnvironment = {}, trees: string[] = []): Promise<string | null> {
    for (const [root, count] of await this.countAll(dir, revisions, limit, env, trees)) if (count > limit) return root;
    return null;
  }

  /**
   * How many paths the tree of `revision` expands to (what `git ls-tree -r -t` would list), or `limit + 1` when
   * more; null when `revision` names no tree-ish.
   */
  async count(dir: string, revision: string, limit = this.limit): Promise<number | null> {
    const counts = await this.countAll(dir, [revision], limit, {});
    return counts.size === 0 ? null : [...counts.values()][0];
  }

  /** Each tree of `revisions` with its count (at most limit + 1), in the order named; tree-less names skipped. */
  private async countAll(dir: string, revisions: string[], limit: number, env: ObjectEnvironment, trees: string[] = []): Promise<Map<string, number>> {
    const wanted = [...new Set(revisions)];
    const result = new Map<string, number>();
    if (wanted.length === 0 && trees.length === 0) return result;
    const reader = new BatchReader(await this.git.startSession([...BATCH_READER_ARGS], { gitDir: dir, env }), READ_TIMEOUT_MS);
    try {
      const roots: string[] = [...trees];
      for (const batch of batches(wanted)) {
        const trees = await Promise.all(batch.map((revision) => reader.info(`${revision}^{tree}`).catch(() => null)));
        for (const tree of trees) if (tree && tree.type === 'tree') roots.push(tree.oid);
      }
      const graph = await this.readTrees(reader, [...new Set(roots)], limit);
      const counts = new Map<string, number>();
      for (const root of roots) {
        const count = this.countOf(root, graph, counts, limit);
        result.set(root, count);
        // The first tree over the budget is the answer of firstOver; the rest need not be counted.
        if (count > limit) break;
      }
      return result;
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

  /**
   * Every distinct tree below `roots` that no kept count covers, breadth first: each tree's number of entries
   * and the subtrees it names (as often as it names them). A tree with more entries than `limit` is not expanded.
   */
  private async readTrees(reader: BatchReader, roots: string[], limit: number): Promise<Map<string, TreeNode>> {
    const graph = new Map<string, TreeNode>();
    let level = roots.filter((tree) => !this.counts.has(tree));
    while (level.length > 0) {
      const next = new Set<string>();
      for (const batch of batches(level)) this.learn(batch, await Promise.all(batch.map((tree) => reader.contents(tree))), limit, graph, next);
      level = [...next].filter((tree) => !graph.has(tree));
    }
    return graph;
  }

  /** Puts a batch of trees read from git into `graph`, and the subtrees still to read into `next`. */
  private learn(batch: string[], objects: (BatchObject | null)[], limit: number, graph: Map<string, TreeNode>, next: Set<string>): void {
    for (const [index, object] of objects.entries()) {
      const tree = batch[index];
      if (!object?.content || object.type !== 'tree') {
        graph.set(tree, { entries: 0, subtrees: [] });
        continue;
      }
      const { entries, subtrees } = treeShape(object.content, tree.length / 2);
      if (entries > limit) {
        graph.set(tree, { entries: limit + 1, subtrees: [] });
        continue;
      }
      graph.set(tree, { entries, subtrees });
      for (const subtree of subtrees) if (!graph.has(subtree) && !this.counts.has(subtree)) next.add(subtree);
    }
  }

  /**
   * count(tree), summed after its subtrees (depth first, without recursion: a deep tree cannot exhaust the
   * stack), each distinct tree once; a count past `limit` stops at limit + 1.
   */
  private countOf(root: string, graph: Map<string, TreeNode>, counts: Map<string, number>, limit: number): number {
    const known = (tree: string): number | undefined => {
      const counted = counts.get(tree);
      if (counted !== undefined) return counted;
      const kept = this.counts.get(tree);
      return kept === undefined ? undefined : this.touch(tree, kept);
    };
    const stack: { tree: string; next: number }[] = [{ tree: root, next: 0 }];
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      if (known(top.tree) !== undefined) {
        stack.pop();
        continue;
      }
      const node = graph.get(top.tree) ?? { entries: 0, subtrees: [] };
      if (top.next < node.subtrees.length) {
        const subtree = node.subtrees[top.next++];
        // Git's objects are named by their contents, so a tree cannot contain itself; a name already on the
        // stack is counted as nothing rather than walked forever.
        if (known(subtree) === undefined && !stack.some((entry) => entry.tree === subtree)) stack.push({ tree: subtree, next: 0 });
        continue;
      }
      let total = node.entries;
      for (const subtree of node.subtrees) {
        total += known(subtree) ?? 0;
        if (total > limit) break;
      }
      counts.set(top.tree, this.keep(top.tree, Math.min(total, limit + 1), limit));
      stack.pop();
    }
    return known(root) ?? 0;
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

/** A tree as the count needs it: its number of entries and the subtrees it names. */
interface TreeNode {
  entries: number;
  subtrees: string[];
}

/** Objects asked of git in one write (and answered in one stream): bounded, so that a level's answers are too. */
const READ_BATCH = 2048;

function* batches<T>(items: T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += READ_BATCH) yield items.slice(start, start + READ_BATCH);
}
