import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, LessThanOrEqual } from 'typeorm';
import { changeRows, Transactions } from '../database/transactions';
import { IssuePushEntity } from './issue.entity';

/** The only door to `issue_push`: branches pushed, waiting to be read for issue references. */
@Injectable()
export class IssuePushStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  async insert(tx: EntityManager, rows: Partial<IssuePushEntity>[]): Promise<void> {
    if (rows.length > 0) await tx.getRepository(IssuePushEntity).insert(rows);
  }

  /**
   * The oldest free row, held by this instance until `until` (a conditional update: of two instances reaching
   * for one row, one gets it). Null when none is free. The claim and the row's removal are bookkeeping: lost with
   * the machine, a push's references are read again, and reading them twice records nothing twice.
   */
  async claimNext(now: number, until: number): Promise<IssuePushEntity | null> {
    for (let tries = 0; tries < 5; tries++) {
      const row = await this.dataSource.getRepository(IssuePushEntity).findOne({ where: { claimedUntil: LessThanOrEqual(now) }, order: { id: 'ASC' } });
      if (!row) return null;
      const claimed = await this.transactions.runBookkeeping(
        (tx) => changeRows(tx, 'UPDATE issue_push SET claimed_until = ? WHERE id = ? AND claimed_until <= ?', [until, row.id, now]),
        BOOKKEEPING,
      );
      if (claimed === 1) return { ...row, claimedUntil: until };
    }
    return null;
  }

  async delete(id: number): Promise<void> {
    await this.transactions.write((tx) => tx.getRepository(IssuePushEntity).delete({ id }), BOOKKEEPING);
  }

  /** A failed reading: tried again after `retryAt`. */
  async retryLater(id: number, attempts: number, retryAt: number): Promise<void> {
    await this.transactions.write((tx) => tx.getRepository(IssuePushEntity).update({ id }, { attempts, claimedUntil: retryAt }), BOOKKEEPING);
  }

  /** A repository is going: its pushes are not read. */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await tx.getRepository(IssuePushEntity).delete({ repoId });
  }
}

/** The queue's own rows: no kept answer shows them. */
const BOOKKEEPING = { bookkeeping: true, unseen: true };
