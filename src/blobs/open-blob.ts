import { close as closeFd, fstat as fstatFd, open as openFd, read as readFd } from 'node:fs';
import type { Writable } from 'node:stream';

/** Bytes `start`..`end` inclusive, as range-parser gives them. */
export interface ByteRange {
  start: number;
  end: number;
}

/** Downloads read the file in 256 KiB steps into two buffers per transfer that are reused (see `send`). */
const SEND_BUFFER_BYTES = 256 * 1024;

/**
 * A stored file opened for reading (BlobStorage.openRead); whoever opened it closes it. It holds a plain file
 * descriptor used through fs's callbacks: a FileHandle of fs/promises cost a small download more server time in
 * its open and close than the reads and writes themselves (a profile of `git lfs pull` of 4 KiB objects).
 */
export class OpenBlob {
  private closing: Promise<void> | null = null;

  constructor(
    private readonly fd: number,
    readonly size: number,
  ) {}

  /**
   * Writes the content (or one range of it) to `target` and ends it. The file is read into at most two buffers
   * that are reused once `target` has taken each write (its callback): a download allocates nothing per chunk,
   * so 16 parallel 50 MiB downloads leave no garbage for the GC to catch up with, and the steps can be large
   * (fewer reads and callbacks than a 64 KiB read stream). At most two steps are in flight per download, which
   * also follows the client's pace. A buffer is no larger than what is left to send, and the second one is made
   * only when one step does not hold it all: two 256 KiB buffers for each 4 KiB object made `git lfs pull` of
   * small files spend its time in the GC. Rejects when `target` fails or closes early (the client went away).
   */
  async send(target: Writable, range?: ByteRange): Promise<void> {
    const closed = new Promise<never>((_, reject) => target.once('close', () => reject(new Error('the download was closed early'))));
    closed.catch(() => undefined);
    const end = range ? range.end + 1 : this.size;
    let position = range ? range.start : 0;
    const step = Math.min(SEND_BUFFER_BYTES, end - position);
    const buffers: Buffer[] = [];
    const writes: Promise<void>[] = [Promise.resolve(), Promise.resolve()];
    for (let turn = 0; position < end; turn ^= 1) {
      // This buffer's previous write must have been taken before the buffer is filled again.
      await Promise.race([writes[turn], closed]);
      buffers[turn] ??= Buffer.allocUnsafe(step);
      const bytesRead = await readAt(this.fd, buffers[turn], Math.min(step, end - position), position);
      if (bytesRead === 0) throw new Error('the file is shorter than its size');
      position += bytesRead;
      writes[turn] = writeTo(target, buffers[turn].subarray(0, bytesRead));
      writes[turn].catch(() => undefined);
    }
    await Promise.race([Promise.all(writes), closed]);
    await Promise.race([new Promise<void>((resolve) => target.end(resolve)), closed]);
  }

  /** Closes the file once, however often it is called. */
  close(): Promise<void> {
    this.closing ??= closeFile(this.fd);
    return this.closing;
  }
}

export function openForReading(file: string): Promise<number> {
  return new Promise((resolve, reject) => openFd(file, 'r', (error, fd) => (error ? reject(error) : resolve(fd))));
}

export function sizeOf(fd: number): Promise<number> {
  return new Promise((resolve, reject) => fstatFd(fd, (error, stat) => (error ? reject(error) : resolve(stat.size))));
}

function readAt(fd: number, buffer: Buffer, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) => readFd(fd, buffer, 0, length, position, (error, bytesRead) => (error ? reject(error) : resolve(bytesRead))));
}

export function closeFile(fd: number): Promise<void> {
  return new Promise((resolve, reject) => closeFd(fd, (error) => (error ? reject(error) : resolve())));
}

/** Resolves once `target` has taken `chunk` (its write callback): from then on the buffer may be reused. */
function writeTo(target: Writable, chunk: Buffer): Promise<void> {
  return new Promise((resolve, reject) => target.write(chunk, (error) => (error ? reject(error) : resolve())));
}
