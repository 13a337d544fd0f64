import { Injectable } from '@nestjs/common';
import { GitTrees } from './git-trees';

/** Answers kept (about 200 bytes each). */
export const LAST_COMMITS_KEPT = 50_000;

/**
 * The last commit that touched a path, seen from a commit (`git log -1 <commit> -- <path>`, the costly part of a
 * `contents` answer), remembered per (repository, commit, path): commits never change, so a remembered answer is
 * exact for as long as it is kept. Least recently used answers go first.
 */
@Injectable()
export class GitLastCommits {
  private readonly known = new Map<string, string>();

  constructor(private readonly trees: GitTrees) {}

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

  private remember(dir: string, commit: string, path: string, lastCommit: string): void {
    if (lastCommit === '') return;
    const key = keyOf(dir, commit, path);
    this.known.delete(key);
    this.known.set(key, lastCommit);
    if (this.known.size > LAST_COMMITS_KEPT) this.known.delete(this.known.keys().next().value as string);
  }

  get size(): number {
    return this.known.size;
  }
}

function keyOf(dir: string, commit: string, path: string): string {
  return `${dir}\0${commit}\0${path}`;
}
