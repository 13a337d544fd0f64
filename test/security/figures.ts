import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';

/** Where the suite's figures go: one JSON object per line, printed at the end by print-figures.js. */
export const FIGURES_FILE = process.env.SECURITY_FIGURES ?? path.join(os.tmpdir(), 'anvil-security-figures.jsonl');

/**
 * What the suite asserts on. The targets (no stall above 200 ms, /version p99 under 100 ms) are figures
 * of the reference machine and are printed with every run; a shared CI machine's scheduling and garbage
 * collection can pass them without any request blocking, so the assertion is a tripwire that the blocking
 * bugs this suite guards against (seconds of work on the event loop: a DSA bomb took 9 s) always cross.
 */
export const STALL_TRIPWIRE_MS = Number(process.env.SECURITY_STALL_TRIPWIRE_MS ?? 1000);

export function recordFigures(suite: string, figures: Record<string, number | string>): void {
  fs.appendFileSync(FIGURES_FILE, `${JSON.stringify({ suite, ...figures })}\n`);
}

export interface EventLoopFigures {
  /** Largest event-loop delay perf_hooks' histogram saw, whatever its cause (a shared machine's scheduling too). */
  maxMs: number;
  p99Ms: number;
  /**
   * Largest delay during which the loop was busy running code (event-loop utilisation of that stretch above
   * 90%): a request holding the thread. Time the process merely waited for a core, with the loop idle, is not
   * counted, so this is what "no request stalls the event loop" is asserted on.
   */
  busyStallMs: number;
  /** What was running during the worst busy stalls (see `during`). */
  culprits: string;
  /**
   * What stalled the busy loop for `thresholdMs` or more at least twice: a request that blocks does so each
   * time it runs, while a garbage collection or a preempted thread lands on whatever runs at that moment.
   */
  repeatedStalls(thresholdMs: number): string[];
}

/**
 * Watches the event loop over a stretch of work. The app runs in this process, so a request that blocks the
 * loop shows here. `during(label)` names what runs now, so that a stall can be attributed.
 */
export function watchEventLoop(): { during(label: string): void; stop(): EventLoopFigures } {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  let label = '';
  let lastTick = performance.now();
  let lastUtilization = performance.eventLoopUtilization();
  const stalls: [number, string][] = [];
  const ticker = setInterval(() => {
    const now = performance.now();
    const utilization = performance.eventLoopUtilization(lastUtilization);
    const late = now - lastTick - 10;
    if (late > 20 && utilization.utilization > 0.9) stalls.push([late, label]);
    lastTick = now;
    lastUtilization = performance.eventLoopUtilization();
  }, 10);
  return {
    during: (next) => (label = next),
    stop: () => {
      clearInterval(ticker);
      histogram.disable();
      stalls.sort((a, b) => b[0] - a[0]);
      return {
        maxMs: Number((histogram.max / 1e6).toFixed(1)),
        p99Ms: Number((histogram.percentile(99) / 1e6).toFixed(1)),
        busyStallMs: Number((stalls[0]?.[0] ?? 0).toFixed(1)),
        culprits: stalls
          .slice(0, 3)
          .map(([ms, what]) => `${what || '(between requests)'} ${ms.toFixed(0)}ms`)
          .join('; '),
        repeatedStalls: (thresholdMs) => {
          const counts = new Map<string, number>();
          for (const [ms, what] of stalls) if (ms >= thresholdMs) counts.set(what, (counts.get(what) ?? 0) + 1);
          return [...counts].filter(([, count]) => count >= 2).map(([what, count]) => `${what || '(between requests)'} ×${count}`);
        },
      };
    },
  };
}

export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}
