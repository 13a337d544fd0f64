import type { Readable } from 'node:stream';
import { Inject, Injectable, Logger, OnModuleInit } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { ARCHIVED_PUSH_HTTP } from '../access/access-policy';
import { AuthContext } from '../auth/auth-context';
import { GIT_CREDENTIALS_REFUSED } from '../auth/credentials';
import { ForbiddenError, InvalidInputError, NotFoundError, PayloadTooLargeError, UnauthorizedError } from '../common/errors';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { QuotaUsageSources } from '../quota/quota-usage-sources';
import { LfsConfig, SiteConfig } from '../config/slices';
import { accountStateProblem, GitTarget, RepositoryGitAccess } from '../repos/repository-git-access';
import type { RepositoryEntity } from '../repos/repository.entity';
import { RepositoryDirectory } from '../repos/repository-directory';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import type { OpenBlob } from '../blobs/open-blob';
import { LfsContent, lfsKey, OID_PATTERN } from './lfs-content';
import { LfsObjectStore } from './lfs-object.store';
import type { LfsTokenClaims } from './lfs-tokens';
import type { LfsBatchResponseWire, LfsLinkWire, LfsObjectWire, LfsPointer } from './lfs.wire';

export type LfsOperation = 'download' | 'upload';

// One cohesive thing, kept whole though long: the LFS protocol's rules (batch, transfer, verify, locks) in the
// order a client meets them, over the access, quota and content stores it only calls.

/** A repository whose LFS routes the caller may use for an operation, and who the caller is. */
export interface LfsTarget {
  owner: UserEntity;
  repo: RepositoryEntity;
  auth: AuthContext;
}

/** An upload's body as the transport hands it over: the stream and the length its headers declare. */
export interface LfsUploadBody {
  stream: Readable;
  declaredLength: number | undefined;
}

/** How many repositories holding an oid are asked whether the caller can read one, before it must upload. */
const HOLDERS_CHECKED = 20;

export const SIZE_MISMATCH = 'content size does not match';
export const HASH_MISMATCH = 'content hash does not match OID';

/**
 * Git LFS (the batch API and the basic transfer): who may use a repository's LFS routes, which objects it
 * holds, and the upload that verifies content against its oid before anything is stored. A repository holds
 * an object when it has its row; the content is stored once per oid (lfs-content.ts).
 */
@Injectable()
export class LfsService implements OnModuleInit {
  private readonly logger = new Logger('Lfs');

  constructor(
    private readonly access: RepositoryGitAccess,
    private readonly users: UserAccounts,
    private readonly repositories: RepositoryDirectory,
    private readonly store: LfsObjectStore,
    private readonly content: LfsContent,
    private readonly lfsConfig: LfsConfig,
    private readonly siteConfig: SiteConfig,
    private readonly clock: Clock,
    private readonly transactions: Transactions,
    private readonly usageSources: QuotaUsageSources,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
  ) {}

  onModuleInit(): void {
    this.usageSources.register('lfs', {
      bytesOf: (ownerId) => this.store.bytesOfOwner(ownerId),
      list: () => Promise.resolve({ items: [], total: 0 }),
    });
  }

  /**
   * The repository of an LFS route, for `operation`, in the order of git over HTTP (docs/git-transports.md):
   * account state, the repository, a public download, then sign-in (401), scope, read (404, so a private
   * repository's existence is not told), public-only tokens, and for uploads mirror, write and archive.
   */
  async open(auth: AuthContext, ownerName: string, repoName: string, operation: LfsOperation): Promise<LfsTarget> {
    if (auth.user) {
      const problem = accountStateProblem(auth.user, this.siteConfig.rootUrl);
      if (problem) throw new ForbiddenError(problem);
    }
    const target = await this.access.find(ownerName, repoName);
    const decision = await this.access.decide(auth, target, operation === 'download' ? 'pull' : 'push', 'http');
    if (!decision.allowed) {
      switch (decision.refusal) {
        case 'sign-in':
          throw new UnauthorizedError('Unauthorized');
        case 'scope': {
          const level = operation === 'download' ? 'read' : 'write';
          throw new ForbiddenError(`token does not have at least one of required scope(s): [${level}:repository]`);
        }
        case 'not-found':
        case 'deploy-key-not-authorized':
          throw new NotFoundError('Repository not found');
        case 'public-only':
          throw new ForbiddenError('token scope is limited to public repos');
        case 'mirror':
          throw new ForbiddenError('mirror repository is read-only');
        case 'not-writer':
          throw new ForbiddenError(`User '${auth.user!.name}' is not allowed to push to '${target.owner!.name}/${target.repo!.name}'.`);
        case 'archived':
          throw new ForbiddenError(ARCHIVED_PUSH_HTTP);
      }
    }
    return { owner: target.owner!, repo: target.repo!, auth };
  }

