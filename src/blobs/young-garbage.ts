import { v8Collector } from '../common/v8-collector';

/**
 * Bytes of received bodies after which V8 is asked for a young-generation collection. An upload's body arrives
 * as Node's HTTP parser reads the socket: every read is a new buffer of up to 64 KiB whose bytes live outside
 * V8's heap, and V8 frees those bytes only in a young-generation collection, which it starts once its young
 * generation is full or the outside memory has grown by tens of megabytes. Streaming 1 GiB to disk then held
 * 35-55 MiB of chunks already written (bench/RESULTS.md, Git LFS). Asked every 8 MiB, it holds about that much.
 */
const STEP_BYTES = 8 * 1024 * 1024;

let sinceLast = 0;
let scheduled = false;

/**
 * Counts `bytes` of a body that has been written and is garbage once its write's callback has returned; every
 * STEP_BYTES of them (over all uploads together) a young-generation collection runs on the next turn of the event
 * loop and finds them unreachable. It costs a scavenge of the few live young objects: a fraction of a
 * millisecond, about a hundred times per gigabyte.
 */
export function bodyBytesWritten(bytes: number): void {
  sinceLast += bytes;
  if (sinceLast < STEP_BYTES || scheduled) return;
  sinceLast = 0;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    v8Collector()?.({ type: 'minor' });
  });
}
