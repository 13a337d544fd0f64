import type { RepositoryTarget } from '../access/repository-policy';
import { Injectable, Logger } from '@nestjs/common';
import { ContentRepositories, ContentRepository } from '../content/content-repository';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { GitData } from '../git/git-data';
import { RepositoryDirectory } from '../repos/repository-directory';
import { languageBytes } from './language-detection';
import { LanguageStatStore } from './language-stat.store';

/**
 * Bytes per language at the head of the default branch. Measured once per head commit and stored with that
 * commit's id: a request whose head matches the stored id reads the rows; the first request after a push
 * measures again (one tree listing) and stores the result and the repository's primary language, which the
 * Repository JSON shows as `language`.
 */
@Injectable()
export class LanguagesService {
  private readonly logger = new Logger('LanguagesService');

  constructor(
    private readonly repositories: ContentRepositories,
    private readonly data: GitData,
    private readonly stats: LanguageStatStore,
    private readonly repositoryDirectory: RepositoryDirectory,
    private readonly transactions: Transactions,
  ) {}

  /** GET /repos/{owner}/{repo}/languages: `{language: bytes}`, by name. */
  async languages(repository: RepositoryTarget): Promise<Record<string, number>> {
    const target = await this.repositories.open(repository);
    if (target.repo.isEmpty) return {};
    const head = await this.repositories.withGit(() => this.data.object(target.dir, `refs/heads/${target.repo.defaultBranch}`));
    if (!head || head.type !== 'commit') return {};
    const stored = await this.stats.ofRepository(target.repo.id);
    if (stored.length > 0 && stored.every((row) => row.commitId === head.sha)) {
      return Object.fromEntries(stored.filter((row) => row.language !== '').map((row) => [row.language, row.size]));
    }
    const bytes = await this.measure(target, head.sha);
    return Object.fromEntries([...bytes].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  }

  private async measure(target: ContentRepository, commit: string): Promise<Map<string, number>> {
    const tree = await this.repositories.withGit(() => this.data.tree(target.dir, commit, true));
    const bytes = languageBytes((tree?.entries ?? []).filter((entry) => entry.type === 'blob'));
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
