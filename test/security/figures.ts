import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';

/** Where the suite's figures go: one JSON object per line, printed at the end by print-figures.js. */
export const FIGURES_FILE = process.env.SECURITY_FIGURES ?? path.join(os.tmpdir(), 'anvil-security-figures.jsonl');

export function recordFigures(suite: string, figures: Record<string, number | string>): void {
  fs.appendFileSync(FIGURES_FILE, `${JSON.stringify({ suite, ...figures })}\n`);
}

/**
 * Event-loop delay over a stretch of work, from perf_hooks' histogram (sampled every 10 ms): the app runs in
 * this process, so a request that blocks the loop shows here whatever the wall clock of a shared machine does.
 */
export function watchEventLoop(): { stop(): { maxMs: number; p99Ms: number } } {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  return {
    stop: () => {
      histogram.disable();
      return { maxMs: histogram.max / 1e6, p99Ms: histogram.percentile(99) / 1e6 };
    },
  };
}

export function percentile(values: number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))];
}
