import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../../common/paging';
import { Transactions } from '../../database/transactions';
import { PublicKeyEntity } from './public-key.entity';

/** The only door to the public_key table. Lists are in insertion order (ascending id). */
@Injectable()
export class PublicKeyStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private keys(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(PublicKeyEntity);
  }

  insert(tx: EntityManager, key: Partial<PublicKeyEntity>): Promise<PublicKeyEntity> {
    return this.keys(tx).save(this.keys(tx).create(key));
  }

  findById(id: number): Promise<PublicKeyEntity | null> {
    return this.keys().findOneBy({ id });
  }

  findByFingerprint(fingerprint: string): Promise<PublicKeyEntity | null> {
    return this.keys().findOneBy({ fingerprint });
  }

  /** Records a use of the key (the SSH server, after a git command that succeeded). */
  async touch(id: number, nowUnix: number): Promise<void> {
    await this.transactions.write((tx) => this.keys(tx).update({ id }, { updatedUnix: nowUnix }), { bookkeeping: true });
  }

  /**
   * Whether a user holds this material. `locking` (inside a transaction that has just added the same material
   * as a deploy key) reads with a lock on MySQL, so that it waits for a user key added but not yet committed
   * by another transaction instead of missing it; SQLite runs one writer at a time anyway.
   */
  async fingerprintTaken(fingerprint: string, tx?: EntityManager, options: { locking?: boolean } = {}): Promise<boolean> {
    const locking = options.locking && tx && tx.connection.options.type === 'mysql';
    const found = await this.keys(tx).findOne({
      where: { fingerprint },
      select: { id: true },
      ...(locking ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
    return found !== null;
  }

  countByOwner(ownerId: number, tx?: EntityManager): Promise<number> {
    return (tx ?? this.dataSource.manager).count(PublicKeyEntity, { where: { ownerId } });
  }

  async titleTaken(ownerId: number, name: string, tx?: EntityManager): Promise<boolean> {
    return (await this.keys(tx).countBy({ ownerId, name })) > 0;
  }

  /** One user's keys, optionally only the one with that fingerprint. */
  async listByOwner(ownerId: number, page: PageQuery, fingerprint?: string): Promise<Page<PublicKeyEntity>> {
    const [items, total] = await this.keys().findAndCount({
      where: fingerprint === undefined ? { ownerId } : { ownerId, fingerprint },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  /** The key with that fingerprint, whoever owns it (fingerprints are unique, so at most one). */
  async listByFingerprint(fingerprint: string, page: PageQuery): Promise<Page<PublicKeyEntity>> {
    const [items, total] = await this.keys().findAndCount({
      where: { fingerprint },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  listAllByOwner(ownerId: number): Promise<PublicKeyEntity[]> {
    return this.keys().find({ where: { ownerId }, order: { id: 'ASC' } });
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.keys(tx).delete({ id });
  }

  async deleteAllOfUser(tx: EntityManager, ownerId: number): Promise<void> {
    await this.keys(tx).delete({ ownerId });
  }
}
