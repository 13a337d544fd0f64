import { createHash, randomUUID } from 'node:crypto';
import * as os from 'node:os';
import { createReadStream } from 'node:fs';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Injectable } from '@nestjs/common';
import { leftByDeadProcess, taggedName } from '../common/process-identity';
import { StorageConfig } from '../config/slices';
import { FileSink } from './file-sink';
import { ByteRange, closeFile, OpenBlob, openForReading, sizeOf } from './open-blob';

/** A file received into the temporary area: measured and hashed, not yet visible under any key. */
export interface StagedBlob {
  size: number;
  /** Lowercase hex digests of the algorithms asked for (hashing costs CPU: only what the caller needs). */
  digests: Partial<Record<DigestAlgorithm, string>>;
  /**
   * Moves the complete file to the pending place of `key`, before the row that makes it visible is written: a
   * crash after that row's commit leaves it where the start-up reconciliation finds it and finishes the move.
   */
  park(key: string): Promise<void>;
  /** Moves the file under its key (one rename, so a reader never sees a partial file); after the row's commit. */
  commit(): Promise<void>;
  /**
   * Moves the file straight under `key`, replacing whatever is there (one rename): for content-addressed keys,
   * where a file already under the key holds the same bytes, and the row comes after the file.
   */
  place(key: string): Promise<void>;
  /** Removes the temporary or pending file; harmless after commit. */
  discard(): Promise<void>;
}

/** A parked file: complete, waiting for its row's commit to be moved under `key`. */
export interface PendingBlob {
  key: string;
  file: string;
  mtimeMs: number;
}

/** A stored file, as the reconciliation walks them. */
export interface StoredBlobFile {
  key: string;
  mtimeMs: number;
}

export type DigestAlgorithm = 'md5' | 'sha1' | 'sha256' | 'sha512';

/**
 * Uploaded files on local disk under DATA_DIR (house style: one adapter per side effect, so that an object
 * store can replace it without touching a service). A write streams into DATA_DIR/tmp while it is counted and
 * hashed, and is renamed into place only once complete: a cut-off or oversized upload leaves no file.
 * Keys are relative paths such as `attachments/a/b/<uuid>`; callers build them from ids they generated.
 */
@Injectable()
export class BlobStorage {
  private readonly root: string;
  /** Where every instance keeps its uploads in flight, each in a directory of its own. */
  private readonly scratchRoot: string;
  /** This instance's: other instances on the same DATA_DIR never touch it while it is in use. */
  private readonly tmp: string;
  /** Now, for the age of leftovers (tests give their own). */
  clock: () => number = () => Date.now();
  private readonly pending: string;

  constructor(storageConfig: StorageConfig) {
    this.root = path.resolve(storageConfig.dataDir);
    this.scratchRoot = path.join(this.root, 'tmp', 'uploads');
    this.pending = path.join(this.root, 'tmp', 'pending');
    this.tmp = path.join(
      this.scratchRoot,
      taggedName(
        `${os
          .hostname()
          .replace(/[^0-9A-Za-z.-]/g, '_')
          .slice(0, 40)}-${process.pid}-${randomUUID().slice(0, 8)}`,
      ),
    );
  }

