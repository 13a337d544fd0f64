import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { changeRows, insertUnlessPresent, Transactions } from '../database/transactions';

/** A claim in flight, as the deciding code sees it. */
export interface ActiveClaim {
  id: string;
  item: string;
  ownerId: number;
  amount: number;
}

export interface NewClaim extends ActiveClaim {
  scope: string;
  expiresUnix: number;
  createdUnix: number;
}

/**
 * The only door to `claim` and `claim_ledger` (migration 1764650000000). Every statement is a single-row
 * conditional write or a plain read, so it means the same on SQLite, on one MySQL server and on a Galera
 * cluster (where a conflicting write on another node makes the later commit fail with 1213 and the
 * transaction is tried again); no lock is held across statements.
 */
@Injectable()
export class ClaimStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  /** The scope's version; its ledger row is created (at 0) the first time. */
  async version(scope: string): Promise<number> {
    const read = async () => (await this.dataSource.query('SELECT version FROM claim_ledger WHERE scope = ?', [scope])) as { version: number | string }[];
    let rows = await read();
    if (rows.length === 0) {
      const sql = insertUnlessPresent(this.dataSource.manager, 'claim_ledger', ['scope', 'version']);
      await this.transactions.write((tx) => changeRows(tx, sql, [scope, 0]), UNSEEN);
      rows = await read();
    }
    return Number(rows[0].version);
  }

  /** The claims of `scope` that have not expired at `nowUnix`. */
  async active(scope: string, nowUnix: number): Promise<ActiveClaim[]> {
    const rows = (await this.dataSource.query('SELECT id, item, owner_id, amount FROM claim WHERE scope = ? AND expires_unix > ?', [scope, nowUnix])) as {
      id: string;
      item: string;
      owner_id: number | string;
      amount: number | string;
    }[];
    return rows.map((row) => ({ id: row.id, item: row.item, ownerId: Number(row.owner_id), amount: Number(row.amount) }));
  }

  /**
   * Moves the scope from `version` to the next and records the claim, in `tx`; false (nothing written) when
   * the scope moved since `version` was read, i.e. what the claim was decided on is out of date.
   */
  async take(tx: EntityManager, claim: NewClaim, version: number): Promise<boolean> {
    const moved = await changeRows(tx, 'UPDATE claim_ledger SET version = version + 1 WHERE scope = ? AND version = ?', [claim.scope, version]);
    if (moved !== 1) return false;
    await changeRows(tx, 'INSERT INTO claim (id, scope, item, owner_id, amount, expires_unix, created_unix) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      claim.id,
      claim.scope,
      claim.item,
      claim.ownerId,
      claim.amount,
      claim.expiresUnix,
      claim.createdUnix,
    ]);
    return true;
  }

  /**
   * Removes the claim in the transaction that records what it was for, and moves the scope's version, so that
   * a claim decided on a reading taken before this commit is decided again.
   */
  async settle(tx: EntityManager, scope: string, id: string): Promise<void> {
    await changeRows(tx, 'DELETE FROM claim WHERE id = ?', [id]);
    await changeRows(tx, 'UPDATE claim_ledger SET version = version + 1 WHERE scope = ?', [scope]);
  }

  /**
   * Moves the scope's version in `tx` (creating its ledger row the first time): a real write of one row, so two
   * transactions doing it at once are ordered (one waits on a server, one fails certification with 1213 on
   * Galera and runs again), and each reads after the other's commit.
   */
  async advance(tx: EntityManager, scope: string): Promise<void> {
    if ((await changeRows(tx, 'UPDATE claim_ledger SET version = version + 1 WHERE scope = ?', [scope])) === 1) return;
    if ((await changeRows(tx, insertUnlessPresent(tx, 'claim_ledger', ['scope', 'version']), [scope, 1])) === 1) return;
    await changeRows(tx, 'UPDATE claim_ledger SET version = version + 1 WHERE scope = ?', [scope]);
  }

  /** Gives a claim back (nothing was recorded for it); removing what is already gone is harmless. */
  async drop(id: string): Promise<void> {
    await this.transactions.write((tx) => changeRows(tx, 'DELETE FROM claim WHERE id = ?', [id]), UNSEEN);
  }

  async extend(id: string, expiresUnix: number): Promise<void> {
    await this.transactions.write((tx) => changeRows(tx, 'UPDATE claim SET expires_unix = ? WHERE id = ?', [expiresUnix, id]), UNSEEN);
  }

  async clearExpired(beforeUnix: number): Promise<void> {
    await this.transactions.write((tx) => changeRows(tx, 'DELETE FROM claim WHERE expires_unix < ?', [beforeUnix]), UNSEEN);
  }
}

/** Claims are the deciding code's own records: durable like any write, shown in no kept answer. */
const UNSEEN = { unseen: true };
