import { AuditService } from '../../audit/audit.service';
import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../../auth/auth-context';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../../common/errors';
import { Page, PageQuery } from '../../common/paging';
import { Clock } from '../../common/time';
import { LifecycleEvents } from '../../events/lifecycle-events';
import { isUniqueViolation, Transactions } from '../../database/transactions';
import { UserEntity } from '../../users/user.entity';
import { UserAccounts } from '../../users/user-accounts';
import { KeyOwners } from '../key-owners';
import { PublicKeyEntity } from './public-key.entity';
import { PublicKeyStore } from './public-key.store';
import type { OwnedPublicKey } from './public-key.wire';
import { checkSshPublicKey, SshKeyError, SshPublicKey } from './ssh-key-parser';
import type { EntityManager } from 'typeorm';
import { MAX_KEYS_PER_USER, TOO_MANY_KEYS } from '../key-owners';

/** Forgejo's answer when key material is a user's key already, or (for a user key) a deploy key. */
export const KEY_MATERIAL_TAKEN = 'Key content has been used as non-deploy key';
const TITLE_TAKEN = 'Key title has been used';

/** The key parsed and checked against the key policy; 422 `Invalid key content: …` as Forgejo. */
export function acceptableSshKey(content: string): SshPublicKey {
  try {
    return checkSshPublicKey(content);
  } catch (error) {
    if (error instanceof SshKeyError) throw new InvalidInputError(`Invalid key content: ${error.message}`);
    throw error;
  }
}

/** SSH public keys of users. */
@Injectable()
export class PublicKeysService {
  constructor(
    private readonly keys: PublicKeyStore,
    private readonly users: UserAccounts,
    private readonly owners: KeyOwners,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly events: LifecycleEvents,
  ) {}

  /** Whether this material is a user's key; `locking` as PublicKeyStore.fingerprintTaken. */
  materialTaken(fingerprint: string, tx: EntityManager, options: { locking?: boolean } = {}): Promise<boolean> {
    return this.keys.fingerprintTaken(fingerprint, tx, options);
  }

  /** The caller's keys; with a fingerprint, the key with that fingerprint whoever owns it. */
  async listForCaller(caller: UserEntity, page: PageQuery, fingerprint: string | undefined): Promise<Page<OwnedPublicKey>> {
    const found = fingerprint ? await this.keys.listByFingerprint(fingerprint, page) : await this.keys.listByOwner(caller.id, page);
    return this.withOwners(found);
  }

  /** Users group B: `{username}`'s keys; a fingerprint filter searches only that user's keys. */
  async listOfUser(viewer: AuthContext, username: string, page: PageQuery, fingerprint: string | undefined): Promise<Page<OwnedPublicKey>> {
    const owner = await this.owners.visibleTo(viewer, username);
    const found = await this.keys.listByOwner(owner.id, page, fingerprint || undefined);
    return { items: found.items.map((key) => ({ key, owner })), total: found.total };
  }

  /** The caller's own key, or any key for a site admin; anything else is not found. */
  async get(viewer: AuthContext, id: number): Promise<OwnedPublicKey> {
    const key = await this.keys.findById(id);
    if (!key || !viewer.isSelfOrAdmin(key.ownerId)) throw new NotFoundError();
    return this.withOwner(key);
  }

