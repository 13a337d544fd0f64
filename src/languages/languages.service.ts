import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable, Logger } from '@nestjs/common';
import { ContentRepositories, ContentRepository } from '../content/content-repository';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { runDetachedFromGitClient } from '../git/git-client';
import { GitData } from '../git/git-data';
import { GitTreeBudget } from '../git/git-tree-budget';
import { RepositoryDirectory } from '../repos/repository-directory';
import { languageBytes } from './language-detection';
import { LanguageStatStore } from './language-stat.store';

/** Measurements run at once in this process; the rest wait their turn. */
const MEASURING_AT_ONCE = 2;
/** Paths a measured tree may expand to: a larger one is recorded as measured with no language. */
const MEASURED_PATHS_MAX = 200_000;

/**
 * Bytes per language at the head of the default branch. Measured once per head commit and stored with that
 * commit's id, together with the repository's primary language (the Repository JSON's `language`).
 *
 * A request only reads the rows: when the head has moved since they were measured it answers them (the last
 * measured head's figures, or nothing for a repository never measured) and leaves a measurement of the new head
 * to run behind it, a few at a time per process, within the entry budget. A repository larger than that budget
 * is recorded as measured with no language, so that no request pays for walking it, however many ask.
 */
@Injectable()
export class LanguagesService {
  private readonly logger = new Logger('LanguagesService');
  /** Heads being measured or waiting, by repository: each head is measured once in this process. */
  private readonly pending = new Map<number, string>();
  private readonly queue: (() => Promise<void>)[] = [];
  private running = 0;

  constructor(
    private readonly repositories: ContentRepositories,
    private readonly data: GitData,
    private readonly stats: LanguageStatStore,
    private readonly repositoryDirectory: RepositoryDirectory,
    private readonly transactions: Transactions,
    private readonly treeBudget: GitTreeBudget,
  ) {}

  /** GET /repos/{owner}/{repo}/languages: `{language: bytes}`, by name. */
  async languages(repository: RepositoryTarget): Promise<Record<string, number>> {
    const target = await this.repositories.open(repository);
    if (target.repo.isEmpty) return {};
    const head = await this.repositories.withGit(() => this.data.object(target.dir, `refs/heads/${target.repo.defaultBranch}`));
    if (!head || head.type !== 'commit') return {};
    const stored = await this.stats.ofRepository(target.repo.id);
    if (stored.length === 0 || !stored.every((row) => row.commitId === head.sha)) this.measureLater(target, head.sha);
    return Object.fromEntries(stored.filter((row) => row.language !== '').map((row) => [row.language, row.size]));
  }

  /** The measurement of `commit`, behind whatever is already waiting; none when it is already on its way. */
  private measureLater(target: ContentRepository, commit: string): void {
    if (this.pending.get(target.repo.id) === commit) return;
    this.pending.set(target.repo.id, commit);
    this.queue.push(async () => {
      try {
        await this.measure(target, commit);
      } catch (error) {
        this.logger.warn(`language statistics of repository ${target.repo.id} were not measured: ${(error as Error).message}`);
      } finally {
        if (this.pending.get(target.repo.id) === commit) this.pending.delete(target.repo.id);
      }
    });
    this.drain();
  }

  private drain(): void {
    while (this.running < MEASURING_AT_ONCE && this.queue.length > 0) {
      const next = this.queue.shift() as () => Promise<void>;
      this.running++;
      // Behind the request that asked: git run for it must not stop when that caller goes away.
      void runDetachedFromGitClient(next).finally(() => {
        this.running--;
        this.drain();
      });
    }
  }

  private async measure(target: ContentRepository, commit: string): Promise<Map<string, number>> {
    const bytes = await this.repositories.withGit(async () => {
      const paths = await this.treeBudget.count(target.dir, commit, MEASURED_PATHS_MAX);
      if (paths === null || paths > MEASURED_PATHS_MAX) return new Map<string, number>();
      const tree = await this.data.tree(target.dir, commit, true);
      return languageBytes((tree?.entries ?? []).filter((entry) => entry.type === 'blob'));
    });
    const primary = [...bytes].reduce<[string, number]>((best, entry) => (entry[1] > best[1] ? entry : best), ['', -1])[0];
    try {
      await this.transactions.run(async (tx) => {
        await this.stats.replace(tx, target.repo.id, commit, bytes);
        await this.repositoryDirectory.update(tx, target.repo.id, { primaryLanguage: primary.slice(0, 50) });
      });
    } catch (error) {
      // Another request (or instance) stored the same measurement at the same moment: its rows serve as well.
      if (!isUniqueViolation(error)) throw error;
      this.logger.debug(`language statistics of repository ${target.repo.id} were stored concurrently`);
    }
    return bytes;
  }
}
