import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { isUniqueViolation } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import { CollaborationEntity } from './collaboration.entity';

/** The only door to the collaboration table. */
@Injectable()
export class CollaborationStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  find(repoId: number, userId: number): Promise<CollaborationEntity | null> {
    return this.manager().getRepository(CollaborationEntity).findOneBy({ repoId, userId });
  }

  /** The collaborators of a repository, in the order they were added. */
  async listUsers(repoId: number, page: PageQuery): Promise<Page<UserEntity>> {
    const [items, total] = await this.manager()
      .getRepository(UserEntity)
      .createQueryBuilder('u')
      .innerJoin(CollaborationEntity, 'c', 'c.user_id = u.id')
      .where('c.repo_id = :repoId', { repoId })
      .orderBy('c.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getManyAndCount();
    return { items, total };
  }

  /**
   * Adds the collaboration or changes its mode, in one statement each way: two concurrent additions of the
   * same user end in one row (the unique index decides), with the mode of the last to write.
   */
  async put(repoId: number, userId: number, mode: number, now: number, tx?: EntityManager): Promise<void> {
    const repository = this.manager(tx).getRepository(CollaborationEntity);
    try {
      await repository.insert({ repoId, userId, mode, createdUnix: now, updatedUnix: now });
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await repository.update({ repoId, userId }, { mode, updatedUnix: now });
    }
  }

  /** Adds a collaboration inside the caller's transaction (a repository being created has none yet). */
  async insertIn(tx: EntityManager, repoId: number, userId: number, mode: number, now: number): Promise<void> {
    await tx.getRepository(CollaborationEntity).insert({ repoId, userId, mode, createdUnix: now, updatedUnix: now });
  }

  async delete(repoId: number, userId: number, tx?: EntityManager): Promise<boolean> {
    return ((await this.manager(tx).getRepository(CollaborationEntity).delete({ repoId, userId })).affected ?? 0) > 0;
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(CollaborationEntity).delete({ repoId });
  }

  async deleteAllOfUser(tx: EntityManager, userId: number): Promise<void> {
    await tx.getRepository(CollaborationEntity).delete({ userId });
  }
}
