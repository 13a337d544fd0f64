import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** V8's `gc`: a full collection, or with `{ type: 'minor' }` one of the young generation alone. */
export type Collect = (options?: { type: 'minor' | 'major' }) => void;

let collect: Collect | null | undefined;

/**
 * V8's `gc` function, for the server's own use: Node.js has no call that starts a collection. V8 puts `gc` on each
 * context created while `--expose-gc` is set, so the flag is set for the moment it takes to create one, and the new
 * context hands the function over without putting it on the application's global object. Null where the engine
 * refuses (callers then leave the collections to V8).
 */
export function v8Collector(): Collect | null {
  if (collect !== undefined) return collect;
  try {
    setFlagsFromString('--expose-gc');
    const gc: unknown = runInNewContext('gc');
    collect = typeof gc === 'function' ? (gc as Collect) : null;
  } catch {
    collect = null;
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
  return collect;
}
