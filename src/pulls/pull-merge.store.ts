import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { PullAutoMergeEntity, PullMergeIntentEntity } from './pull-merge.entity';

/** The only door to `pull_merge_intent` and `pull_auto_merge`. */
@Injectable()
export class PullMergeStore {
  constructor(private readonly dataSource: DataSource) {}

  private intentRows(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(PullMergeIntentEntity);
  }

  private autoMergeRows(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(PullAutoMergeEntity);
  }

  /** Replaces the pull request's intent (a merger that died before its ref update leaves one behind). */
  async recordIntent(tx: EntityManager, intent: Omit<PullMergeIntentEntity, 'id'>): Promise<void> {
    await this.intentRows(tx).delete({ pullId: intent.pullId });
    await this.intentRows(tx).insert(intent);
  }

  async markPushRecorded(tx: EntityManager, pullId: number): Promise<void> {
    await this.intentRows(tx).update({ pullId }, { pushRecorded: true });
  }

  intentOf(pullId: number, tx?: EntityManager): Promise<PullMergeIntentEntity | null> {
    return this.intentRows(tx).findOneBy({ pullId });
  }

  async dropIntent(tx: EntityManager | undefined, pullId: number): Promise<void> {
    await this.intentRows(tx).delete({ pullId });
  }

  /** A deleted repository's intents and the scheduled merges of its pull requests (before those go). */
  async deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.intentRows(tx).delete({ repoId });
    await tx.query('DELETE FROM pull_auto_merge WHERE pull_id IN (SELECT id FROM pull_request WHERE base_repo_id = ?)', [repoId]);
  }

  /** The first `limit` intents, oldest first (a crash leaves a few at most). */
  intents(limit: number): Promise<PullMergeIntentEntity[]> {
    return this.intentRows().find({ order: { id: 'ASC' }, take: limit });
  }

  autoMergeOf(pullId: number, tx?: EntityManager): Promise<PullAutoMergeEntity | null> {
    return this.autoMergeRows(tx).findOneBy({ pullId });
  }

  /** False when one is already scheduled for the pull request. */
  async scheduleAutoMerge(tx: EntityManager, row: Omit<PullAutoMergeEntity, 'id'>): Promise<boolean> {
    if (await this.autoMergeRows(tx).findOneBy({ pullId: row.pullId })) return false;
    await this.autoMergeRows(tx).insert(row);
    return true;
  }

  /** True when one was removed. */
  async cancelAutoMerge(tx: EntityManager | undefined, pullId: number): Promise<boolean> {
    const result = await this.autoMergeRows(tx).delete({ pullId });
    return (result.affected ?? 0) > 0;
  }

  /** Every scheduled merge (a handful at a time, waiting for their checks). */
  allAutoMerges(): Promise<PullAutoMergeEntity[]> {
    return this.autoMergeRows().find({ order: { id: 'ASC' }, take: 1000 });
  }

  autoMergesOf(pullIds: number[]): Promise<PullAutoMergeEntity[]> {
    if (pullIds.length === 0) return Promise.resolve([]);
    return this.autoMergeRows().findBy({ pullId: In(pullIds) });
  }
}
