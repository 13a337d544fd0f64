import * as v8 from 'node:v8';
import { v8Collector } from '../common/v8-collector';

/** When the full collection after the start runs: not while the first requests after listening are answered. */
const COLLECT_AFTER_START_MS = 1_000;

/**
 * How far V8 grows the old generation between full collections. Left to its own heuristics on a machine with
 * gigabytes of RAM, V8 lets requests' promoted garbage pile up to about twice the live heap (about 40 MiB live,
 * over 100 MiB of old space at 64 connections), which is most of the server's peak RSS. A fixed growth keeps the
 * peak near the live size. Its default, 30% (config.ts), is a measured middle: at 10% a list of thirty
 * repositories under 64 connections (MariaDB) ran five full collections a second and cost 540-576 µs of server
 * CPU a request against 467-477 µs at 30%, for a peak RSS of 174 against 177 MiB (60%: 446-483 µs, 200 MiB).
 * This V8 setting is read at every collection, so setting it after start takes effect, unlike the heap size
 * limits (`--max-old-space-size`), which are fixed when the heap is created.
 *
 * It takes effect at the next full collection, and a start from the build's code cache makes too little garbage
 * to have one: until then V8 keeps its initial limit, and under the first load the old generation grew to some
 * 185 MiB before it was collected down to 50 (the perf harness's `GET /repos/{o}/{r}` right after a start: peak
 * RSS 324 MiB). So one full collection follows the start (`schedule`), from which the growth applies (peak
 * 208 MiB under the same load; bench/RESULTS.md).
 */
export function applyHeapGrowth(percent: number, schedule: (collect: () => void) => void = afterStart): void {
  if (percent <= 0) return;
  v8.setFlagsFromString(`--heap-growing-percent=${percent}`);
  schedule(collectGarbage);
}

/** One full collection of the heap, now (none where V8 refuses to hand over its `gc`). */
export function collectGarbage(): void {
  v8Collector()?.();
}

function afterStart(collect: () => void): void {
  setTimeout(collect, COLLECT_AFTER_START_MS).unref();
}
