import type { Adapter, AdapterPayload } from 'oidc-provider';
import { AuditService } from '../audit/audit.service';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { SecretBox } from '../secrets/secret-box';
import { OAuth2ApplicationStore } from './oauth2-application.store';
import { redirectUrisOf } from './oauth2-application.wire';
import { OAuth2Payload, OAuth2RecordStore } from './oauth2-record.store';

/** Kinds whose rows are looked up again after they were written (the rest are only ever found by id). */
const SESSION = 'Session';
const GRANT = 'Grant';

/**
 * The OAuth2 provider's storage adapters (oauth2-provider.ts): registered applications as its clients, every
 * other record in oauth2_record, and grants, whose creation and revocation are audited.
 */
export class OAuth2Storage {
  constructor(
    private readonly records: OAuth2RecordStore,
    private readonly applications: OAuth2ApplicationStore,
    private readonly box: SecretBox,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly audit: AuditService,
  ) {}

  /** The provider's storage: registered applications as clients, everything else in oauth2_record. */
  adapter(kind: string): Adapter {
    const records = this.records;
    const now = () => this.clock.nowUnix();
    if (kind === 'Client') {
      return {
        find: async (clientId: string) => {
          const application = await this.applications.findByClientId(clientId);
          if (!application) return undefined;
          return {
            client_id: application.clientId,
            client_name: application.name,
            ...(application.confidentialClient ? { client_secret: `${application.clientSecretSalt}$${application.clientSecretHash}` } : {}),
            redirect_uris: redirectUrisOf(application),
            grant_types: ['authorization_code', 'refresh_token'],
            response_types: ['code'],
            token_endpoint_auth_method: application.confidentialClient ? 'client_secret_basic' : 'none',
          } as AdapterPayload;
        },
        upsert: () => Promise.reject(new Error('clients are registered through the API')),
        findByUid: () => Promise.resolve(undefined),
        findByUserCode: () => Promise.resolve(undefined),
        consume: () => Promise.resolve(undefined),
        destroy: () => Promise.resolve(undefined),
        revokeByGrantId: () => Promise.resolve(undefined),
      };
    }
    const box = this.box;
    const grants = this;
    return {
      async upsert(id: string, payload: AdapterPayload, expiresIn?: number) {
        // The id is the row's key, hashed; a session's id (its cookie) is kept sealed, for lookups by uid.
        const { jti: _jti, ...stored } = payload as OAuth2Payload;
        if (kind === SESSION) stored.sealedId = box.seal(id);
        const expiresUnix = expiresIn ? now() + expiresIn : 0;
        if (kind === GRANT) return grants.saveGrant(id, stored, expiresUnix);
        await records.upsert(kind, id, stored, expiresUnix);
      },
      async find(id: string) {
        const payload = await records.find(kind, id, now());
        return payload ? withId(payload, id) : undefined;
      },
      async findByUid(uid: string) {
        const payload = await records.findSessionByUid(uid, now());
        return payload && typeof payload.sealedId === 'string' ? withId(payload, box.open(payload.sealedId)) : undefined;
      },
      findByUserCode: () => Promise.resolve(undefined),
      consume: (id: string) => records.consume(kind, id, now()),
      destroy: async (id: string) => {
        if (kind === GRANT) await grants.revokeGrant(id);
        else await records.destroy(kind, id);
      },
      revokeByGrantId: (grantId: string) => grants.revokeGrant(grantId),
    };
  }

  /**
   * A grant saved: a new one is recorded in the audit log, in the same transaction, as the consent of the user
   * the request acts for (the sign-in page runs it as that user).
   */
  private async saveGrant(id: string, payload: OAuth2Payload, expiresUnix: number): Promise<void> {
    await this.transactions.run(async (tx) => {
      const existed = (await this.records.find(GRANT, id, 0, tx)) !== undefined;
      await this.records.upsert(GRANT, id, payload, expiresUnix, tx);
      if (existed) return;
      const scope = ((payload.openid as { scope?: string } | undefined)?.scope ?? '').split(' ').filter((item) => item !== '');
      await this.audit.record(tx, {
        action: 'oauth2_grant.create',
        target: await this.applicationTarget(String(payload.clientId ?? '')),
        detail: { client_id: String(payload.clientId ?? ''), scopes: scope },
      });
    });
  }

  /** A grant revoked (its refresh token revoked or replayed): it goes with everything issued under it, and is logged. */
  private async revokeGrant(grantId: string): Promise<void> {
    await this.transactions.run(async (tx) => {
      const grant = await this.records.find(GRANT, grantId, 0, tx);
      // The provider revokes a grant through several calls at once: the one that deletes its row logs it.
      const removed = await this.records.destroy(GRANT, grantId, tx);
      await this.records.deleteByGrantId(grantId, tx);
      if (!grant || !removed) return;
      await this.audit.record(tx, {
        action: 'oauth2_grant.revoke',
        target: await this.applicationTarget(String(grant.clientId ?? '')),
        detail: { client_id: String(grant.clientId ?? ''), account_id: Number(grant.accountId ?? 0) },
      });
    });
  }

  private async applicationTarget(clientId: string): Promise<{ type: 'oauth2_application'; id: number; name: string }> {
    const application = await this.applications.findByClientId(clientId);
    return { type: 'oauth2_application', id: application?.id ?? 0, name: application?.name ?? clientId };
  }
}

function withId(payload: OAuth2Payload, id: string): AdapterPayload {
  const { sealedId: _sealedId, ...rest } = payload;
  return { ...rest, jti: id } as AdapterPayload;
}
