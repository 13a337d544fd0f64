import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LanguageStatEntity } from './language-stat.entity';

/**
 * The only door to language_stat. A measured repository always has at least one row: a commit without any
 * counted file is recorded by one row with the empty language, so that it is not measured again.
 */
@Injectable()
export class LanguageStatStore {
  constructor(private readonly dataSource: DataSource) {}

  ofRepository(repoId: number): Promise<LanguageStatEntity[]> {
    return this.dataSource.manager.getRepository(LanguageStatEntity).find({ where: { repoId }, order: { language: 'ASC' } });
  }

  /** Replaces the repository's statistics with those measured at `commitId`, inside the caller's transaction. */
  async replace(tx: EntityManager, repoId: number, commitId: string, bytes: Map<string, number>): Promise<void> {
    await tx.getRepository(LanguageStatEntity).delete({ repoId });
    const rows = bytes.size > 0 ? [...bytes].map(([language, size]) => ({ repoId, commitId, language, size })) : [{ repoId, commitId, language: '', size: 0 }];
    await tx.getRepository(LanguageStatEntity).insert(rows);
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(LanguageStatEntity).delete({ repoId });
  }
}
