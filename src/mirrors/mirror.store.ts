import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { RepositoryEntity } from '../repos/repository.entity';
import { MirrorEntity } from './mirror.entity';

/** A due mirror as the scheduler sees it. */
export interface DueMirror {
  repoId: number;
  ownerId: number;
}

/** The only door to the mirror table. */
@Injectable()
export class MirrorStore {
  constructor(private readonly dataSource: DataSource) {}

  private mirrors(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(MirrorEntity);
  }

  findByRepository(repoId: number): Promise<MirrorEntity | null> {
    return this.mirrors().findOneBy({ repoId });
  }

  insert(tx: EntityManager, mirror: Omit<MirrorEntity, 'id' | 'claimedBy' | 'claimExpiresUnix'>): Promise<MirrorEntity> {
    const repository = this.mirrors(tx);
    return repository.save(repository.create({ ...mirror, claimedBy: '', claimExpiresUnix: 0 }));
  }

  /** How many pull mirrors `ownerId` owns. */
  async countOfOwner(ownerId: number): Promise<number> {
    const rows = (await this.dataSource.query('SELECT COUNT(*) AS n FROM mirror m INNER JOIN repository r ON r.id = m.repo_id WHERE r.owner_id = ?', [
      ownerId,
    ])) as { n: number | string }[];
    return Number(rows[0]?.n ?? 0);
  }

  async deleteOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.mirrors(tx).delete({ repoId });
  }

  async setInterval(tx: EntityManager, repoId: number, intervalSeconds: number, nextUpdateUnix: number): Promise<void> {
    await this.mirrors(tx).update({ repoId }, { intervalSeconds, nextUpdateUnix });
  }

  /**
   * Mirrors due at `now` (next update passed, not "never"), oldest `mirror_updated` first, without those a live
   * claim holds or `exclude` lists (already queued here).
   */
  async findDue(now: number, limit: number, exclude: number[]): Promise<DueMirror[]> {
    const query = this.dataSource
      .createQueryBuilder()
      .select('m.repo_id', 'repoId')
      .addSelect('r.owner_id', 'ownerId')
      .from(MirrorEntity, 'm')
      .innerJoin(RepositoryEntity, 'r', 'r.id = m.repo_id')
      .where('m.next_update_unix > 0 AND m.next_update_unix <= :now', { now })
      .andWhere('m.claim_expires_unix < :now', { now })
      .orderBy('r.mirror_updated_unix', 'ASC')
      .addOrderBy('m.id', 'ASC')
      .limit(limit);
    if (exclude.length > 0) query.andWhere('m.repo_id NOT IN (:...exclude)', { exclude });
    const rows = await query.getRawMany<{ repoId: number | string; ownerId: number | string }>();
    return rows.map((row) => ({ repoId: Number(row.repoId), ownerId: Number(row.ownerId) }));
  }

  /**
   * The sync claim: one conditional UPDATE, so that of two processes sharing the database exactly one wins. A
   * claim whose holder died is void once `claim_expires_unix` has passed.
   */
  async claim(repoId: number, holder: string, now: number, expiresUnix: number): Promise<boolean> {
    const result = await this.dataSource
      .createQueryBuilder()
      .update(MirrorEntity)
      .set({ claimedBy: holder, claimExpiresUnix: expiresUnix })
      .where('repo_id = :repoId AND (claim_expires_unix < :now OR claimed_by = :holder)', { repoId, now, holder })
      .execute();
    return (result.affected ?? 0) > 0;
  }

  /** Ends the holder's claim and sets the next due time, in the same statement. */
  async release(repoId: number, holder: string, nextUpdateUnix: number | null): Promise<void> {
    const changes: Partial<MirrorEntity> = { claimedBy: '', claimExpiresUnix: 0 };
    if (nextUpdateUnix !== null) changes.nextUpdateUnix = nextUpdateUnix;
    await this.dataSource
      .createQueryBuilder()
      .update(MirrorEntity)
      .set(changes)
      .where('repo_id = :repoId AND claimed_by = :holder', { repoId, holder })
      .execute();
  }
}
