import { AuditService } from '../audit/audit.service';
import { randomBytes, randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { generateSalt, hashToken, sameHash } from '../auth/secrets';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { CAPS, tooMany } from '../common/caps';
import { Claims } from '../claims/claims';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import type { UserEntity } from '../users/user.entity';
import { CreateOAuth2ApplicationOptions } from './create-oauth2-application.option';
import { OAuth2ApplicationStore } from './oauth2-application.store';
import { OAuth2RecordStore } from './oauth2-record.store';
import { OAuth2ApplicationEntity } from './oauth2.entities';

export interface OAuth2ApplicationWithSecret {
  application: OAuth2ApplicationEntity;
  /** The plaintext client secret, shown exactly once. */
  secret: string;
}

const BASE32 = 'abcdefghijklmnopqrstuvwxyz234567';

/** A client secret as Forgejo makes them: `gto_` and 32 random bytes in lower-case base32, without padding. */
function generateClientSecret(): string {
  const bytes = randomBytes(32);
  let bits = 0;
  let value = 0;
  let text = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      text += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) text += BASE32[(value << (5 - bits)) & 31];
  return `gto_${text}`;
}

/**
 * A user's OAuth2 applications (the clients CI servers are registered as). Deleting one revokes, in the same
 * transaction, every grant, code and token issued to it.
 */
@Injectable()
export class OAuth2ApplicationsService {
  constructor(
    private readonly applications: OAuth2ApplicationStore,
    private readonly records: OAuth2RecordStore,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly claims: Claims,
  ) {}

  list(owner: UserEntity, page: PageQuery): Promise<Page<OAuth2ApplicationEntity>> {
    return this.applications.listByUser(owner.id, page);
  }

  async get(owner: UserEntity, id: number): Promise<OAuth2ApplicationEntity> {
    const application = await this.applications.findOfUser(owner.id, id);
    if (!application) throw new NotFoundError();
    return application;
  }

  async create(owner: UserEntity, option: CreateOAuth2ApplicationOptions): Promise<OAuth2ApplicationWithSecret> {
    const secret = generateClientSecret();
    const salt = generateSalt();
    const hash = await hashToken(secret, salt);
    const now = this.clock.nowUnix();
    const application = await this.transactions.run(async (tx) => {
      await this.claims.serializeWriters(tx, `oauth2-applications:${owner.id}`);
      if ((await this.applications.countOfUser(tx, owner.id)) >= CAPS.oauth2ApplicationsPerUser) {
        throw new InvalidInputError(tooMany('OAuth2 applications', 'a user', CAPS.oauth2ApplicationsPerUser));
      }
      const created = await this.applications.insert(tx, {
        uid: owner.id,
        name: option.name,
        clientId: randomUUID(),
        clientSecretHash: hash,
        clientSecretSalt: salt,
        redirectUris: JSON.stringify(option.redirect_uris),
        confidentialClient: option.confidential_client ?? false,
        createdUnix: now,
        updatedUnix: now,
      });
      await this.audit.record(tx, { action: 'oauth2_application.create', target: applicationTarget(created), detail: applicationFacts(created) });
      return created;
    });
    return { application, secret };
  }

  /** Changes the application and, as Forgejo does, gives it a new secret (the old one stops working). */
  async update(owner: UserEntity, id: number, option: CreateOAuth2ApplicationOptions): Promise<OAuth2ApplicationWithSecret> {
    const secret = generateClientSecret();
    const salt = generateSalt();
    const hash = await hashToken(secret, salt);
    const application = await this.transactions.run(async (tx) => {
      const found = await this.applications.findOfUser(owner.id, id, tx);
      if (!found) throw new NotFoundError();
      const changes = {
        name: option.name,
        redirectUris: JSON.stringify(option.redirect_uris),
        confidentialClient: option.confidential_client ?? false,
        clientSecretHash: hash,
        clientSecretSalt: salt,
        updatedUnix: this.clock.nowUnix(),
      };
      await this.applications.update(tx, id, changes);
      const updated = Object.assign(found, changes);
      await this.audit.record(tx, { action: 'oauth2_application.edit', target: applicationTarget(updated), detail: applicationFacts(updated) });
      return updated;
    });
    return { application, secret };
  }

  async delete(owner: UserEntity, id: number): Promise<void> {
    await this.transactions.run(async (tx) => {
      const found = await this.applications.findOfUser(owner.id, id, tx);
      if (!found) throw new NotFoundError();
      await this.records.deleteByClientIds(tx, [found.clientId]);
      await this.applications.delete(tx, id);
      await this.audit.record(tx, { action: 'oauth2_application.delete', target: applicationTarget(found), detail: { client_id: found.clientId } });
    });
  }

  /** In the deleting transaction of a user: their applications, what was issued to them, and what was issued for the user. */
  async deleteAllOfUser(tx: EntityManager, uid: number): Promise<void> {
    await this.records.deleteByClientIds(tx, await this.applications.clientIdsOfUser(tx, uid));
    await this.records.deleteByAccount(tx, uid);
    await this.applications.deleteAllOfUser(tx, uid);
  }

  findByClientId(clientId: string): Promise<OAuth2ApplicationEntity | null> {
    return this.applications.findByClientId(clientId);
  }

  /** Does the presented secret match the application's stored hash? */
  async secretMatches(application: OAuth2ApplicationEntity, presented: string): Promise<boolean> {
    if (application.clientSecretHash === '' || presented === '') return false;
    return sameHash(await hashToken(presented, application.clientSecretSalt), application.clientSecretHash);
  }
}

/** An application in the audit log by its name and client id: never its secret. */
function applicationTarget(application: OAuth2ApplicationEntity) {
  return { type: 'oauth2_application' as const, id: application.id, name: application.name };
}

function applicationFacts(application: OAuth2ApplicationEntity) {
  return { client_id: application.clientId, redirect_uris: JSON.parse(application.redirectUris) as string[], confidential: application.confidentialClient };
}
