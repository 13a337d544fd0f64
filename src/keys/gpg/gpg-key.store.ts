import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In, Not } from 'typeorm';
import { Page, PageQuery } from '../../common/paging';
import { GpgKeyEntity } from './gpg-key.entity';

/** The only door to the gpg_key table. Lists are in insertion order (ascending id). */
@Injectable()
export class GpgKeyStore {
  constructor(private readonly dataSource: DataSource) {}

  private keys(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(GpgKeyEntity);
  }

  /** Inserts rows in order (a primary before its subkeys); returns them with their ids. */
  async insertAll(tx: EntityManager, rows: Partial<GpgKeyEntity>[]): Promise<GpgKeyEntity[]> {
    const saved: GpgKeyEntity[] = [];
    for (const row of rows) saved.push(await this.keys(tx).save(this.keys(tx).create(row)));
    return saved;
  }

  findById(id: number): Promise<GpgKeyEntity | null> {
    return this.keys().findOneBy({ id });
  }

  /** Primary keys of the owner (subkeys come with their primary). */
  countPrimaries(ownerId: number, tx?: EntityManager): Promise<number> {
    return this.keys(tx).count({ where: { ownerId, primaryKeyId: '' } });
  }

  /**
   * Stored subkeys with these key ids that nothing proves: not signing subkeys (those are stored only with a
   * back-signature), so their key packet may be anyone's.
   */
  unprovenSubkeys(keyIds: string[], tx?: EntityManager): Promise<GpgKeyEntity[]> {
    if (keyIds.length === 0) return Promise.resolve([]);
    return this.keys(tx).find({ where: { keyId: In(keyIds), primaryKeyId: Not(''), canSign: false } });
  }

  /** Which of these key ids are already stored, as primary or subkey ids, for any user. */
  async storedKeyIds(keyIds: string[], tx?: EntityManager): Promise<string[]> {
    if (keyIds.length === 0) return [];
    const rows = await this.keys(tx).find({ select: { keyId: true }, where: { keyId: In(keyIds) } });
    return rows.map((row) => row.keyId);
  }

  /** A user's primary keys. */
  async listPrimaries(ownerId: number, page: PageQuery): Promise<Page<GpgKeyEntity>> {
    const [items, total] = await this.keys().findAndCount({
      where: { ownerId, primaryKeyId: '' },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  /** The subkeys of these primary keys. */
  subkeysOf(primaryKeyIds: string[]): Promise<GpgKeyEntity[]> {
    if (primaryKeyIds.length === 0) return Promise.resolve([]);
    return this.keys().find({ where: { primaryKeyId: In(primaryKeyIds) }, order: { id: 'ASC' } });
  }

  /** A user's primary keys with their armored text, for the plain-text export. */
  armoredPrimaries(ownerId: number): Promise<GpgKeyEntity[]> {
    return this.keys()
      .createQueryBuilder('key')
      .addSelect('key.armored')
      .where('key.ownerId = :ownerId AND key.primaryKeyId = :none', { ownerId, none: '' })
      .orderBy('key.id', 'ASC')
      .getMany();
  }

  /** A primary key and all its subkeys. */
  async deleteWithSubkeys(tx: EntityManager, primary: GpgKeyEntity): Promise<void> {
    await this.keys(tx).delete({ primaryKeyId: primary.keyId });
    await this.keys(tx).delete({ id: primary.id });
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.keys(tx).delete({ id });
  }

  async deleteAllOfUser(tx: EntityManager, ownerId: number): Promise<void> {
    await this.keys(tx).delete({ ownerId });
  }
}
