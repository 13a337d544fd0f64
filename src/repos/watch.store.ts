import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { RepositoryEntity } from './repository.entity';
import { WatchEntity } from './watch.entity';

/** The only door to the watch table, and to the counter that mirrors it in bulk. */
@Injectable()
export class WatchStore {
  constructor(private readonly dataSource: DataSource) {}

  async exists(uid: number, repoId: number): Promise<boolean> {
    return (await this.dataSource.manager.getRepository(WatchEntity).countBy({ uid, repoId })) > 0;
  }

  /** Inserts the watch; a duplicate fails on the unique index (the caller treats it as "already watching"). */
  async insert(tx: EntityManager, uid: number, repoId: number, nowUnix: number): Promise<void> {
    await tx.getRepository(WatchEntity).insert({ uid, repoId, createdUnix: nowUnix });
  }

  /** True when a row was really removed. */
  async delete(tx: EntityManager, uid: number, repoId: number): Promise<boolean> {
    const result = await tx.getRepository(WatchEntity).delete({ uid, repoId });
    return (result.affected ?? 0) > 0;
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(WatchEntity).delete({ repoId });
  }

  /** A user is going: each repository they watched loses one from `num_watches`, then the watches go. */
  async deleteAllOfUser(tx: EntityManager, uid: number): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(RepositoryEntity)
      .set({ numWatches: () => `${tx.connection.driver.escape('num_watches')} - 1` })
      .where('id IN (SELECT w.repo_id FROM watch w WHERE w.uid = :uid)', { uid })
      .execute();
    await tx.getRepository(WatchEntity).delete({ uid });
  }
}
