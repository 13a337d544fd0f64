import { createHash } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Between, DataSource, EntityManager, In } from 'typeorm';
import { Transactions } from '../database/transactions';
import { OAuth2RecordEntity, OAuth2SigningKeyEntity } from './oauth2.entities';

/** What the provider stores of one of its models, as it hands it to its adapter. */
export type OAuth2Payload = Record<string, unknown> & {
  grantId?: string;
  clientId?: string;
  accountId?: string;
  uid?: string;
  consumed?: unknown;
};

/** Row ids: the SHA-256 of the provider's id, which for codes and tokens is the bearer secret itself. */
export function recordIdHash(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('hex');
}

const SIGNING_KEY_ID = 1;

/** The only door to the oauth2_record and oauth2_signing_key tables. */
@Injectable()
export class OAuth2RecordStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private records(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(OAuth2RecordEntity);
  }

  /** `work` in the caller's transaction, or as a write of its own (Transactions.write). */
  private writing<T>(tx: EntityManager | undefined, work: (tx: EntityManager) => Promise<T>): Promise<T> {
    return tx ? work(tx) : this.transactions.write(work);
  }

  async upsert(kind: string, id: string, payload: OAuth2Payload, expiresUnix: number, tx?: EntityManager): Promise<void> {
    const accountId = Number(payload.accountId);
    await this.writing(tx, (writer) =>
      this.records(writer).upsert(
        {
          kind,
          idHash: recordIdHash(id),
          payload: JSON.stringify(payload),
          // A grant's own row carries its id here too, so that revoking the grant removes it with its tokens.
          grantId: kind === 'Grant' ? id : typeof payload.grantId === 'string' ? payload.grantId : '',
          clientId: typeof payload.clientId === 'string' ? payload.clientId : '',
          accountId: Number.isSafeInteger(accountId) ? accountId : 0,
          uid: kind === 'Session' && typeof payload.uid === 'string' ? payload.uid : '',
          expiresUnix,
          consumedUnix: 0,
        },
        ['kind', 'idHash'],
      ),
    );
  }

  /** The stored payload, or undefined when missing or expired at `nowUnix`. */
  async find(kind: string, id: string, nowUnix: number, tx?: EntityManager): Promise<OAuth2Payload | undefined> {
    const row = await this.records(tx).findOneBy({ kind, idHash: recordIdHash(id) });
    return row ? this.payloadOf(row, nowUnix) : undefined;
  }

  async findSessionByUid(uid: string, nowUnix: number): Promise<OAuth2Payload | undefined> {
    const row = await this.records().findOneBy({ kind: 'Session', uid });
    return row ? this.payloadOf(row, nowUnix) : undefined;
  }

  async consume(kind: string, id: string, nowUnix: number): Promise<void> {
    const row = await this.records().findOneBy({ kind, idHash: recordIdHash(id) });
    if (!row) return;
    const payload = JSON.parse(row.payload) as OAuth2Payload;
    payload.consumed = nowUnix;
    await this.transactions.write((tx) => this.records(tx).update({ kind, idHash: row.idHash }, { payload: JSON.stringify(payload), consumedUnix: nowUnix }));
  }

  /** Deletes one row; answers whether this call deleted it (of concurrent deletes, exactly one does). */
  async destroy(kind: string, id: string, tx?: EntityManager): Promise<boolean> {
    return ((await this.writing(tx, (writer) => this.records(writer).delete({ kind, idHash: recordIdHash(id) }))).affected ?? 0) > 0;
  }

  /** Revokes a grant: every code and token issued under it goes with it. */
  async deleteByGrantId(grantId: string, tx?: EntityManager): Promise<void> {
    if (grantId === '') return;
    await this.writing(tx, (writer) => this.records(writer).delete({ grantId }));
  }

  /** Everything issued to these clients (applications being deleted). */
  async deleteByClientIds(tx: EntityManager, clientIds: string[]): Promise<void> {
    if (clientIds.length === 0) return;
    await this.records(tx).delete({ clientId: In(clientIds) });
  }

  /** Everything issued for this account (a user being deleted). */
  async deleteByAccount(tx: EntityManager, accountId: number): Promise<void> {
    await this.records(tx).delete({ accountId });
  }

  /** The scopes the user consented to in the grant, or undefined when it is gone (revoked or expired). */
  async grantScope(grantId: string, nowUnix: number): Promise<string | undefined> {
    if (grantId === '') return undefined;
    const grant = await this.find('Grant', grantId, nowUnix);
    if (!grant) return undefined;
    const openid = grant.openid as { scope?: unknown } | undefined;
    return typeof openid?.scope === 'string' ? openid.scope : '';
  }

  /** Removes what expired before `nowUnix` (rows without an expiry, 0, stay). */
  async purgeExpired(nowUnix: number): Promise<number> {
    const result = await this.transactions.write((tx) => this.records(tx).delete({ expiresUnix: Between(1, nowUnix - 1) }), {
      bookkeeping: true,
      unseen: true,
    });
    return result.affected ?? 0;
  }

  async findSealedSigningKey(): Promise<string | undefined> {
    return (await this.dataSource.manager.getRepository(OAuth2SigningKeyEntity).findOneBy({ id: SIGNING_KEY_ID }))?.sealedJwk;
  }

  /** Stores the key unless another instance stored one first; either way, answers the stored one. */
  async storeSigningKeyOnce(sealedJwk: string, nowUnix: number): Promise<string> {
    try {
      await this.transactions.write((tx) => tx.getRepository(OAuth2SigningKeyEntity).insert({ id: SIGNING_KEY_ID, sealedJwk, createdUnix: nowUnix }), {
        unseen: true,
      });
    } catch (error) {
      const stored = await this.findSealedSigningKey();
      if (stored === undefined) throw error;
      return stored;
    }
    return sealedJwk;
  }

  private payloadOf(row: OAuth2RecordEntity, nowUnix: number): OAuth2Payload | undefined {
    if (row.expiresUnix !== 0 && row.expiresUnix <= nowUnix) return undefined;
    return JSON.parse(row.payload) as OAuth2Payload;
  }
}
