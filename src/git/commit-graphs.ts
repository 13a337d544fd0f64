import { Injectable, Logger } from '@nestjs/common';
import { runInBackground } from './git-client';
import { GitRepositories } from './git-repositories';

/**
 * The commit-graph writes that follow ref changes, off the path of the push that caused them: git answers the
 * client once the refs and their records are stored, and the graph (a cache git reads when it is there and does
 * without for commits it does not cover) is brought up to date in the background, at the background launcher's
 * lower priority. In this process one write at a time per repository; changes that arrive while one runs are
 * covered by one more write after it, however many they are. Writers of other instances meet git's own lock, and
 * the later change's write covers what a refused one would have.
 */
@Injectable()
export class CommitGraphs {
  private readonly logger = new Logger('CommitGraphs');
  /** Repositories whose write is running: true when another change came since it started. */
  private readonly running = new Map<string, boolean>();

  constructor(private readonly repositories: GitRepositories) {}

  /** Brings the commit graph of `dir` up to date soon; returns at once. */
  refreshSoon(dir: string): void {
    if (this.running.has(dir)) {
      this.running.set(dir, true);
      return;
    }
    this.running.set(dir, false);
    void runInBackground(() => this.refresh(dir));
  }

  /** Resolves once no write is running or due for `dir` (for tests and orderly shutdowns). */
  async settled(dir: string): Promise<void> {
    while (this.running.has(dir)) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private async refresh(dir: string): Promise<void> {
    try {
      for (;;) {
        this.running.set(dir, false);
        try {
          await this.repositories.refreshCommitGraph(dir);
        } catch (error) {
          // A repository deleted or renamed meanwhile, a stopping server: the next change's write catches up.
          this.logger.warn(`commit-graph of ${dir} not written: ${(error as Error).message}`);
        }
        if (this.running.get(dir) !== true) return;
      }
    } finally {
      this.running.delete(dir);
    }
  }
}
