import type { Hash } from 'node:crypto';
import { close, fdatasync, fsync, open, writev } from 'node:fs';
import { Writable } from 'node:stream';
import { PayloadTooLargeError } from '../common/errors';
import { bodyBytesWritten } from './young-garbage';

/**
 * Chunks that wait while a write is on the disk thread: the next write takes all of them in one `writev`, and
 * the socket is read (and the bytes hashed) meanwhile, instead of one 64 KiB chunk per trip to the thread pool
 * with the socket paused in between. Held for a write's duration only (well under a young-generation GC).
 */
const QUEUE_BYTES = 512 * 1024;

/**
 * A durable file is flushed to disk in steps of this many bytes while it is received (one `fdatasync` at a
 * time, beside the writes), so that the final `fsync` waits for the last step's bytes only, not for the whole
 * file: Linux starts writing dirty pages back on its own only once gigabytes are waiting.
 */
const SYNC_STEP_BYTES = 32 * 1024 * 1024;

export interface FileSinkOptions {
  /** More bytes than this fail the sink with PayloadTooLargeError, before they are written. */
  maxBytes: number;
  /** Updated with every byte, in order, as it goes to the file. */
  hashes: Hash[];
  /** Flushed to disk (fsync) before the sink finishes; otherwise left to the page cache. */
  durable: boolean;
  /** A durable file's flush step (SYNC_STEP_BYTES); tests give a small one. */
  syncStepBytes?: number;
}

/**
 * The file an upload streams into (created, never replaced: `wx`), counting and hashing the bytes on their way.
 * It finishes only once every byte is written (and, when durable, flushed to disk) and the file closed; failed
 * or destroyed, it closes the file once no write or flush is in flight on it. The caller removes the file.
 */
export class FileSink extends Writable {
  /** Bytes accepted so far (all of them written once the sink has finished). */
  size = 0;
  private fd: number | null = null;
  private written = 0;
  private synced = 0;
  private syncing = false;
  private syncError: Error | null = null;
  /** Writes and flushes on the disk threads: the file is closed only when none is left. */
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly file: string,
    private readonly options: FileSinkOptions,
  ) {
    super({ highWaterMark: QUEUE_BYTES, decodeStrings: true });
  }

  override _construct(callback: (error?: Error | null) => void): void {
    open(this.file, 'wx', (error, fd) => {
      if (error) return callback(error);
      this.fd = fd;
      callback();
    });
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeChunks([chunk], callback);
  }

  override _writev(chunks: { chunk: Buffer }[], callback: (error?: Error | null) => void): void {
    this.writeChunks(
      chunks.map((entry) => entry.chunk),
      callback,
    );
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.whenIdle(() => {
      if (!this.options.durable) return callback(this.syncError);
      fsync(this.fd!, (error) => callback(error ?? this.syncError));
    });
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // Destroyed while a write or a flush is on a disk thread, the file is closed after it.
    this.whenIdle(() => {
      const fd = this.fd;
      this.fd = null;
      if (fd === null) return callback(error);
      close(fd, (closeError) => callback(error ?? closeError));
    });
  }

  private writeChunks(chunks: Buffer[], callback: (error?: Error | null) => void): void {
    if (this.syncError) return callback(this.syncError);
    let bytes = 0;
    for (const chunk of chunks) bytes += chunk.length;
    if (this.size + bytes > this.options.maxBytes) return callback(new PayloadTooLargeError('the file is larger than the allowed size'));
    this.size += bytes;
    this.inFlight += 1;
    writeAll(this.fd!, chunks, this.written, (error) => {
      if (!error) {
        this.written += bytes;
        bodyBytesWritten(bytes);
        if (!this.destroyed) this.startSyncStep();
      }
      this.settled();
      callback(error);
    });
    // The disk thread reads the chunks while they are hashed here.
    for (const hash of this.options.hashes) for (const chunk of chunks) hash.update(chunk);
  }

  private startSyncStep(): void {
    if (!this.options.durable || this.syncing || this.written - this.synced < (this.options.syncStepBytes ?? SYNC_STEP_BYTES)) return;
    const upTo = this.written;
    this.syncing = true;
    this.inFlight += 1;
    fdatasync(this.fd!, (error) => {
      if (error) this.syncError ??= error;
      else this.synced = upTo;
      this.syncing = false;
      this.settled();
    });
  }

  private settled(): void {
    this.inFlight -= 1;
    if (this.inFlight === 0) for (const then of this.idle.splice(0)) then();
  }

  private whenIdle(then: () => void): void {
    if (this.inFlight === 0) then();
    else this.idle.push(then);
  }
}

/** Writes all of `chunks` at `position`, again from where a short write stopped. */
function writeAll(fd: number, chunks: Buffer[], position: number, callback: (error: Error | null) => void): void {
  writev(fd, chunks, position, (error, bytesWritten) => {
    if (error) return callback(error);
    if (bytesWritten === 0) return callback(new Error('the file took no bytes'));
    let left = bytesWritten;
    let index = 0;
    while (index < chunks.length && left >= chunks[index].length) left -= chunks[index++].length;
    if (index === chunks.length) return callback(null);
    const rest = [chunks[index].subarray(left), ...chunks.slice(index + 1)];
    writeAll(fd, rest, position + bytesWritten, callback);
  });
}
