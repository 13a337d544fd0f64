import type { Readable, Writable } from 'node:stream';
import { Injectable } from '@nestjs/common';
import { BlobStorage, StagedBlob } from '../blobs/blob-storage';
import type { ByteRange, OpenBlob } from '../blobs/open-blob';

/** 64 lowercase hex digits: the SHA-256 that names an LFS object. */
export const OID_PATTERN = /^[0-9a-f]{64}$/;

/** The file of an object: DATA_DIR/lfs/ab/cd/<oid>, one per oid whatever number of repositories hold it. */
export function lfsKey(oid: string): string {
  return `lfs/${oid.slice(0, 2)}/${oid.slice(2, 4)}/${oid}`;
}

/**
 * The LFS content store, on the shared blob storage. Content is addressed by its hash, so a file under a key
 * never changes: a second upload of the same object renames identical bytes over it. An upload is received
 * into the upload area, hashed and measured on the way, flushed to disk, and renamed into place only when
 * both its hash and its length match; the row that lets a repository serve it comes after.
 */
@Injectable()
export class LfsContent {
  constructor(private readonly blobs: BlobStorage) {}

  /** The stored size of the object, or null when its file is missing. */
  size(oid: string): Promise<number | null> {
    return this.blobs.size(lfsKey(oid));
  }

  /**
   * The object's file opened for reading, or null when it is missing; the caller closes it. Its size is the
   * one its row records: a file is placed only once its length and hash matched, and never changes after.
   */
  open(oid: string, size: number): Promise<OpenBlob | null> {
    return this.blobs.openRead(lfsKey(oid), size);
  }

  /** Receives at most `maxBytes` into the upload area, hashed; nothing is visible until `place`. */
  receive(source: Readable, maxBytes: number): Promise<StagedBlob> {
    return this.blobs.receive(source, maxBytes, ['sha256'], { durable: true });
  }

  stream(oid: string): Readable {
    return this.blobs.stream(lfsKey(oid));
  }

  head(oid: string, bytes: number): Promise<Buffer> {
    return this.blobs.head(lfsKey(oid), bytes);
  }

  send(oid: string, target: Writable, range?: ByteRange): Promise<void> {
    return this.blobs.send(lfsKey(oid), target, range);
  }

  /**
   * Removes the object's file unless `stillWanted` says otherwise once it is out of place: an upload or link
   * that wrote its row meanwhile (on any instance) finds either the file back or no file, never a row whose
   * file is removed after it looked.
   */
  async removeUnless(oid: string, stillWanted: () => Promise<boolean>): Promise<void> {
    const withdrawn = await this.blobs.withdraw(lfsKey(oid));
    if (!withdrawn) return;
    if (await stillWanted()) await withdrawn.restore();
    else await withdrawn.drop();
  }
}
