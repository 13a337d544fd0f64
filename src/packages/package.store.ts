import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { isUniqueViolation } from '../database/transactions';
import { likePattern } from '../database/like-pattern';
import { PackageBlobEntity, PackageEntity, PackageFileEntity, PackageVersionEntity } from './package.entities';

/** A version with its package, as lists and views need them. */
export interface VersionOfPackage {
  pkg: PackageEntity;
  version: PackageVersionEntity;
}

/** A file with the blob it reads from. */
export interface StoredPackageFile {
  file: PackageFileEntity;
  blob: PackageBlobEntity;
}

export interface VersionSearch {
  type?: string;
  /** Case-insensitive substring of the package name. */
  query?: string;
}

/** The only door to the package tables. */
@Injectable()
export class PackageStore {
  constructor(private readonly dataSource: DataSource) {}

  private manager(tx?: EntityManager): EntityManager {
    return tx ?? this.dataSource.manager;
  }

  findVersion(ownerId: number, type: string, name: string, version: string): Promise<VersionOfPackage | null> {
    return this.versionQuery()
      .where('p.owner_id = :ownerId AND p.type = :type AND p.lower_name = :name AND v.lower_version = :version', {
        ownerId,
        type,
        name: name.toLowerCase(),
        version: version.toLowerCase(),
      })
      .getRawOne()
      .then((row) => (row ? toVersionOfPackage(row) : null));
  }

  async findFile(versionId: number, name: string, tx?: EntityManager): Promise<StoredPackageFile | null> {
    const file = await this.manager(tx).getRepository(PackageFileEntity).findOneBy({ versionId, lowerName: name.toLowerCase() });
    if (!file) return null;
    const blob = await this.manager(tx).getRepository(PackageBlobEntity).findOneBy({ id: file.blobId });
    return blob ? { file, blob } : null;
  }

  /**
   * The package and version rows, made when missing, inside the caller's transaction (with the file that needs
   * them, so that a version never exists without a file); concurrent callers end up with the same rows.
   */
  async ensureVersion(
    tx: EntityManager,
    ownerId: number,
    type: string,
    name: string,
    version: string,
    creatorId: number,
    now: number,
  ): Promise<VersionOfPackage> {
    const pkg = await this.insertOrFind(
      tx,
      PackageEntity,
      { ownerId, type, name, lowerName: name.toLowerCase(), createdUnix: now },
      { ownerId, type, lowerName: name.toLowerCase() },
    );
    const row = await this.insertOrFind(
      tx,
      PackageVersionEntity,
      { packageId: pkg.id, creatorId, version, lowerVersion: version.toLowerCase(), createdUnix: now },
      { packageId: pkg.id, lowerVersion: version.toLowerCase() },
    );
    return { pkg, version: row };
  }

  /**
   * The row, inserted when missing. Inside a transaction a unique violation cannot be caught and read past on
   * every database (PostgreSQL-like aborts, MySQL's gap locks), so a concurrent insert of the same key fails the
   * transaction; the caller's retry (or the client's) then finds the row.
   */
  private async insertOrFind<T extends object>(tx: EntityManager, entity: new () => T, values: Partial<T>, key: Partial<T>): Promise<T> {
    const repository = tx.getRepository(entity);
    const found = await repository.findOneBy(key as never);
    if (found) return found;
    return repository.save(repository.create(values as never) as T);
  }

  async ownsAny(ownerId: number, tx?: EntityManager): Promise<boolean> {
    return (await this.manager(tx).getRepository(PackageEntity).countBy({ ownerId })) > 0;
  }

  findBlob(sha256: string, tx?: EntityManager): Promise<PackageBlobEntity | null> {
    return this.manager(tx).getRepository(PackageBlobEntity).findOneBy({ sha256 });
  }

  insertBlob(tx: EntityManager, blob: Partial<PackageBlobEntity>): Promise<PackageBlobEntity> {
    return tx.getRepository(PackageBlobEntity).save(tx.getRepository(PackageBlobEntity).create(blob));
  }

  insertFile(tx: EntityManager, file: Partial<PackageFileEntity>): Promise<PackageFileEntity> {
    return tx.getRepository(PackageFileEntity).save(tx.getRepository(PackageFileEntity).create(file));
  }

  filesOf(versionId: number): Promise<StoredPackageFile[]> {
    return this.manager()
      .getRepository(PackageFileEntity)
      .find({ where: { versionId }, order: { id: 'ASC' } })
      .then(async (files) => {
        const blobs = await this.blobsById(files.map((file) => file.blobId));
        return files.filter((file) => blobs.has(file.blobId)).map((file) => ({ file, blob: blobs.get(file.blobId)! }));
      });
  }

  private async blobsById(ids: number[]): Promise<Map<number, PackageBlobEntity>> {
    if (ids.length === 0) return new Map();
    const blobs = await this.manager()
      .getRepository(PackageBlobEntity)
      .findBy({ id: In([...new Set(ids)]) });
    return new Map(blobs.map((blob) => [blob.id, blob]));
  }

