import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, MoreThan } from 'typeorm';
import { isUniqueViolation } from '../database/transactions';
import { LfsLockEntity } from './lfs-lock.entity';

/** The only door to the LFS lock rows. */
@Injectable()
export class LfsLockStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  /** The new lock, or the lock that already holds the path (in any letter case). */
  async create(lock: Omit<LfsLockEntity, 'id'>): Promise<{ created: boolean; lock: LfsLockEntity }> {
    const repository = this.manager().getRepository(LfsLockEntity);
    try {
      const { identifiers } = await repository.insert(lock);
      return { created: true, lock: { ...lock, id: Number(identifiers[0].id) } };
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      const existing = await repository.findOneBy({ repositoryId: lock.repositoryId, pathKey: lock.pathKey });
      if (!existing) throw error;
      return { created: false, lock: existing };
    }
  }

  find(repositoryId: number, id: number): Promise<LfsLockEntity | null> {
    return this.manager().getRepository(LfsLockEntity).findOneBy({ repositoryId, id });
  }

  findByPath(repositoryId: number, pathKey: string): Promise<LfsLockEntity | null> {
    return this.manager().getRepository(LfsLockEntity).findOneBy({ repositoryId, pathKey });
  }

  /** Up to `limit` locks with an id above `after`, in id order (the cursor is the last id seen). */
  page(repositoryId: number, after: number, limit: number): Promise<LfsLockEntity[]> {
    return this.manager()
      .getRepository(LfsLockEntity)
      .find({ where: { repositoryId, id: MoreThan(after) }, order: { id: 'ASC' }, take: limit });
  }

  /** True when this call removed the lock. */
  async delete(id: number): Promise<boolean> {
    return ((await this.manager().getRepository(LfsLockEntity).delete({ id })).affected ?? 0) > 0;
  }

  async deleteOfRepository(tx: EntityManager, repositoryId: number): Promise<void> {
    await this.manager(tx).getRepository(LfsLockEntity).delete({ repositoryId });
  }

  /** A deleted user's locks are released with them. */
  async deleteOfOwner(tx: EntityManager, ownerId: number): Promise<void> {
    await this.manager(tx).getRepository(LfsLockEntity).delete({ ownerId });
  }
}
