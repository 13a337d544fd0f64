import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import { InvalidInputError, NotFoundError, PayloadTooLargeError } from '../common/errors';
import { Clock } from '../common/time';
import { LfsConfig } from '../config/slices';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { RepositoryDirectory } from '../repos/repository-directory';
import { LfsContent, lfsKey } from './lfs-content';
import { LfsObjectStore } from './lfs-object.store';
import { MAX_POINTER_BYTES, parsePointerFile } from './lfs-pointer';
import type { LfsPointer } from './lfs.wire';

const NOTHING_RESERVED: QuotaReservation = { amount: 0, settle: () => Promise.resolve(), release: () => Promise.resolve() };

/**
 * What a migration or a mirror sync asks of LFS to bring a source's objects along: the pointers among a
 * repository's small blobs, room in the owner's quota, each object's bytes verified against its oid and size as
 * they stream in, and the repository's rows in one transaction (for a migration, the one that creates it).
 */
@Injectable()
export class LfsIntake {
  readonly maxPointerBytes = MAX_POINTER_BYTES;

  /** LFS_MAX_FILE_SIZE (0: no limit). */
  get maxFileBytes(): number {
    return this.lfsConfig.maxFileBytes;
  }

  constructor(
    private readonly store: LfsObjectStore,
    private readonly content: LfsContent,
    private readonly lfsConfig: LfsConfig,
    private readonly repositories: RepositoryDirectory,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
  ) {}

  pointersIn(blobs: Buffer[]): LfsPointer[] {
    return blobs.map(parsePointerFile).filter((pointer): pointer is LfsPointer => pointer !== null);
  }

  /** The objects among `pointers` that the repository holds already (its rows), by oid. */
  async heldBy(repositoryId: number, pointers: LfsPointer[]): Promise<Set<string>> {
    return new Set(
      (
        await this.store.inRepository(
          repositoryId,
          pointers.map((pointer) => pointer.oid),
        )
      ).keys(),
    );
  }

  /**
   * The bytes of the objects the owner holds nowhere yet, reserved in its `size:git:lfs` before a byte is
   * fetched (413 `quota exceeded` when they do not all fit), so that concurrent uploads and fetches cannot take
   * it past its limit. Settled in the transaction that writes the rows (`link`); released by the caller.
   */
  async reserve(owner: { id: number; name: string }, pointers: LfsPointer[]): Promise<QuotaReservation> {
    const held = await this.store.heldByOwner(
      owner.id,
      pointers.map((pointer) => pointer.oid),
    );
    const bytes = pointers.filter((pointer) => !held.has(pointer.oid)).reduce((sum, pointer) => sum + pointer.size, 0);
    if (bytes === 0) return NOTHING_RESERVED;
    return this.quota.reserve(owner, 'size:git:lfs', 'lfs', bytes, { whole: true });
  }

  /** The object's bytes from `source`: at most its size, placed only when hash and length match (422 otherwise). */
  async receive(pointer: LfsPointer, source: Readable): Promise<void> {
    const max = this.lfsConfig.maxFileBytes;
    if (max > 0 && pointer.size > max) throw new PayloadTooLargeError(`Size must be less than or equal to ${max}`);
    let staged;
    try {
      staged = await this.content.receive(source, pointer.size);
    } catch (error) {
      if (error instanceof PayloadTooLargeError) throw new InvalidInputError(`LFS object ${pointer.oid}: content size does not match`);
      throw error;
    }
    try {
      if (staged.size !== pointer.size || staged.digests.sha256 !== pointer.oid)
        throw new InvalidInputError(`LFS object ${pointer.oid}: content does not match its pointer`);
      await staged.place(lfsKey(pointer.oid));
    } catch (error) {
      await staged.discard();
      throw error;
    }
  }

  /**
   * The repository's rows of the objects, and its LFS size, inside the caller's transaction. A repository
   * deleted meanwhile (a mirror's sync runs for minutes) fails the transaction: its rows would outlive it and
   * keep the files; the files stay without rows, for the reconciliation to collect.
   */
  async link(tx: EntityManager, repositoryId: number, pointers: LfsPointer[]): Promise<void> {
    let bytes = 0;
    for (const pointer of pointers) {
      if (await this.store.link(tx, repositoryId, pointer.oid, pointer.size, this.clock.nowUnix())) bytes += pointer.size;
    }
    if (bytes > 0 && !(await this.repositories.addToCounter(tx, repositoryId, 'lfsSize', bytes))) throw new NotFoundError('the repository was deleted');
  }
}