  /**
   * Streams `source` into a temporary file. More than `maxBytes` → PayloadTooLargeError, and an error or
   * early end of `source` rejects; in both cases the temporary file is gone before this returns. `durable`
   * flushes the file to disk before this resolves, for stores that rename it into place before its row.
   */
  async receive(source: Readable, maxBytes: number, digests: DigestAlgorithm[] = [], options: { durable?: boolean } = {}): Promise<StagedBlob> {
    await fs.mkdir(this.tmp, { recursive: true });
    const file = path.join(this.tmp, randomUUID());
    const hashes = digests.map((algorithm) => [algorithm, createHash(algorithm)] as const);
    const sink = new FileSink(file, { maxBytes, hashes: hashes.map(([, hash]) => hash), durable: options.durable === true });
    try {
      await pipeline(source, sink);
    } catch (error) {
      await fs.rm(file, { force: true });
      throw error;
    }
    const size = sink.size;
    let current = file;
    let parkedKey: string | null = null;
    return {
      size,
      digests: Object.fromEntries(hashes.map(([algorithm, hash]) => [algorithm, hash.digest('hex')])),
      park: async (key: string) => {
        const pending = path.join(this.pending, `${key.replaceAll('/', '.')}.${randomUUID()}`);
        this.pathOf(key);
        await fs.mkdir(this.pending, { recursive: true });
        await fs.rename(current, pending);
        current = pending;
        parkedKey = key;
      },
      commit: async () => {
        if (parkedKey === null) throw new Error('a staged blob is committed only after it was parked');
        await this.finish(current, parkedKey);
      },
      place: async (key: string) => {
        const target = this.pathOf(key);
        await fs.mkdir(path.dirname(target), { recursive: true });
        await fs.rename(current, target);
        current = target;
      },
      discard: () => (current.startsWith(this.tmp) || current.startsWith(this.pending) ? fs.rm(current, { force: true }) : Promise.resolve()),
    };
  }

