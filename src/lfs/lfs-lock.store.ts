import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { LfsLockEntity } from './lfs-lock.entity';

/** The only door to the LFS lock rows. */
@Injectable()
export class LfsLockStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  async deleteOfRepository(tx: EntityManager, repositoryId: number): Promise<void> {
    await this.manager(tx).getRepository(LfsLockEntity).delete({ repositoryId });
  }
}
