'use strict';
/*
 * A ring of bytes in shared memory from one thread (the writer) to one other (the reader): what an SSH channel's
 * standard output crosses from the server's thread to the SSH transport's thread (ssh-transport.ts). A write is a
 * copy into the ring and two atomic stores; a message between the threads is needed only to wake a reader that
 * has emptied the ring, or a writer that found it full. (A message per chunk cost the writer's thread more than
 * the HTTP path's socket write of the same chunk: bench/RESULTS.md.)
 *
 * Both counters only grow (modulo 2^32, which a capacity of a power of two divides): what is in the ring is
 * `written - read`.
 */
const WRITTEN = 0;
const READ = 1;
/** 1 while the reader has been told of data it has not begun to read. */
const TOLD = 2;
/** 1 while the writer waits for room. */
const WAITING = 3;
const HEADER = 16;

class ByteRing {
  /** A new ring of `capacity` bytes, or the ring of a SharedArrayBuffer made by another thread. */
  constructor(capacityOrShared) {
    if (typeof capacityOrShared === 'number' && (capacityOrShared & (capacityOrShared - 1)) !== 0) throw new RangeError('a ring holds a power of two bytes');
    this.shared = typeof capacityOrShared === 'number' ? new SharedArrayBuffer(HEADER + capacityOrShared) : capacityOrShared;
    this.control = new Int32Array(this.shared, 0, 4);
    this.bytes = new Uint8Array(this.shared, HEADER);
    this.capacity = this.bytes.length;
  }

  /** Bytes in the ring. */
  get size() {
    return (Atomics.load(this.control, WRITTEN) - Atomics.load(this.control, READ)) >>> 0;
  }

  /**
   * The writer's side: copies as much of `chunk` as there is room for; how many bytes it took. `wake` is true when
   * the reader must be told (it may have emptied the ring and stopped).
   */
  write(chunk) {
    const written = Atomics.load(this.control, WRITTEN);
    const room = this.capacity - ((written - Atomics.load(this.control, READ)) >>> 0);
    const count = Math.min(room, chunk.length);
    if (count === 0) return { count, wake: false };
    const at = (written >>> 0) % this.capacity;
    const first = Math.min(count, this.capacity - at);
    this.bytes.set(chunk.subarray(0, first), at);
    if (count > first) this.bytes.set(chunk.subarray(first, count), 0);
    Atomics.store(this.control, WRITTEN, (written + count) | 0);
    return { count, wake: Atomics.exchange(this.control, TOLD, 1) === 0 };
  }

  /**
   * The writer's side, when the ring was full: marks the writer as waiting; true when room appeared meanwhile
   * (then it need not wait), false when the reader will tell it.
   */
  waitForRoom() {
    Atomics.store(this.control, WAITING, 1);
    return this.size < this.capacity;
  }

  /** The reader's side, having emptied the ring: from now on, data written needs telling (look once more after). */
  heard() {
    Atomics.store(this.control, TOLD, 0);
  }

  /**
   * The reader's side: a copy of up to `max` bytes from the ring (null when empty), and whether the writer waits for
   * the room this made.
   */
  read(max) {
    const read = Atomics.load(this.control, READ);
    const count = Math.min(max, (Atomics.load(this.control, WRITTEN) - read) >>> 0);
    if (count === 0) return null;
    const chunk = Buffer.allocUnsafe(count);
    const at = (read >>> 0) % this.capacity;
    const first = Math.min(count, this.capacity - at);
    chunk.set(this.bytes.subarray(at, at + first), 0);
    if (count > first) chunk.set(this.bytes.subarray(0, count - first), first);
    Atomics.store(this.control, READ, (read + count) | 0);
    return { chunk, wakeWriter: Atomics.exchange(this.control, WAITING, 0) === 1 };
  }
}

module.exports = { ByteRing };
