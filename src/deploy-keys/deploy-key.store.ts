import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { Transactions } from '../database/transactions';
import { DeployKeyEntity } from './deploy-key.entity';

/** What a list of one repository's deploy keys may be narrowed to. */
export interface DeployKeyFilter {
  fingerprint?: string;
}

/** The only door to the deploy_key table. Lists are in insertion order (ascending id). */
@Injectable()
export class DeployKeyStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private keys(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(DeployKeyEntity);
  }

  insert(tx: EntityManager, key: Partial<DeployKeyEntity>): Promise<DeployKeyEntity> {
    return this.keys(tx).save(this.keys(tx).create(key));
  }

  findById(id: number): Promise<DeployKeyEntity | null> {
    return this.keys().findOneBy({ id });
  }

  /** The oldest deploy key with this material, whichever repository it belongs to (the SSH login). */
  findFirstByFingerprint(fingerprint: string): Promise<DeployKeyEntity | null> {
    return this.keys().findOne({ where: { fingerprint }, order: { id: 'ASC' } });
  }

  /**
   * Whether any repository holds this material. `locking` (inside a transaction that has just added the same
   * material as a user key) reads with a lock on MySQL, so that it waits for a deploy key added but not yet
   * committed by another transaction instead of missing it; SQLite runs one writer at a time anyway.
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

  countInRepository(repoId: number, tx?: EntityManager): Promise<number> {
    return this.keys(tx).countBy({ repoId });
  }

  async inRepository(repoId: number, fingerprint: string, tx?: EntityManager): Promise<boolean> {
    return (await this.keys(tx).countBy({ repoId, fingerprint })) > 0;
  }

  async nameTaken(repoId: number, name: string, tx?: EntityManager): Promise<boolean> {
    return (await this.keys(tx).countBy({ repoId, name })) > 0;
  }

  async list(repoId: number, page: PageQuery, filter: DeployKeyFilter): Promise<Page<DeployKeyEntity>> {
    const [items, total] = await this.keys().findAndCount({
      where: filter.fingerprint === undefined ? { repoId } : { repoId, fingerprint: filter.fingerprint },
      order: { id: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  /**
   * The `key_id` of each fingerprint: the id of the oldest deploy key with that material, the same for every
   * repository the key was added to.
   */
  async materialIds(fingerprints: string[]): Promise<Map<string, number>> {
    const unique = [...new Set(fingerprints)];
    if (unique.length === 0) return new Map();
    const rows = await this.keys()
      .createQueryBuilder('k')
      .select('k.fingerprint', 'fingerprint')
      .addSelect('MIN(k.id)', 'id')
      .where({ fingerprint: In(unique) })
      .groupBy('k.fingerprint')
      .getRawMany<{ fingerprint: string; id: number | string }>();
    return new Map(rows.map((row) => [row.fingerprint, Number(row.id)]));
  }

  /** Records a use of the key on one repository (the SSH server, after a git command that succeeded). */
  async touch(repoId: number, fingerprint: string, nowUnix: number): Promise<void> {
    await this.transactions.write((tx) => this.keys(tx).update({ repoId, fingerprint }, { updatedUnix: nowUnix }), { bookkeeping: true });
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.keys(tx).delete({ id });
  }

  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await this.keys(tx).delete({ repoId });
  }
}