  /**
   * Moves a parked file under its key. Another process (the start-up reconciliation of a second instance) may
   * have done it already: a missing parked file is then no error.
   */
  async finish(pendingFile: string, key: string): Promise<void> {
    const target = this.pathOf(key);
    await fs.mkdir(path.dirname(target), { recursive: true });
    try {
      await fs.rename(pendingFile, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT' || (await this.size(key)) === null) throw error;
    }
  }

  /** Parked files (complete uploads whose row may or may not have committed). */
  async pendingBlobs(): Promise<PendingBlob[]> {
    let names: string[];
    try {
      names = await fs.readdir(this.pending);
    } catch {
      return [];
    }
    const found: PendingBlob[] = [];
    for (const name of names) {
      const file = path.join(this.pending, name);
      const stat = await fs.lstat(file).catch(() => null);
      const key = name.replace(/\.[0-9a-f-]{36}$/, '').replaceAll('.', '/');
      if (stat?.isFile() && BLOB_KEY.test(key)) found.push({ key, file, mtimeMs: stat.mtimeMs });
    }
    return found;
  }

  /** Every stored file of an area (`attachments`, `packages`, `lfs`), by key. */
  async storedBlobs(area: 'attachments' | 'packages' | 'lfs'): Promise<StoredBlobFile[]> {
    const found: StoredBlobFile[] = [];
    const walk = async (dir: string, key: string): Promise<void> => {
      let entries;
      try {
        entries = await fs.readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const entry of entries) {
        const child = path.join(dir, entry.name);
        if (entry.isDirectory()) await walk(child, `${key}/${entry.name}`);
        else if (entry.isFile() && BLOB_KEY.test(`${key}/${entry.name}`)) {
          const stat = await fs.lstat(child).catch(() => null);
          if (stat) found.push({ key: `${key}/${entry.name}`, mtimeMs: stat.mtimeMs });
        }
      }
    };
    await walk(path.join(this.root, area), area);
    return found;
  }

  /** The file of `key` on disk (for moving it into quarantine). */
  fileOf(key: string): string {
    return this.pathOf(key);
  }

  /** The blob's size, or null when there is none under `key`. */
  async size(key: string): Promise<number | null> {
    try {
      return (await fs.stat(this.pathOf(key))).size;
    } catch {
      return null;
    }
  }

  /**
   * The content opened for reading, with its size, or null when there is none: one open answers both "is it
   * there, how large" and the send after it (a stat and then an open and an fstat cost a small download three
   * trips to the thread pool instead of two). `knownSize`: the size its row records, for content that never
   * changes under its key (then not even the fstat is needed). The caller closes it.
   */
  async openRead(key: string, knownSize?: number): Promise<OpenBlob | null> {
    let fd: number;
    try {
      fd = await openForReading(this.pathOf(key));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    if (knownSize !== undefined) return new OpenBlob(fd, knownSize);
    try {
      return new OpenBlob(fd, await sizeOf(fd));
    } catch (error) {
      await closeFile(fd);
      throw error;
    }
  }

  /** Writes the content (or one range of it) to `target` and ends it (see `OpenBlob.send`). */
  async send(key: string, target: Writable, range?: ByteRange): Promise<void> {
    const blob = await this.openRead(key);
    if (!blob) throw new Error(`no content under ${key}`);
    try {
      await blob.send(target, range);
    } finally {
      await blob.close();
    }
  }

  /** The content as a stream, for a transport that pipes it on; the stream fails when the file is gone. */
  stream(key: string): Readable {
    return createReadStream(this.pathOf(key));
  }

  /** At most the first `bytes` of the content (for sniffing its type). */
  async head(key: string, bytes: number): Promise<Buffer> {
    const handle = await fs.open(this.pathOf(key), 'r');
    try {
      const buffer = Buffer.alloc(bytes);
      const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await handle.close();
    }
  }

  /**
   * Takes the blob out of its key (one rename into this instance's upload area), so that a caller can look
   * once more whether it is still wanted and then `restore` or `drop` it; null when there is none.
   */
  async withdraw(key: string): Promise<{ restore(): Promise<void>; drop(): Promise<void> } | null> {
    const file = this.pathOf(key);
    await fs.mkdir(this.tmp, { recursive: true });
    const aside = path.join(this.tmp, randomUUID());
    try {
      await fs.rename(file, aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw error;
    }
    return {
      restore: () => fs.rename(aside, file),
      drop: () => fs.rm(aside, { force: true }),
    };
  }

  /** Removes the blob; a missing one is not an error. */
  async remove(key: string): Promise<void> {
    await fs.rm(this.pathOf(key), { force: true });
  }

  /**
   * Leftovers of uploads that were in flight when some instance stopped: every scratch directory (or file)
   * under DATA_DIR/tmp/uploads in which nothing was written for STALE_SCRATCH_MS. An upload in flight writes
   * at least every HTTP_BODY_TIMEOUT (or is cut off), so another instance's live upload is never among them;
   * and at once the scratch directory of a process known to be gone (process-identity.ts).
   */
  async clearTemporary(): Promise<void> {
    let entries: string[];
    try {
      entries = await fs.readdir(this.scratchRoot);
    } catch {
      return;
    }
    const staleBefore = this.clock() - STALE_SCRATCH_MS;
    for (const entry of entries) {
      const entryPath = path.join(this.scratchRoot, entry);
      if (entryPath === this.tmp) continue;
      if (leftByDeadProcess(entry) || (await newestWrite(entryPath)) < staleBefore) await fs.rm(entryPath, { recursive: true, force: true });
    }
  }

  private pathOf(key: string): string {
    if (!BLOB_KEY.test(key)) throw new Error(`unsafe blob key: ${JSON.stringify(key)}`);
    return path.join(this.root, key);
  }
}

/** Scratch files untouched for this long belong to no live upload (bodies time out after seconds of silence). */
export const STALE_SCRATCH_MS = 60 * 60 * 1000;

/** The latest modification time of `entry` or anything under it; 0 when it vanished meanwhile. */
async function newestWrite(entry: string): Promise<number> {
  let stat;
  try {
    stat = await fs.lstat(entry);
  } catch {
    return 0;
  }
  let newest = stat.mtimeMs;
  if (stat.isDirectory()) {
    const children = await fs.readdir(entry).catch(() => [] as string[]);
    for (const child of children) newest = Math.max(newest, await newestWrite(path.join(entry, child)));
  }
  return newest;
}

const BLOB_KEY = /^[a-z]+(\/[0-9a-z-]+)+$/;

/** Two levels of fan-out from the first characters of a random or content-derived name. */
export function fannedKey(area: 'attachments' | 'packages', name: string): string {
  return `${area}/${name[0]}/${name[1]}/${name}`;
}
