import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Inject, Injectable } from '@nestjs/common';
import { PayloadTooLargeError } from '../common/errors';
import { APP_CONFIG, AppConfig } from '../config/config';

/** A file received into the temporary area: measured and hashed, not yet visible under any key. */
export interface StagedBlob {
  size: number;
  /** Lowercase hex digests of the algorithms asked for (hashing costs CPU: only what the caller needs). */
  digests: Partial<Record<DigestAlgorithm, string>>;
  /** Moves the file under `key` (one rename, so a reader never sees a partial file). */
  commit(key: string): Promise<void>;
  /** Removes the temporary file; harmless after commit. */
  discard(): Promise<void>;
}

/** Disk reads and writes in 256 KiB steps (fewer system calls than the 64 KiB default; 16 transfers hold a few MiB). */
const STREAM_BUFFER_BYTES = 256 * 1024;

export type DigestAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';

/** Bytes `start`..`end` inclusive, as range-parser gives them. */
export interface ByteRange {
  start: number;
  end: number;
}

/**
 * Uploaded files on local disk under DATA_DIR (house style: one adapter per side effect, so that an object
 * store can replace it without touching a service). A write streams into DATA_DIR/tmp while it is counted and
 * hashed, and is renamed into place only once complete: a cut-off or oversized upload leaves no file.
 * Keys are relative paths such as `attachments/a/b/<uuid>`; callers build them from ids they generated.
 */
@Injectable()
export class BlobStore {
  private readonly root: string;
  private readonly tmp: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.root = path.resolve(config.dataDir);
    this.tmp = path.join(this.root, 'tmp', 'uploads');
  }

  /**
   * Streams `source` into a temporary file. More than `maxBytes` → PayloadTooLargeError, and an error or
   * early end of `source` rejects; in both cases the temporary file is gone before this returns.
   */
  async receive(source: Readable, maxBytes: number, digests: DigestAlgorithm[] = []): Promise<StagedBlob> {
    await fs.mkdir(this.tmp, { recursive: true });
    const file = path.join(this.tmp, randomUUID());
    const hashes = digests.map((algorithm) => [algorithm, createHash(algorithm)] as const);
    let size = 0;
    const meter = new Transform({
      transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback) {
        size += chunk.length;
        if (size > maxBytes) return callback(new PayloadTooLargeError('the file is larger than the allowed size'));
        for (const [, hash] of hashes) hash.update(chunk);
        callback(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(file, { flags: 'wx', highWaterMark: STREAM_BUFFER_BYTES }));
    } catch (error) {
      await fs.rm(file, { force: true });
      throw error;
    }
    return {
      size,
      digests: Object.fromEntries(hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')])),
      commit: async (key: string) => {
        const target = this.pathOf(key);
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.rename(file, target);
      },
      discard: () => fs.rm(file, { force: true }),
    };
  }

  /** The blob's size, or null when there is none under `key`. */
  async size(key: string): Promise<number | null> {
    try {
      return (await fs.stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  /** The content (or one range of it) as a stream. */
  read(key: string, range?: ByteRange): Readable {
    return createReadStream(this.pathOf(key), { highWaterMark: STREAM_BUFFER_BYTES, ...(range ? { start: range.start, end: range.end } : {}) });
  }

  /** Removes the blob; a missing one is not an error. */
  async remove(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  /** Leftovers of uploads that were in flight when the process stopped. */
  async clearTemporary(): Promise<void> {
    await fs.rm(this.tmp, { recursive: true, force: true });
  }

  private pathOf(key: string): string {
    if (!/^[a-z]+(\/[0-9a-z-]+)+$/.test(key)) throw new Error(`unsafe blob key: ${JSON.stringify(key)}`);
    return path.join(this.root, key);
  }
}

/** Two levels of fan-out from the first characters of a random or content-derived name. */
export function fannedKey(area: 'attachments' | 'packages', name: string): string {
  return `${area}/${name[0]}/${name[1]}/${name}`;
}
