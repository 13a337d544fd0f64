import { Injectable, Logger } from '@nestjs/common';
import { runDetachedFromGitClient } from './git-client';
import { GitCommand } from './git-command';
import { GitProcesses } from './git-processes';
import { GitTreeBudget } from './git-tree-budget';
import { GitTrees } from './git-trees';

/** Answers kept (about 200 bytes each). */
export const LAST_COMMITS_KEPT = 50_000;
/** A walk records at most this many paths, over at most this many commits. */
export const WALK_MAX_PATHS = 20_000;
export const WALK_MAX_COMMITS = 20_000;
/** Walks remembered as done (or running), so that a commit is walked once. */
const WALKS_KEPT = 64;

/**
 * The last commit that touched a path, seen from a commit (`git log -1 <commit> -- <path>`, the costly part of a
 * `contents` answer), remembered per (repository, commit, path): commits never change, so a remembered answer is
 * exact for as long as it is kept. Least recently used answers go first.
 *
 * The first miss for a commit also starts one walk of its history in the background (`git log --name-only`),
 * which learns the answer for every file the walk sees changed, until the first merge commit: along a line of
 * single-parent commits, the first commit that changed a file is what `git log -1 -- <file>` answers, while
 * across a merge git's history simplification may pick another, so the walk stops there and later files are
 * asked one by one.
 */
@Injectable()
export class GitLastCommits {
  private readonly logger = new Logger('GitLastCommits');
  private readonly known = new Map<string, string>();
  private readonly walks = new Map<string, Promise<void>>();
  /** Callers waiting for the walk to reach their path, by (repository, commit, path). */
  private readonly waiters = new Map<string, Set<(answer: string | undefined) => void>>();

  constructor(
    private readonly trees: GitTrees,
    private readonly git: GitCommand,
    private readonly processes: GitProcesses,
    private readonly budget: GitTreeBudget,
  ) {}

  /** The remembered answer, or undefined; needs no git process. */
  cached(dir: string, commit: string, path: string): string | undefined {
    const key = keyOf(dir, commit, path);
    const found = this.known.get(key);
    if (found !== undefined) {
      this.known.delete(key);
      this.known.set(key, found);
    }
    return found;
  }

  /** Asks git (callers hold a slot of the process cap) and remembers the answer. */
  async find(dir: string, commit: string, path: string): Promise<string> {
    const found = this.cached(dir, commit, path) ?? (await this.trees.lastCommit(dir, commit, path));
    this.remember(dir, commit, path, found);
    return found;
  }

  /**
   * Starts the walk of `commit`'s history, once per commit, in a slot of its own (skipped when none is free in
   * time); resolves when it is over. Callers need not wait for it.
   */
  walk(dir: string, commit: string): Promise<void> {
    const key = `${dir}\0${commit}`;
    const known = this.walks.get(key);
    if (known) return known;
    // The walk serves every request that waits for it: it belongs to none of them (no share, no stop signal).
    const running = runDetachedFromGitClient(() => this.processes.withSlot(() => this.walkHistory(dir, commit))).catch((error: Error) => {
      // Not remembered as done: a later miss may walk again.
      if (this.walks.get(key) === running) this.walks.delete(key);
      this.logger.warn(`last-commit walk of ${commit} skipped: ${error.message}`);
    });
    this.walks.set(key, running);
    if (this.walks.size > WALKS_KEPT) this.walks.delete(this.walks.keys().next().value as string);
    return running;
  }

  /**
   * The answer for `path` as the walk of `commit` learns it: at once when remembered, else as soon as the walk
   * (started if not yet) sees the path, without waiting for the rest of the history; undefined when the walk
   * ended without it or `waitMs` passed first (the caller then asks for its path alone).
   */
  learned(dir: string, commit: string, path: string, waitMs: number): Promise<string | undefined> {
    const known = this.cached(dir, commit, path);
    if (known !== undefined) return Promise.resolve(known);
    const walk = this.walk(dir, commit);
    const key = keyOf(dir, commit, path);
    return new Promise((resolve) => {
      const waiting = this.waiters.get(key) ?? new Set<(answer: string | undefined) => void>();
      this.waiters.set(key, waiting);
      const done = (answer: string | undefined) => {
        if (!waiting.delete(done)) return;
        clearTimeout(timer);
        if (waiting.size === 0 && this.waiters.get(key) === waiting) this.waiters.delete(key);
        resolve(answer);
      };
      waiting.add(done);
      const timer = setTimeout(() => done(undefined), waitMs);
      void walk.then(() => done(this.cached(dir, commit, path)));
    });
  }

  get size(): number {
    return this.known.size;
  }

  private async walkHistory(dir: string, commit: string): Promise<void> {
    // The walk diffs each commit against its parent; a tree too large to walk ends it before git starts (each
    // path is then asked alone, which history simplification answers without expanding the tree).
    await this.budget.assertWithin(dir, [commit]);
    const args = ['log', '-z', '--format=%x01%H %P', '--name-only', '--no-renames', `--max-count=${WALK_MAX_COMMITS}`, commit];
    const stream = this.git.stream(args, { gitDir: dir });
    const seen = new Set<string>();
    let current = '';
    let pending = '';
    let stop = false;
    const consume = (token: string) => {
      const start = token.indexOf('\x01');
      if (start >= 0) {
        const [oid, ...parents] = token
          .slice(start + 1)
          .trim()
          .split(' ')
          .filter((part) => part !== '');
        // Past a merge, git's history simplification decides per path: those are asked one by one.
        if (parents.length > 1) stop = true;
        current = oid;
        return;
      }
      const file = token.replace(/^\n/, '');
      if (file === '' || seen.has(file)) return;
      seen.add(file);
      this.remember(dir, commit, file, current);
      if (seen.size >= WALK_MAX_PATHS) stop = true;
    };
    try {
      for await (const chunk of stream.stdout) {
        pending += (chunk as Buffer).toString('utf8');
        const tokens = pending.split('\0');
        pending = tokens.pop() ?? '';
        for (const token of tokens) {
          consume(token);
          if (stop) break;
        }
        if (stop) break;
      }
      if (!stop && pending !== '') consume(pending);
    } finally {
      stream.kill();
      await stream.exited.catch(() => undefined);
    }
  }

  private remember(dir: string, commit: string, path: string, lastCommit: string): void {
    if (lastCommit === '') return;
    const key = keyOf(dir, commit, path);
    this.known.delete(key);
    this.known.set(key, lastCommit);
    if (this.known.size > LAST_COMMITS_KEPT) this.known.delete(this.known.keys().next().value as string);
    for (const done of [...(this.waiters.get(key) ?? [])]) done(lastCommit);
  }
}

function keyOf(dir: string, commit: string, path: string): string {
  return `${dir}\0${commit}\0${path}`;
}