  /**
   * As `open`, for the bearer of a token from `git-lfs-authenticate`: it must name this repository, and an
   * upload token is needed to upload (401 otherwise, so the client asks for credentials). The user's access is
   * then decided as for any caller, so that access revoked since the token was issued counts.
   */
  async openWithToken(claims: LfsTokenClaims, ownerName: string, repoName: string, operation: LfsOperation): Promise<LfsTarget> {
    const user = await this.users.byId(claims.userId);
    const target = await this.access.find(ownerName, repoName);
    if (!user || target.repo?.id !== claims.repositoryId || (operation === 'upload' && claims.operation !== 'upload')) {
      throw new UnauthorizedError(GIT_CREDENTIALS_REFUSED);
    }
    return this.open(new AuthContext(user, 'token', null), ownerName, repoName, operation);
  }

  /**
   * POST objects/batch: one answer per object, in request order. A download is offered for objects the
   * repository holds; an upload (with verify) only for objects it lacks, after an object already stored is
   * linked without a transfer when the caller can read a repository that holds it.
   */
  async batch(target: LfsTarget, operation: LfsOperation, pointers: unknown[], header: Record<string, string>): Promise<LfsBatchResponseWire> {
    if (pointers.length > this.lfsConfig.maxBatchSize) {
      throw new PayloadTooLargeError(`at most ${this.lfsConfig.maxBatchSize} objects may be asked for in one batch`);
    }
    const valid = pointers.filter(isValidPointer);
    const held = await this.store.inRepository(
      target.repo.id,
      valid.map((pointer) => pointer.oid),
    );
    if (operation === 'upload')
      await this.assertRoomFor(
        target,
        valid.filter((pointer) => !held.has(pointer.oid)),
      );
    const objects: LfsObjectWire[] = [];
    for (const pointer of pointers) {
      if (!isValidPointer(pointer)) {
        objects.push({ ...echo(pointer), error: { code: 422, message: 'Oid or size are invalid' } });
        continue;
      }
      const row = held.get(pointer.oid);
      if (row && row.size !== pointer.size) {
        objects.push({ oid: pointer.oid, size: pointer.size, error: { code: 422, message: `Object ${pointer.oid} is not ${pointer.size} bytes` } });
        continue;
      }
      objects.push(
        operation === 'download'
          ? await this.downloadAnswer(target, pointer, row !== undefined, header)
          : await this.uploadAnswer(target, pointer, row !== undefined, header),
      );
    }
    return { transfer: 'basic', objects, hash_algo: 'sha256' };
  }

  private async downloadAnswer(target: LfsTarget, pointer: LfsPointer, held: boolean, header: Record<string, string>): Promise<LfsObjectWire> {
    if (!held || (await this.content.size(pointer.oid)) === null) {
      return { oid: pointer.oid, size: pointer.size, error: { code: 404, message: 'Not Found' } };
    }
    return { oid: pointer.oid, size: pointer.size, authenticated: true, actions: { download: this.link(target, `objects/${pointer.oid}`, header) } };
  }

  private async uploadAnswer(target: LfsTarget, pointer: LfsPointer, held: boolean, header: Record<string, string>): Promise<LfsObjectWire> {
    const answer = { oid: pointer.oid, size: pointer.size, authenticated: true };
    if (held) return answer;
    const stored = await this.content.size(pointer.oid);
    if (stored !== null && stored === pointer.size && (await this.linkWithoutTransfer(target, pointer))) return answer;
    const max = this.lfsConfig.maxFileBytes;
    if (max > 0 && pointer.size > max)
      return { oid: pointer.oid, size: pointer.size, error: { code: 422, message: `Size must be less than or equal to ${max}` } };
    return {
      ...answer,
      actions: {
        upload: this.link(target, `objects/${pointer.oid}/${pointer.size}`, header),
        verify: this.link(target, 'verify', { ...header, Accept: VERIFY_ACCEPT }),
      },
    };
  }

