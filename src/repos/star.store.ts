import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { changeRows, insertUnlessPresent } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import { RepositoryEntity } from './repository.entity';
import { StarEntity } from './star.entity';

/** The only door to the star table, and to the counters that mirror it in bulk. */
@Injectable()
export class StarStore {
  constructor(private readonly dataSource: DataSource) {}

  async exists(uid: number, repoId: number): Promise<boolean> {
    return (await this.dataSource.manager.getRepository(StarEntity).countBy({ uid, repoId })) > 0;
  }

  /**
   * Inserts the star unless it is there; true when a row was inserted. The unique index decides, also between
   * concurrent callers, and a duplicate costs no error.
   */
  async insertIfAbsent(tx: EntityManager, uid: number, repoId: number, nowUnix: number): Promise<boolean> {
    return (await changeRows(tx, insertUnlessPresent(tx, 'star', ['uid', 'repo_id', 'created_unix']), [uid, repoId, nowUnix])) > 0;
  }

  /** True when a row was really removed. */
  async delete(tx: EntityManager, uid: number, repoId: number): Promise<boolean> {
    return (await changeRows(tx, 'DELETE FROM star WHERE uid = ? AND repo_id = ?', [uid, repoId])) > 0;
  }

  /** A repository is going: each user who starred it loses one from `num_stars`, then the stars go. */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(UserEntity)
      .set({ numStars: () => `${tx.connection.driver.escape('num_stars')} - 1` })
      .where('id IN (SELECT s.uid FROM star s WHERE s.repo_id = :repoId)', { repoId })
      .execute();
    await tx.getRepository(StarEntity).delete({ repoId });
  }

  /** A user is going: each repository they starred loses one from `num_stars`, then the stars go. */
  async deleteAllOfUser(tx: EntityManager, uid: number): Promise<void> {
    await tx
      .createQueryBuilder()
      .update(RepositoryEntity)
      .set({ numStars: () => `${tx.connection.driver.escape('num_stars')} - 1` })
      .where('id IN (SELECT s.repo_id FROM star s WHERE s.uid = :uid)', { uid })
      .execute();
    await tx.getRepository(StarEntity).delete({ uid });
  }
}