  async create(owner: UserEntity, title: string, content: string): Promise<OwnedPublicKey> {
    const parsed = acceptableSshKey(content);
    const now = this.clock.nowUnix();
    try {
      const key = await this.transactions.run(async (tx) => {
        if ((await this.keys.countByOwner(owner.id, tx)) >= MAX_KEYS_PER_USER) throw new InvalidInputError(TOO_MANY_KEYS);
        if (await this.keys.fingerprintTaken(parsed.fingerprint, tx)) throw new InvalidInputError(KEY_MATERIAL_TAKEN);
        if (await this.heldElsewhere(parsed.fingerprint, tx, false)) throw new InvalidInputError(KEY_MATERIAL_TAKEN);
        if (await this.keys.titleTaken(owner.id, title, tx)) throw new InvalidInputError(TITLE_TAKEN);
        const inserted = await this.keys.insert(tx, {
          ownerId: owner.id,
          name: title,
          fingerprint: parsed.fingerprint,
          content: parsed.content,
          createdUnix: now,
          updatedUnix: now,
        });
        // Looked at again with a lock after the insert: a deploy key of the same material added meanwhile.
        if (await this.heldElsewhere(parsed.fingerprint, tx, true)) throw new InvalidInputError(KEY_MATERIAL_TAKEN);
        await this.audit.record(tx, { action: 'ssh_key.add', target: sshKeyTarget(inserted), detail: { title, owner: owner.name } });
        return inserted;
      });
      return { key, owner };
    } catch (error) {
      // A concurrent request stored the same key or title first: the unique indexes refused this one.
      if (isUniqueViolation(error)) {
        throw new InvalidInputError((await this.keys.fingerprintTaken(parsed.fingerprint)) ? KEY_MATERIAL_TAKEN : TITLE_TAKEN);
      }
      throw error;
    }
  }

  /** Unknown → 404; another user's key → 403 unless the caller is a site admin. */
  async delete(viewer: AuthContext, id: number): Promise<void> {
    const key = await this.keys.findById(id);
    if (!key) throw new NotFoundError();
    if (!viewer.isSelfOrAdmin(key.ownerId)) throw new ForbiddenError('You do not have access to this key');
    await this.transactions.run((tx) => this.deleteRecorded(tx, key));
  }

  /** DELETE /admin/users/{username}/keys/{id}: unknown → 404; a key of someone else → 403 (as Forgejo). */
  async deleteOfUser(owner: UserEntity, id: number): Promise<void> {
    const key = await this.keys.findById(id);
    if (!key) throw new NotFoundError();
    if (key.ownerId !== owner.id) throw new ForbiddenError('You do not have access to this key');
    await this.transactions.run((tx) => this.deleteRecorded(tx, key));
  }

  private async deleteRecorded(tx: EntityManager, key: PublicKeyEntity): Promise<void> {
    await this.keys.delete(tx, key.id);
    await this.audit.record(tx, { action: 'ssh_key.delete', target: sshKeyTarget(key), detail: { title: key.name, owner_id: key.ownerId } });
  }

  /** `GET /{username}.keys`: one `type base64` line per key, as in an authorized_keys file. */
  async authorizedKeys(viewer: AuthContext, username: string): Promise<string> {
    const owner = await this.owners.visibleOrAbsent(viewer, username);
    const keys = await this.keys.listAllByOwner(owner.id);
    return keys.map((key) => `${key.content.split(' ').slice(0, 2).join(' ')}\n`).join('');
  }

  /** Whether another kind of key (a deploy key) holds this material. */
  private heldElsewhere(fingerprint: string, tx: EntityManager, locking: boolean): Promise<boolean> {
    return this.events.any('key-material.claimed', { fingerprint, tx, locking });
  }

  private async withOwner(key: PublicKeyEntity): Promise<OwnedPublicKey> {
    const owner = await this.users.byId(key.ownerId);
    if (!owner) throw new NotFoundError();
    return { key, owner };
  }

  private async withOwners(page: Page<PublicKeyEntity>): Promise<Page<OwnedPublicKey>> {
    const owners = new Map((await this.users.byIds([...new Set(page.items.map((key) => key.ownerId))])).map((user) => [user.id, user]));
    const items = page.items.filter((key) => owners.has(key.ownerId)).map((key) => ({ key, owner: owners.get(key.ownerId)! }));
    return { items, total: page.total };
  }
}

/** A key in the audit log by its fingerprint: never its content. */
function sshKeyTarget(key: PublicKeyEntity) {
  return { type: 'ssh_key' as const, id: key.id, name: key.fingerprint };
}