  /**
   * PUT objects/{oid}/{size}: the declared length must be the object's size (checked before a byte is read);
   * the body is hashed and measured as it streams into the upload area and renamed into place only when both
   * match; then the repository's row. A refused or cut-off upload leaves neither file nor row.
   */
  async upload(target: LfsTarget, oid: string, sizeText: string, body: LfsUploadBody): Promise<void> {
    const pointer = parsePointer(oid, sizeText);

    const max = this.lfsConfig.maxFileBytes;
    if (max > 0 && pointer.size > max) throw new PayloadTooLargeError(`Size must be less than or equal to ${max}`);
    if (body.declaredLength !== undefined && body.declaredLength !== pointer.size) throw new InvalidInputError(SIZE_MISMATCH);
    const row = await this.store.find(target.repo.id, pointer.oid);
    if (row && row.size !== pointer.size) throw new InvalidInputError(`Object ${pointer.oid} is not ${pointer.size} bytes`);
    // The object's bytes are reserved before a byte is read, unless the owner holds it already (it then adds
    // nothing), and settled with the row, so that concurrent uploads cannot take the owner past its limit.
    const reservation = await this.reserve(target, pointer);
    try {
      await this.receive(target, pointer, body, reservation);
    } finally {
      await reservation.release();
    }
  }

