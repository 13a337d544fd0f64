import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, Logger } from '@nestjs/common';
import { runInBackground } from './git-client';
import { GitCommand, GitError } from './git-command';

/** Loose refs under a prefix Anvil writes (`refs/pull`) from which `wrote` packs the repository's refs. */
export const LOOSE_REFS_PACKED_AT = 64;

/**
 * The refs Anvil writes one per pull request (`refs/pull/{n}/head`) packed into `packed-refs` once
 * LOOSE_REFS_PACKED_AT of them are loose, in the background after the write that made them so many. Git opens
 * the file of every loose ref each time it lists a repository's refs (the advertisement of every clone, fetch and
 * push, a push's connectivity check): with 200 loose pull refs a push took 1.22 times as long as into the same
 * repository without them, 0.97-0.99 times once they were packed (bench/RESULTS.md). `pack-refs --all --prune` is what git's own gc runs,
 * and Anvil runs no gc on a schedule. In this process one packing at a time per repository; a writer of another
 * process meets git's locks (a ref locked by a concurrent push is left loose, for the next packing).
 */
@Injectable()
export class RefPacking {
  private readonly logger = new Logger('RefPacking');
  /** Repositories being packed by this process. */
  private readonly running = new Set<string>();

  constructor(private readonly git: GitCommand) {}

  /** After refs under `prefix` of `dir` were written: packs its refs soon when that many are loose; returns at once. */
  wrote(dir: string, prefix: string): void {
    if (this.running.has(dir) || this.looseUnder(dir, prefix) < LOOSE_REFS_PACKED_AT) return;
    this.running.add(dir);
    void runInBackground(() => this.pack(dir));
  }

  /** Resolves once no packing of `dir` runs (for tests). */
  async settled(dir: string): Promise<void> {
    while (this.running.has(dir)) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  /** The entries directly under `prefix` (one per pull request for `refs/pull`): a loose ref each, or a directory of them. */
  private looseUnder(dir: string, prefix: string): number {
    try {
      return fs.readdirSync(path.join(dir, prefix)).length;
    } catch {
      return 0;
    }
  }

  private async pack(dir: string): Promise<void> {
    try {
      await this.git.run(['pack-refs', '--all', '--prune'], { gitDir: dir, offload: true });
    } catch (error) {
      // Another process holds packed-refs.lock (a push, a packing on another instance): the next write retries.
      if (!(error instanceof GitError && /\.lock'?:? File exists|Unable to create .*\.lock/i.test(error.message)))
        this.logger.warn(`refs of ${dir} not packed: ${(error as Error).message}`);
    } finally {
      this.running.delete(dir);
    }
  }
}
