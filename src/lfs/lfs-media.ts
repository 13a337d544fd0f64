import type { Readable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { LfsContent } from './lfs-content';
import { LfsObjectStore } from './lfs-object.store';
import { MAX_POINTER_BYTES, parsePointerFile } from './lfs-pointer';

/** An LFS object a repository serves in place of its pointer file. */
export interface LfsMediaObject {
  oid: string;
  size: number;
  /** The first bytes of the content, at most the number asked for. */
  head(bytes: number): Promise<Buffer>;
  open(): Readable;
}

/**
 * What /media asks of LFS: the object behind a file's bytes, when they are a pointer and the repository holds
 * an object of that oid and size whose content is stored.
 */
@Injectable()
export class LfsMedia {
  /** Blobs longer than this are never pointers: the caller need not read them to ask. */
  readonly maxPointerBytes = MAX_POINTER_BYTES;

  constructor(
    private readonly store: LfsObjectStore,
    private readonly content: LfsContent,
  ) {}

  async behind(repositoryId: number, blob: Buffer): Promise<LfsMediaObject | null> {
    const pointer = parsePointerFile(blob);
    if (!pointer) return null;
    const row = await this.store.find(repositoryId, pointer.oid);
    if (!row) return null;
    const size = await this.content.size(pointer.oid);
    if (size === null) return null;
    return { oid: pointer.oid, size, head: (bytes) => this.content.head(pointer.oid, bytes), open: () => this.content.stream(pointer.oid) };
  }
}