  /**
   * Deletes file rows, then every blob row no file refers to any more, then the version and package rows
   * left without files or versions. Returns the sha256 of the blobs whose content must go after the commit.
   */
  async deleteFiles(tx: EntityManager, files: PackageFileEntity[], version: VersionOfPackage, dropVersion: boolean): Promise<string[]> {
    if (files.length > 0) await tx.getRepository(PackageFileEntity).delete({ id: In(files.map((file) => file.id)) });
    const unused: string[] = [];
    for (const blobId of new Set(files.map((file) => file.blobId))) {
      if ((await tx.getRepository(PackageFileEntity).countBy({ blobId })) > 0) continue;
      const blob = await tx.getRepository(PackageBlobEntity).findOneBy({ id: blobId });
      if (!blob) continue;
      await tx.getRepository(PackageBlobEntity).delete({ id: blobId });
      unused.push(blob.sha256);
    }
    const remaining = await tx.getRepository(PackageFileEntity).countBy({ versionId: version.version.id });
    if (dropVersion || remaining === 0) {
      await tx.getRepository(PackageVersionEntity).delete({ id: version.version.id });
      if ((await tx.getRepository(PackageVersionEntity).countBy({ packageId: version.pkg.id })) === 0) {
        await tx.getRepository(PackageEntity).delete({ id: version.pkg.id });
      }
    }
    return unused;
  }

  fileRowsOf(tx: EntityManager, versionId: number): Promise<PackageFileEntity[]> {
    return tx.getRepository(PackageFileEntity).findBy({ versionId });
  }

  /** The owner's package versions, newest first, filtered by type and name. */
  async searchVersions(ownerId: number, search: VersionSearch, page: PageQuery): Promise<Page<VersionOfPackage>> {
    const query = this.versionQuery().where('p.owner_id = :ownerId', { ownerId });
    if (search.type) query.andWhere('p.type = :type', { type: search.type });
    if (search.query) query.andWhere("p.lower_name LIKE :q ESCAPE '!'", { q: likePattern(search.query.toLowerCase()) });
    const total = await query.getCount();
    const rows = await query.orderBy('v.created_unix', 'DESC').addOrderBy('v.id', 'DESC').offset(page.offset).limit(page.limit).getRawMany();
    return { items: rows.map(toVersionOfPackage), total };
  }

  /** Bytes of the distinct blobs the owner's files use (quota item `packages`). */
  async bytesOfOwner(ownerId: number): Promise<number> {
    const row: { total: number | string | null } | undefined = await this.manager()
      .getRepository(PackageBlobEntity)
      .createQueryBuilder('b')
      .select('SUM(b.size)', 'total')
      .where((qb) => {
        const used = qb
          .subQuery()
          .select('f.blob_id')
          .from(PackageFileEntity, 'f')
          .innerJoin(PackageVersionEntity, 'v', 'v.id = f.version_id')
          .innerJoin(PackageEntity, 'p', 'p.id = v.package_id')
          .where('p.owner_id = :ownerId', { ownerId })
          .getQuery();
        return `b.id IN ${used}`;
      })
      .getRawOne();
    return Number(row?.total ?? 0);
  }

  /** The owner's package versions with the bytes of their files, largest first. */
  async versionSizesOfOwner(ownerId: number, page: PageQuery): Promise<Page<VersionOfPackage & { size: number }>> {
    const total = await this.versionQuery().where('p.owner_id = :ownerId', { ownerId }).getCount();
    const rows = await this.versionQuery()
      .innerJoin(PackageFileEntity, 'f', 'f.version_id = v.id')
      .innerJoin(PackageBlobEntity, 'b', 'b.id = f.blob_id')
      .addSelect('SUM(b.size)', 'size')
      .where('p.owner_id = :ownerId', { ownerId })
      .groupBy('v.id')
      .addGroupBy('p.id')
      .orderBy('size', 'DESC')
      .addOrderBy('v.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getRawMany();
    return { items: rows.map((row) => ({ ...toVersionOfPackage(row), size: Number(row.size ?? 0) })), total };
  }

  private versionQuery() {
    return this.manager()
      .getRepository(PackageVersionEntity)
      .createQueryBuilder('v')
      .innerJoin(PackageEntity, 'p', 'p.id = v.package_id')
      .select([
        'v.id AS v_id',
        'v.package_id AS v_package_id',
        'v.creator_id AS v_creator_id',
        'v.version AS v_version',
        'v.lower_version AS v_lower_version',
        'v.created_unix AS v_created_unix',
        'p.id AS p_id',
        'p.owner_id AS p_owner_id',
        'p.type AS p_type',
        'p.name AS p_name',
        'p.lower_name AS p_lower_name',
        'p.created_unix AS p_created_unix',
      ]);
  }
}

function toVersionOfPackage(row: Record<string, unknown>): VersionOfPackage {
  return {
    pkg: Object.assign(new PackageEntity(), {
      id: Number(row.p_id),
      ownerId: Number(row.p_owner_id),
      type: String(row.p_type),
      name: String(row.p_name),
      lowerName: String(row.p_lower_name),
      createdUnix: Number(row.p_created_unix),
    }),
    version: Object.assign(new PackageVersionEntity(), {
      id: Number(row.v_id),
      packageId: Number(row.v_package_id),
      creatorId: Number(row.v_creator_id),
      version: String(row.v_version),
      lowerVersion: String(row.v_lower_version),
      createdUnix: Number(row.v_created_unix),
    }),
  };
}
