import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import { AccessMode } from '../access/access-mode';
import type { RepositoryTarget } from '../access/repository-policy';
import { InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import { acceptableSshKey, KEY_MATERIAL_TAKEN, PublicKeysService } from '../keys/ssh/public-keys.service';
import type { CreateKeyOption } from '../keys/ssh/create-key.option';
import type { DeployKeyEntity } from './deploy-key.entity';
import type { PlacedDeployKey } from './deploy-key.mapper';
import { DeployKeyStore } from './deploy-key.store';

const ALREADY_ADDED = 'This key has already been added to this repository';
const NAME_TAKEN = 'A key with the same name already exists';

/** Deploy keys one repository may hold: each is checked at every SSH login, so their number is bounded. */
export const MAX_DEPLOY_KEYS_PER_REPOSITORY = 100;
const TOO_MANY_DEPLOY_KEYS = `too many deploy keys: a repository may hold at most ${MAX_DEPLOY_KEYS_PER_REPOSITORY}`;

/** What a list of deploy keys may be narrowed to (`key_id`, `fingerprint`). */
export interface DeployKeyQuery {
  materialId?: number;
  fingerprint?: string;
}

/**
 * Deploy keys: SSH keys that reach one repository each (read-only unless asked otherwise), managed by the
 * repository's administrators. The same material may be added to several repositories, never as a user's key
 * too; what a key may do over SSH is the access policy's to say.
 */
@Injectable()
export class DeployKeysService {
  constructor(
    private readonly keys: DeployKeyStore,
    private readonly userKeys: PublicKeysService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
    private readonly audit: AuditService,
  ) {}

  async list(target: RepositoryTarget, page: PageQuery, query: DeployKeyQuery): Promise<Page<PlacedDeployKey>> {
    let fingerprint = query.fingerprint;
    if (query.materialId !== undefined) {
      const named = await this.keys.findById(query.materialId);
      const materialId = named ? (await this.keys.materialIds([named.fingerprint])).get(named.fingerprint) : undefined;
      if (!named || materialId !== query.materialId || (fingerprint !== undefined && fingerprint !== named.fingerprint)) return { items: [], total: 0 };
      fingerprint = named.fingerprint;
    }
    const found = await this.keys.list(target.repo.id, page, { fingerprint });
    return { items: await this.placed(target, found.items), total: found.total };
  }

  /** A key of another repository is not found here, as an unknown one. */
  async get(target: RepositoryTarget, id: number): Promise<PlacedDeployKey> {
    const key = await this.keys.findById(id);
    if (!key || key.repoId !== target.repo.id) throw new NotFoundError();
    return (await this.placed(target, [key]))[0];
  }

  /**
   * Forgejo's checks in its order: the key parses and passes the key policy (422 `Invalid key content: …`),
   * is no user's key, is not on this repository yet, and its title is free on it. Stored in one transaction
   * that looks again at the user keys after its insert, so that a user key added at the same moment cannot
   * slip past (see PublicKeysService.create, which does the converse).
   */
  async create(target: RepositoryTarget, option: CreateKeyOption): Promise<PlacedDeployKey> {
    const parsed = acceptableSshKey(option.key);
    const repoId = target.repo.id;
    const mode = option.read_only === false ? AccessMode.Write : AccessMode.Read;
    const now = this.clock.nowUnix();
    let key: DeployKeyEntity;
    try {
      key = await this.transactions.run(async (tx) => {
        if (await this.userKeys.materialTaken(parsed.fingerprint, tx)) throw new InvalidInputError(KEY_MATERIAL_TAKEN);
        if (await this.keys.inRepository(repoId, parsed.fingerprint, tx)) throw new InvalidInputError(ALREADY_ADDED);
        if (await this.keys.nameTaken(repoId, option.title, tx)) throw new InvalidInputError(NAME_TAKEN);
        if ((await this.keys.countInRepository(repoId, tx)) >= MAX_DEPLOY_KEYS_PER_REPOSITORY) throw new InvalidInputError(TOO_MANY_DEPLOY_KEYS);
        const inserted = await this.keys.insert(tx, {
          repoId,
          name: option.title,
          fingerprint: parsed.fingerprint,
          content: parsed.content,
          mode,
          createdUnix: now,
          updatedUnix: now,
        });
        if (await this.userKeys.materialTaken(parsed.fingerprint, tx, { locking: true })) throw new InvalidInputError(KEY_MATERIAL_TAKEN);
        await this.audit.record(tx, {
          action: 'deploy_key.add',
          target: deployKeyTarget(inserted),
          detail: { repository: repositoryName(target), title: option.title, read_only: mode === AccessMode.Read },
        });
        return inserted;
      });
    } catch (error) {
      // A concurrent request added the same key to this repository first: the unique index refused this one.
      if (isUniqueViolation(error)) throw new InvalidInputError(ALREADY_ADDED);
      throw error;
    }
    return (await this.placed(target, [key]))[0];
  }

  /**
   * The route admits repository admins (403). An id that names no key is already gone (204, as Forgejo); a key of another
   * repository is not found here (404), whatever the caller may do there.
   */
  async delete(target: RepositoryTarget, id: number): Promise<void> {
    const key = await this.keys.findById(id);
    if (!key) return;
    if (key.repoId !== target.repo.id) throw new NotFoundError();
    await this.transactions.run(async (tx) => {
      await this.keys.delete(tx, key.id);
      await this.audit.record(tx, {
        action: 'deploy_key.delete',
        target: deployKeyTarget(key),
        detail: { repository: repositoryName(target), title: key.name },
      });
    });
  }

  private async placed(target: RepositoryTarget, keys: DeployKeyEntity[]): Promise<PlacedDeployKey[]> {
    const ids = await this.keys.materialIds(keys.map((key) => key.fingerprint));
    return keys.map((key) => ({ key, materialId: ids.get(key.fingerprint) ?? key.id, repo: target.repo, owner: target.owner }));
  }
}

/** A deploy key in the audit log by its fingerprint: never its content. */
function deployKeyTarget(key: DeployKeyEntity) {
  return { type: 'deploy_key' as const, id: key.id, name: key.fingerprint };
}

function repositoryName(target: RepositoryTarget): string {
  return `${target.owner.name}/${target.repo.name}`;
}
