import { Injectable } from '@nestjs/common';
import { GitConfig } from '../config/slices';
import { BATCH_READER_ARGS, BatchObject, BatchReader } from './git-batch-reader';
import { GitBudgetError, GitCommand, GitStream } from './git-command';
import { commitParents, treeShape } from './git-tree-format';
import { LooseObjects, commitTree, refValue } from './loose-objects';
import { isZeroId } from './push-hooks';
import { NO_SUBTREES, ON_STACK, TreeGraph, UNKNOWN } from './tree-graph';

// One cohesive thing, kept whole though long: one budget's counting, from git or from a push's loose objects,
// over the same graph and the same kept counts.

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
  /** Kept counts by tree, keyed by its id's raw bytes (TreeGraph). */
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
   * The first tree of `revisions` that expands to more than `limit` paths, or null. `trees` are ids known to name
   * trees, counted as they are, without asking git what each one names first.
   */
  async firstOver(dir: string, revisions: string[], limit = this.limit, env: ObjectEnvironment = {}, trees: string[] = []): Promise<string | null> {
    return this.firstOverOf(await this.countAll(dir, revisions, limit, env, [trees]), limit);
  }

  /**
   * What a push brings, judged: the first tree over `limit` among those of the commits `newIds` bring (the ones
   * no ref reaches) and of `newIds` themselves (a pushed tag or tree), or null. `moved` are the refs the push
   * moves with the old values the client gave, which git checks only when it updates them, after pre-receive:
   * those the refs really have now are the tips. When each new commit's parents are tips (a push of commits on
   * top of the branches it moves, as most pushes are), no commit but `newIds` can be new, and no walk is made.
   * Otherwise the
   * new commits' trees come from a `rev-list` read as it writes them, so the trees of a long history are being
   * read while git still walks it.
   */
  async firstOverPushed(
    dir: string,
    newIds: string[],
    limit = this.limit,
    env: ObjectEnvironment = {},
    moved: { ref: string; oldId: string }[] = [],
  ): Promise<string | null> {
    if (newIds.length === 0) return null;
    const quick = await this.firstOverUnpacked(dir, newIds, limit, env, moved);
    if (quick !== undefined) return quick;
    const reader = await this.reader(dir, env);
    let walk: GitStream | undefined;
    let read = false;
    try {
      if (await this.onTopOf(reader, newIds, moved)) return this.firstOverOf(await this.countWith(reader, newIds, limit, []), limit);
      walk = this.git.stream(['rev-list', '--no-commit-header', '--format=%T', '--stdin', '--not', '--all'], {
        gitDir: dir,
        env,
        input: `${newIds.join('\n')}\n`,
      });
      const counts = await this.countWith(reader, newIds, limit, treeIds(walk.stdout));
      read = true;
      await walk.exited;
      return this.firstOverOf(counts, limit);
    } finally {
      if (!read) walk?.kill();
      reader.kill();
    }
  }

  /**
   * firstOverPushed without starting git, for the push most pushes are: a few commits on top of the refs they
   * move, which git unpacked as loose files into the push's quarantine (`GIT_OBJECT_DIRECTORY`), over trees that
   * are either new there too or have kept counts. undefined when anything it needs is elsewhere (a pack, an
   * object the push did not bring, a count not kept, a ref git must resolve): git answers then.
   */
  private async firstOverUnpacked(
    dir: string,
    newIds: string[],
    limit: number,
    env: ObjectEnvironment,
    moved: { ref: string; oldId: string }[],
  ): Promise<string | null | undefined> {
    const claimed = moved.filter((update) => !isZeroId(update.oldId));
    if (!env.GIT_OBJECT_DIRECTORY || claimed.length === 0 || claimed.length > UNPACKED_REFS || newIds.length > UNPACKED_REFS) return undefined;
    const values = await Promise.all(claimed.map((update) => refValue(dir, update.ref)));
    const tips = new Set(claimed.filter((update, index) => values[index] === update.oldId).map((update) => update.oldId));
    const objects = new LooseObjects(env.GIT_OBJECT_DIRECTORY);
    const roots: string[] = [];
    for (const id of newIds) {
      const commit = await objects.read(id);
      const tree = commit?.type === 'commit' ? commitTree(commit.content!) : null;
      if (tree === null || !commitParents(commit!.content!).every((parent) => tips.has(parent))) return undefined;
      roots.push(tree);
    }
    const graph = new TreeGraph();
    const waiting: number[] = [];
    const want = this.wanting(graph, waiting);
    const numbers = roots.map((root) => want(Buffer.from(root, 'hex').toString('latin1')));
    for (let tree = waiting.pop(); tree !== undefined; tree = waiting.pop()) {
      const object = await objects.read(Buffer.from(graph.keys[tree], 'latin1').toString('hex'));
      if (object?.type !== 'tree') return undefined;
      this.learn(graph, [tree], [object], limit, want);
    }
    for (const [index, root] of numbers.entries()) if (this.countOf(graph, root, limit) > limit) return roots[index];
    return null;
  }

  /**
   * Whether every one of `newIds` is a commit whose parents are all values that refs of `moved` have now (a
   * client's claimed old value counts only when its ref has it: one that does not would hide its commits).
   */
  private async onTopOf(reader: BatchReader, newIds: string[], moved: { ref: string; oldId: string }[]): Promise<boolean> {
    const claimed = moved.filter((update) => !isZeroId(update.oldId));
    if (claimed.length === 0 || claimed.length > READ_BATCH || newIds.length > READ_BATCH) return false;
    const values = await Promise.all(claimed.map((update) => reader.info(update.ref).catch(() => null)));
    const tips = new Set(claimed.filter((update, index) => values[index]?.oid === update.oldId).map((update) => update.oldId));
    if (tips.size === 0) return false;
    const found = await Promise.all(newIds.map((id) => reader.info(id).catch(() => null)));
    if (!found.every((object) => object?.type === 'commit' && object.size <= MAX_COMMIT_READ)) return false;
    const commits = await reader.contentsOf(found.map((object) => object!.oid));
    return commits.every((commit) => commit?.content !== undefined && commitParents(commit.content).every((parent) => tips.has(parent)));
  }

  /** A `cat-file` of the repository, reading the push's quarantine too when `env` names it. */
  private async reader(dir: string, env: ObjectEnvironment): Promise<BatchReader> {
    return new BatchReader(await this.git.startSession([...BATCH_READER_ARGS], { gitDir: dir, env }), READ_TIMEOUT_MS);
  }

  private firstOverOf(counts: Map<string, number>, limit: number): string | null {
    for (const [root, count] of counts) if (count > limit) return root;
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

  /**
   * Each tree of `revisions` and of `trees` with its count (at most limit + 1), the first over `limit` last;
   * tree-less names skipped. `revisions` are resolved to their trees first; `trees` may still be coming.
   */
  private async countAll(
    dir: string,
    revisions: string[],
    limit: number,
    env: ObjectEnvironment,
    trees: Iterable<string[]> | AsyncIterable<string[]> = [],
  ): Promise<Map<string, number>> {
    const reader = await this.reader(dir, env);
    try {
      return await this.countWith(reader, revisions, limit, trees);
    } finally {
      reader.kill();
    }
  }

  /** countAll's work, with a reader of the repository (and its quarantine) already running. */
  private async countWith(
    reader: BatchReader,
    revisions: string[],
    limit: number,
    trees: Iterable<string[]> | AsyncIterable<string[]>,
  ): Promise<Map<string, number>> {
    const named: string[] = [];
    for (const batch of batches([...new Set(revisions)])) {
      const found = await Promise.all(batch.map((revision) => reader.info(`${revision}^{tree}`).catch(() => null)));
      for (const tree of found) if (tree && tree.type === 'tree') named.push(tree.oid);
    }
    const graph = new TreeGraph();
    const roots = await this.readTrees(reader, graph, concat([named], trees), limit);
    const result = new Map<string, number>();
    for (const root of roots) {
      const count = this.countOf(graph, root, limit);
      result.set(Buffer.from(graph.keys[root], 'latin1').toString('hex'), count);
      // The first tree over the budget is the answer of firstOver; the rest need not be counted.
      if (count > limit) break;
    }
    return result;
  }

  /**
   * Reads into `graph` every distinct tree below the roots `source` names (hex ids) that no kept count covers:
   * each tree's number of entries and the subtrees it names (as often as it names them). Returns the roots, each
   * once, in the order they came. Trees are read in batches as they become known (a root that arrives, a subtree
   * a read tree names), two batches in flight, so that git reads one while the other is parsed and no more than
   * two batches' trees are held at once. A tree with more entries than `limit` is not expanded.
   */
  private async readTrees(reader: BatchReader, graph: TreeGraph, source: AsyncIterable<string[]>, limit: number): Promise<number[]> {
    const roots = new Set<number>();
    const waiting: number[] = [];
    const want = this.wanting(graph, waiting);
    let fed = false;
    let reading = 0;
    const sleepers: (() => void)[] = [];
    const wake = (): void => {
      for (const sleeper of sleepers.splice(0)) sleeper();
    };
    const feed = async (): Promise<void> => {
      try {
        for await (const trees of source) {
          for (const tree of trees) roots.add(want(Buffer.from(tree, 'hex').toString('latin1')));
          wake();
        }
      } finally {
        fed = true;
        wake();
      }
    };
    const read = async (): Promise<void> => {
      for (;;) {
        if (waiting.length === 0) {
          if (fed && reading === 0) return;
          await new Promise<void>((resolve) => sleepers.push(resolve));
          continue;
        }
        const batch = waiting.splice(0, READ_BATCH);
        reading++;
        try {
          const objects = await reader.contentsOf(batch.map((tree) => Buffer.from(graph.keys[tree], 'latin1').toString('hex')));
          this.learn(graph, batch, objects, limit, want);
        } finally {
          reading--;
          wake();
        }
      }
    };
    await Promise.all([feed(), read(), read()]);
    return [...roots];
  }

  /**
   * `want(key)`: the tree's number in `graph`, added when new, with its kept count when there is one, else put on
   * `waiting` to be read.
   */
  private wanting(graph: TreeGraph, waiting: number[]): (key: string) => number {
    return (key) => {
      const known = graph.numberOf(key);
      if (known !== undefined) return known;
      const tree = graph.add(key);
      const kept = this.counts.get(key);
      if (kept === undefined) waiting.push(tree);
      else graph.counts[tree] = this.touch(key, kept);
      return tree;
    };
  }

  /** Puts a batch of trees read from git into `graph`, and asks for the subtrees they name (`want`). */
  private learn(graph: TreeGraph, batch: number[], objects: (BatchObject | null)[], limit: number, want: (key: string) => number): void {
    for (let index = 0; index < batch.length; index++) {
      const tree = batch[index];
      const object = objects[index];
      if (!object?.content || object.type !== 'tree') {
        graph.entries[tree] = 0;
        continue;
      }
      const { entries, subtrees } = treeShape(object.content, graph.keys[tree].length, 'latin1');
      if (entries > limit) {
        graph.entries[tree] = limit + 1;
        continue;
      }
      graph.entries[tree] = entries;
      graph.subtrees[tree] = subtrees.map(want);
    }
  }

  /**
   * count(tree), summed after its subtrees (depth first, without recursion: a deep tree cannot exhaust the
   * stack), each distinct tree once; a count past `limit` stops at limit + 1.
   */
  private countOf(graph: TreeGraph, root: number, limit: number): number {
    const { counts, entries, subtrees } = graph;
    if (counts[root] >= 0) return counts[root];
    const stack = [root];
    const next = [0];
    counts[root] = ON_STACK;
    while (stack.length > 0) {
      const top = stack.length - 1;
      const tree = stack[top];
      const below = subtrees[tree] ?? NO_SUBTREES;
      if (next[top] < below.length) {
        const subtree = below[next[top]++];
        if (counts[subtree] === UNKNOWN) {
          counts[subtree] = ON_STACK;
          stack.push(subtree);
          next.push(0);
        }
        continue;
      }
      // Git's objects are named by their contents, so a tree cannot contain itself; one still on the stack is
      // counted as nothing rather than walked forever.
      let total = Math.max(entries[tree] ?? 0, 0);
      for (const subtree of below) {
        if (counts[subtree] > 0) total += counts[subtree];
        if (total > limit) break;
      }
      counts[tree] = this.keep(graph.keys[tree], Math.min(total, limit + 1), limit);
      stack.pop();
      next.pop();
    }
    return counts[root];
  }

  /** Kept only when exact: a count cut at this budget may be within a larger one. */
  private keep(key: string, count: number, limit: number): number {
    if (count <= limit) {
      this.counts.set(key, count);
      if (this.counts.size > TREE_COUNTS_KEPT) this.counts.delete(this.counts.keys().next().value as string);
    }
    return count;
  }

  private touch(key: string, count: number): number {
    this.counts.delete(key);
    this.counts.set(key, count);
    return count;
  }
}

