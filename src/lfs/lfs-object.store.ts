import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { RowReader } from '../database/row-reader';
import { isUniqueViolation } from '../database/transactions';
import { RepositoryEntity } from '../repos/repository.entity';
import { LfsObjectEntity } from './lfs-object.entity';

/** The only door to the LFS object rows. */
@Injectable()
export class LfsObjectStore {
  private readonly rows: RowReader<LfsObjectEntity>;
  private readonly findSql: string;

  constructor(private readonly dataSource: DataSource) {
    this.rows = new RowReader(dataSource, LfsObjectEntity);
    this.findSql = `${this.rows.select()}WHERE repository_id = ? AND oid = ?`;
  }

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  /** The rows of `repositoryId` among `oids`, by oid. */
  async inRepository(repositoryId: number, oids: string[]): Promise<Map<string, LfsObjectEntity>> {
    const found = new Map<string, LfsObjectEntity>();
    const unique = [...new Set(oids)];
    // In slices, so that a batch of thousands of objects stays within every driver's parameter limit.
    for (let start = 0; start < unique.length; start += 500) {
      const rows = await this.manager()
        .getRepository(LfsObjectEntity)
        .findBy({ repositoryId, oid: In(unique.slice(start, start + 500)) });
      for (const row of rows) found.set(row.oid, row);
    }
    return found;
  }

  /** Asked once per object a client downloads: a statement prepared once (RowReader), not a find builder. */
  find(repositoryId: number, oid: string): Promise<LfsObjectEntity | null> {
    return this.rows.one(this.findSql, [repositoryId, oid]);
  }

  /** Repositories that hold `oid`, oldest row first (at most `limit` of them). */
  holdersOf(oid: string, limit: number): Promise<RepositoryEntity[]> {
    return this.manager()
      .getRepository(RepositoryEntity)
      .createQueryBuilder('r')
      .innerJoin(LfsObjectEntity, 'o', 'o.repository_id = r.id')
      .where('o.oid = :oid', { oid })
      .orderBy('o.id', 'ASC')
      .limit(limit)
      .getMany();
  }

  /**
   * Records that `repositoryId` holds the object; a row that is already there (a concurrent upload) is kept.
   * True when this call added the row.
   */
  async link(tx: EntityManager, repositoryId: number, oid: string, size: number, now: number): Promise<boolean> {
    const repository = tx.getRepository(LfsObjectEntity);
    if (await repository.existsBy({ repositoryId, oid })) return false;
    try {
      await repository.insert({ repositoryId, oid, size, createdUnix: now });
      return true;
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      return false;
    }
  }

  /** Removes the repository's row of the object; true when there was one. */
  async unlink(tx: EntityManager, repositoryId: number, oid: string): Promise<boolean> {
    const result = await tx.getRepository(LfsObjectEntity).delete({ repositoryId, oid });
    return (result.affected ?? 0) > 0;
  }

  /** The bytes of the distinct objects held by the owner's repositories: an object in several counts once. */
  async bytesOfOwner(ownerId: number): Promise<number> {
    const rows = (await this.manager().query(
      'SELECT COALESCE(SUM(size), 0) AS bytes FROM (SELECT o.oid, MAX(o.size) AS size FROM lfs_meta_object o INNER JOIN repository r ON r.id = o.repository_id WHERE r.owner_id = ? GROUP BY o.oid) held',
      [ownerId],
    )) as { bytes: number | string }[];
    return Number(rows[0]?.bytes ?? 0);
  }

  /** Which of `oids` some repository of the owner already holds (they add nothing to the owner's usage). */
  async heldByOwner(ownerId: number, oids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < oids.length; start += 500) {
      const rows = await this.manager()
        .getRepository(LfsObjectEntity)
        .createQueryBuilder('o')
        .innerJoin(RepositoryEntity, 'r', 'r.id = o.repository_id')
        .select('DISTINCT o.oid', 'oid')
        .where('r.owner_id = :ownerId', { ownerId })
        .andWhere({ oid: In(oids.slice(start, start + 500)) })
        .getRawMany<{ oid: string }>();
      for (const row of rows) found.add(row.oid);
    }
    return found;
  }

  /**
   * Gives `toRepositoryId` a row of every object `fromRepositoryId` holds, inside `tx`; answers the bytes of
   * the rows added.
   */
  async copyRows(tx: EntityManager, fromRepositoryId: number, toRepositoryId: number, now: number): Promise<number> {
    const held = (await tx.query('SELECT COALESCE(SUM(size), 0) AS bytes FROM lfs_meta_object WHERE repository_id = ?', [fromRepositoryId])) as {
      bytes: number | string;
    }[];
    await tx.query('INSERT INTO lfs_meta_object (oid, size, repository_id, created_unix) SELECT oid, size, ?, ? FROM lfs_meta_object WHERE repository_id = ?', [
      toRepositoryId,
      now,
      fromRepositoryId,
    ]);
    return Number(held[0]?.bytes ?? 0);
  }

  /** The bytes of the distinct objects `repositoryId` holds that no repository of `ownerId` holds. */
  async bytesNewToOwner(repositoryId: number, ownerId: number): Promise<number> {
    const rows = (await this.manager().query(
      'SELECT COALESCE(SUM(o.size), 0) AS bytes FROM lfs_meta_object o WHERE o.repository_id = ? AND NOT EXISTS ' +
        '(SELECT 1 FROM lfs_meta_object h INNER JOIN repository r ON r.id = h.repository_id WHERE r.owner_id = ? AND h.oid = o.oid)',
      [repositoryId, ownerId],
    )) as { bytes: number | string }[];
    return Number(rows[0]?.bytes ?? 0);
  }

  /** Removes the repository's rows and answers the oids they held. */
  async deleteOfRepository(tx: EntityManager, repositoryId: number): Promise<string[]> {
    const rows = await tx.getRepository(LfsObjectEntity).find({ select: { oid: true }, where: { repositoryId } });
    await tx.getRepository(LfsObjectEntity).delete({ repositoryId });
    return rows.map((row) => row.oid);
  }

  /** The oids among `oids` that some repository still holds. */
  async referenced(oids: string[]): Promise<Set<string>> {
    const found = new Set<string>();
    for (let start = 0; start < oids.length; start += 500) {
      const rows = await this.manager()
        .getRepository(LfsObjectEntity)
        .createQueryBuilder('o')
        .select('DISTINCT o.oid', 'oid')
        .where({ oid: In(oids.slice(start, start + 500)) })
        .getRawMany<{ oid: string }>();
      for (const row of rows) found.add(row.oid);
    }
    return found;
  }
}