  private async receive(target: LfsTarget, pointer: LfsPointer, body: LfsUploadBody, reservation: QuotaReservation): Promise<void> {
    let staged;
    try {
      staged = await this.content.receive(body.stream, pointer.size);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) throw new InvalidInputError(SIZE_MISMATCH);
      throw error;
    }
    try {
      if (staged.size !== pointer.size) throw new InvalidInputError(SIZE_MISMATCH);
      if (staged.digests.sha256 !== pointer.oid) throw new InvalidInputError(HASH_MISMATCH);
      // The bytes hash to the oid: whatever file is stored under it holds the same bytes.
      await staged.place(lfsKey(pointer.oid));
    } catch (error) {
      await staged.discard();
      throw error;
    }
    await this.transactions.run(async (tx) => {
      await this.linkRow(tx, target.repo.id, pointer);
      await reservation.settle(tx);
    });
  }

  private async reserve(target: LfsTarget, pointer: LfsPointer): Promise<QuotaReservation> {
    const none: QuotaReservation = { amount: 0, settle: () => Promise.resolve(), release: () => Promise.resolve() };
    if ((await this.store.heldByOwner(target.owner.id, [pointer.oid])).has(pointer.oid)) return none;
    return this.quota.reserve({ id: target.owner.id, name: target.owner.name }, 'size:git:lfs', 'lfs', pointer.size, { whole: true });
  }

  /**
   * A batch of uploads is refused as a whole (413 `quota exceeded`) when the objects that the owner does not
   * hold yet do not fit in what it has left; the uploads themselves reserve their bytes.
   */
  private async assertRoomFor(target: LfsTarget, missing: LfsPointer[]): Promise<void> {
    if (missing.length === 0) return;
    const owned = await this.store.heldByOwner(
      target.owner.id,
      missing.map((pointer) => pointer.oid),
    );
    const sizes = new Map<string, number>();
    for (const pointer of missing) if (!owned.has(pointer.oid)) sizes.set(pointer.oid, pointer.size);
    if (sizes.size === 0) return;
    const bytes = [...sizes.values()].reduce((sum, size) => sum + size, 0);
    const check = await this.quota.reserve({ id: target.owner.id, name: target.owner.name }, 'size:git:lfs', 'lfs', bytes, { whole: true });
    await check.release();
  }

  /** The oid and size of an upload's path are checked before anything else (422). */
  assertPointer(oid: string, sizeText: string): void {
    parsePointer(oid, sizeText);
  }

  /** GET objects/{oid}: the object's content opened, when the repository holds it; the caller closes it. */
  async download(target: LfsTarget, oid: string): Promise<OpenBlob> {
    if (!OID_PATTERN.test(oid)) throw new InvalidInputError('Oid or size are invalid');
    const row = await this.store.find(target.repo.id, oid);
    const content = row ? await this.content.open(oid, row.size) : null;
    if (!content) throw new NotFoundError('Not Found');
    return content;
  }

  /** POST verify: the repository holds the object, with the size the client says. */
  async verify(target: LfsTarget, pointer: unknown): Promise<void> {
    if (!isValidPointer(pointer)) throw new InvalidInputError('Oid or size are invalid');
    const row = await this.store.find(target.repo.id, pointer.oid);
    const size = row ? await this.content.size(pointer.oid) : null;
    if (!row || size === null || size !== pointer.size) throw new NotFoundError('Not Found');
  }

  /**
   * Links a stored object to the repository without a transfer, when the caller can read a repository that
   * holds it; others must send bytes that hash to the oid. The file is looked at again after the row is
   * written: a deletion that removed it meanwhile turns the link back into an upload.
   */
  private async linkWithoutTransfer(target: LfsTarget, pointer: LfsPointer): Promise<boolean> {
    const holders = await this.store.holdersOf(pointer.oid, HOLDERS_CHECKED);
    let readable = false;
    for (const repo of holders) {
      const owner = await this.users.byId(repo.ownerId);
      const holder: GitTarget = { owner, repo };
      if (owner && (this.access.isPublicPull(holder) || (await this.access.canRead(target.auth, holder)))) {
        readable = true;
        break;
      }
    }
    if (!readable) return false;
    const added = await this.transactions.run((tx) => this.linkRow(tx, target.repo.id, pointer));
    if ((await this.content.size(pointer.oid)) === pointer.size) return true;
    if (added) {
      await this.transactions.run(async (tx) => {
        if (await this.store.unlink(tx, target.repo.id, pointer.oid)) await this.repositories.addToCounter(tx, target.repo.id, 'lfsSize', -pointer.size);
      });
    }
    return false;
  }

  /** The repository's row of the object, and its LFS size with it; true when the row is new. */
  private async linkRow(tx: EntityManager, repositoryId: number, pointer: LfsPointer): Promise<boolean> {
    const added = await this.store.link(tx, repositoryId, pointer.oid, pointer.size, this.clock.nowUnix());
    if (added) await this.repositories.addToCounter(tx, repositoryId, 'lfsSize', pointer.size);
    return added;
  }

  /**
   * A fork holds every object of its source, so that it serves them as its source does; the objects its owner
   * holds nowhere else yet count against the owner's `size:git:lfs`, checked before the fork is made (413).
   */
  async checkFork(forker: { id: number; name: string }, source: RepositoryEntity): Promise<void> {
    const bytes = await this.store.bytesNewToOwner(source.id, forker.id);
    if (bytes === 0) return;
    const check = await this.quota.reserve(forker, 'size:git:lfs', 'lfs', bytes, { whole: true });
    await check.release();
  }

  async linkFork(tx: EntityManager, source: RepositoryEntity, fork: RepositoryEntity): Promise<void> {
    const bytes = await this.store.copyRows(tx, source.id, fork.id, this.clock.nowUnix());
    if (bytes > 0) await this.repositories.addToCounter(tx, fork.id, 'lfsSize', bytes);
  }

  /** After a repository's rows went: the files of those objects that no repository holds any more. */
  async removeUnreferenced(oids: string[]): Promise<void> {
    const unique = [...new Set(oids)];
    const kept = await this.store.referenced(unique);
    for (const oid of unique) {
      if (kept.has(oid)) continue;
      await this.content.removeUnless(oid, async () => (await this.store.referenced([oid])).has(oid));
    }
  }

  private link(target: LfsTarget, tail: string, header: Record<string, string>): LfsLinkWire {
    const base = `${this.siteConfig.rootUrl}${encodeURIComponent(target.owner.name)}/${encodeURIComponent(target.repo.name)}.git/info/lfs/`;
    return { href: `${base}${tail}`, header: { ...header } };
  }
}

/** The Accept header of verify actions: some clients send the action's headers and nothing else. */
const VERIFY_ACCEPT = 'application/vnd.git-lfs+json;q=0.9, */*;q=0.8';

export function isValidPointer(value: unknown): value is LfsPointer {
  if (typeof value !== 'object' || value === null) return false;
  const { oid, size } = value as Record<string, unknown>;
  return typeof oid === 'string' && OID_PATTERN.test(oid) && typeof size === 'number' && Number.isSafeInteger(size) && size >= 0;
}

function parsePointer(oid: string, sizeText: string): LfsPointer {
  const size = /^\d{1,15}$/.test(sizeText) ? Number(sizeText) : -1;
  const pointer = { oid, size };
  if (!isValidPointer(pointer)) throw new InvalidInputError('Oid or size are invalid');
  return pointer;
}

/** An invalid object echoed back as far as it can be: its oid and size when they have the right types. */
function echo(value: unknown): LfsPointer {
  const { oid, size } = (typeof value === 'object' && value !== null ? value : {}) as Record<string, unknown>;
  return { oid: typeof oid === 'string' ? oid.slice(0, 128) : '', size: typeof size === 'number' && Number.isFinite(size) ? size : 0 };
}
