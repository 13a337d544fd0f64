import { AuditService } from '../../audit/audit.service';
import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../../auth/auth-context';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../../common/errors';
import { Page, PageQuery } from '../../common/paging';
import { Clock } from '../../common/time';
import { isUniqueViolation, Transactions } from '../../database/transactions';
import { UserEntity } from '../../users/user.entity';
import { UserAccounts } from '../../users/user-accounts';
import { KeyOwners } from '../key-owners';
import { GpgKeyEntity } from './gpg-key.entity';
import { GpgKeyStore } from './gpg-key.store';
import type { GpgKeyView } from './gpg-key.wire';
import { GpgEntity, GpgKeyFacts, GpgKeyParseError, InspectedKeyRing, OpenPgpAdapter } from './openpgp.adapter';
import { verificationToken } from './verification-token';
import { MAX_KEYS_PER_USER, TOO_MANY_KEYS } from '../key-owners';

const KEY_ID_TAKEN = 'A key with the same id already exists';

/** GPG keys of users. */
@Injectable()
export class GpgKeysService {
  constructor(
    private readonly keys: GpgKeyStore,
    private readonly users: UserAccounts,
    private readonly owners: KeyOwners,
    private readonly openpgp: OpenPgpAdapter,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  /** What `GET /user/gpg_key_token` hands out: the next window's token. */
  token(user: UserEntity): string {
    return verificationToken(user, this.clock.nowUnix(), 1);
  }

  listForCaller(caller: UserEntity, page: PageQuery): Promise<Page<GpgKeyView>> {
    return this.listPrimaries(caller.id, page);
  }

  /** Users group B: `{username}`'s primary keys with their subkeys. */
  async listOfUser(viewer: AuthContext, username: string, page: PageQuery): Promise<Page<GpgKeyView>> {
    const owner = await this.owners.visibleTo(viewer, username);
    return this.listPrimaries(owner.id, page);
  }

  /** The caller's key (primary or subkey), or any key for a site admin; anything else is not found. */
  async get(viewer: AuthContext, id: number): Promise<GpgKeyView> {
    const key = await this.keys.findById(id);
    if (!key || !viewer.isSelfOrAdmin(key.ownerId)) throw new NotFoundError();
    return { key, subkeys: key.primaryKeyId === '' ? await this.keys.subkeysOf([key.keyId]) : [] };
  }

  /** The checks of POST /user/gpg_keys, in Forgejo's order; returns the first imported primary key. */
  async create(owner: UserEntity, armoredKey: string, armoredSignature: string | undefined): Promise<GpgKeyView> {
    const now = this.clock.nowUnix();
    const next = verificationToken(owner, now, 1);
    const current = verificationToken(owner, now, 0);
    const signature = armoredSignature?.trim() ?? '';
    const verified = signature !== '';
    const texts = [next, current].flatMap((token) => [token, `${token}\n`, `${token}\r\n`]);
    let ring: InspectedKeyRing;
    try {
      ring = await this.openpgp.inspect(armoredKey, verified ? { armored: signature, texts, now: new Date(now * 1000) } : undefined);
    } catch (error) {
      if (error instanceof GpgKeyParseError) throw new InvalidInputError(`failed to parse gpg key ${error.message}`);
      throw error;
    }
    let entities = ring.entities;
    if (verified) {
      const signer = ring.signer;
      if (!signer) {
        throw new InvalidInputError(
          `The provided GPG key, signature and token do not match or token is out of date. Provide a valid signature for the token: ${next}`,
        );
      }
      // As Forgejo: the signature proves possession of the signing entity only; that is the one imported.
      entities = entities.filter((entity) => entity.keyId === signer);
    }
    const verifiedEmails = await this.users.verifiedEmails(owner.id);
    const rows = entities.map((entity) => ({ entity, emails: matchingEmails(entity, verifiedEmails) }));
    try {
      const stored = await this.transactions.run(async (tx) => {
        const keyIds = entities.flatMap((entity) => [entity.keyId, ...entity.subkeys.map((subkey) => subkey.keyId)]);
        if ((await this.keys.countPrimaries(owner.id, tx)) + entities.length > MAX_KEYS_PER_USER) throw new InvalidInputError(TOO_MANY_KEYS);
        // A primary key proven here (by a verified address or the token signature; otherwise this transaction
        // is rolled back below) takes its key id back from another user's unproven subkey: binding someone
        // else's key packet as an encryption subkey needs none of their secrets.
        for (const squatter of await this.keys.unprovenSubkeys(
          entities.map((entity) => entity.keyId),
          tx,
        )) {
          await this.keys.delete(tx, squatter.id);
          await this.audit.record(tx, {
            action: 'gpg_key.delete',
            target: gpgKeyTarget(squatter),
            detail: { owner_id: squatter.ownerId, reason: 'unproven subkey of a proven key' },
          });
        }
        if ((await this.keys.storedKeyIds(keyIds, tx)).length > 0) throw new InvalidInputError(KEY_ID_TAKEN);
        if (!verified && rows.some((row) => row.emails.length === 0)) {
          throw new InvalidInputError(
            `None of the emails attached to the GPG key could be found. It may still be added if you provide a valid signature for the token: ${next}`,
          );
        }
        const views: GpgKeyView[] = [];
        for (const { entity, emails } of rows) {
          const [key, ...subkeys] = await this.keys.insertAll(tx, [
            keyRow(owner, entity, '', { emails, verified, armored: entity.armored, now }),
            ...entity.subkeys.map((subkey) => keyRow(owner, subkey, entity.keyId, { emails: [], verified, armored: '', now })),
          ]);
          views.push({ key, subkeys });
          await this.audit.record(tx, {
            action: 'gpg_key.add',
            target: gpgKeyTarget(key),
            detail: { owner: owner.name, subkeys: subkeys.map((subkey) => subkey.keyId), verified },
          });
        }
        return views;
      });
      return stored[0];
    } catch (error) {
      // A concurrent upload of the same key, or one key id twice in the submission.
      if (isUniqueViolation(error)) throw new InvalidInputError(KEY_ID_TAKEN);
      throw error;
    }
  }

  /** A primary goes with its subkeys; a subkey id removes that subkey only. */
  async delete(viewer: AuthContext, id: number): Promise<void> {
    const key = await this.keys.findById(id);
    if (!key) throw new NotFoundError();
    if (!viewer.isSelfOrAdmin(key.ownerId)) throw new ForbiddenError('You do not have access to this key');
    await this.transactions.run(async (tx) => {
      await (key.primaryKeyId === '' ? this.keys.deleteWithSubkeys(tx, key) : this.keys.delete(tx, key.id));
      await this.audit.record(tx, { action: 'gpg_key.delete', target: gpgKeyTarget(key), detail: { owner_id: key.ownerId } });
    });
  }

  /** `GET /{username}.gpg`: the user's keys in one armored block, without the subkeys deleted since. */
  async armoredKeys(viewer: AuthContext, username: string): Promise<string> {
    const owner = await this.owners.visibleOrAbsent(viewer, username);
    const primaries = await this.keys.armoredPrimaries(owner.id);
    const subkeys = await this.keys.subkeysOf(primaries.map((key) => key.keyId));
    const entities = primaries.map((primary) => ({
      armored: primary.armored,
      subkeyIds: new Set(subkeys.filter((subkey) => subkey.primaryKeyId === primary.keyId).map((subkey) => subkey.keyId)),
    }));
    return this.openpgp.exportKeys(entities, primaries.length === 0 ? "This user hasn't uploaded any GPG keys." : undefined);
  }

  private async listPrimaries(ownerId: number, page: PageQuery): Promise<Page<GpgKeyView>> {
    const primaries = await this.keys.listPrimaries(ownerId, page);
    const subkeys = await this.keys.subkeysOf(primaries.items.map((key) => key.keyId));
    return {
      items: primaries.items.map((key) => ({ key, subkeys: subkeys.filter((subkey) => subkey.primaryKeyId === key.keyId) })),
      total: primaries.total,
    };
  }
}

/** The owner's verified addresses named by the key's valid identities, case-insensitively, as the owner spells them. */
function matchingEmails(entity: GpgEntity, verifiedEmails: string[]): string[] {
  const named = new Set(entity.identityEmails.map((email) => email.toLowerCase()));
  return [...new Set(verifiedEmails.filter((email) => named.has(email.toLowerCase())))];
}

function keyRow(
  owner: UserEntity,
  facts: GpgKeyFacts,
  primaryKeyId: string,
  extra: { emails: string[]; verified: boolean; armored: string; now: number },
): Partial<GpgKeyEntity> {
  return {
    ownerId: owner.id,
    keyId: facts.keyId,
    primaryKeyId,
    content: facts.publicKey,
    emails: JSON.stringify(extra.emails),
    createdUnix: facts.createdUnix,
    expiredUnix: facts.expiresUnix,
    addedUnix: extra.now,
    canSign: facts.canSign,
    canEncryptComms: facts.canEncryptComms,
    canEncryptStorage: facts.canEncryptStorage,
    canCertify: facts.canCertify,
    verified: extra.verified,
    armored: extra.armored,
  };
}

/** A key in the audit log by its key id: never the armored key. */
function gpgKeyTarget(key: GpgKeyEntity) {
  return { type: 'gpg_key' as const, id: key.id, name: key.keyId };
}