/** Objects asked of git in one write (and answered in one stream): bounded, so that a level's answers are too. */
const READ_BATCH = 2048;

function* batches<T>(items: T[]): Generator<T[]> {
  for (let start = 0; start < items.length; start += READ_BATCH) yield items.slice(start, start + READ_BATCH);
}

async function* concat<T>(...sources: (Iterable<T> | AsyncIterable<T>)[]): AsyncGenerator<T> {
  for (const source of sources) yield* source;
}

/** Most refs and commits a push may move and bring for firstOverUnpacked to judge it. */
const UNPACKED_REFS = 32;

/** The most bytes of a pushed commit read to learn its parents; a larger one is walked by rev-list. */
const MAX_COMMIT_READ = 1024 * 1024;

/** The tree ids of `rev-list --format=%T` output, a chunk's worth at a time. */
async function* treeIds(output: AsyncIterable<Buffer>): AsyncGenerator<string[]> {
  let rest = '';
  for await (const chunk of output) {
    const lines = (rest + chunk.toString('latin1')).split('\n');
    rest = lines.pop() ?? '';
    yield lines.filter((line) => TREE_ID.test(line));
  }
  if (TREE_ID.test(rest)) yield [rest];
}

const TREE_ID = /^[0-9a-f]{40}$|^[0-9a-f]{64}$/;
