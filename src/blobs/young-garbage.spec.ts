import { constants, PerformanceObserver } from 'node:perf_hooks';
import { bodyBytesWritten } from './young-garbage';

describe('young-generation collections after received bodies', () => {
  /** The kinds of the collections V8 runs while `work` and the turns of the event loop after it run. */
  async function collectionsDuring(work: () => void): Promise<number[]> {
    const kinds: number[] = [];
    const observer = new PerformanceObserver((list) => {
      for (const entry of list.getEntries()) kinds.push((entry as unknown as { detail: { kind: number } }).detail.kind);
    });
    observer.observe({ entryTypes: ['gc'] });
    work();
    // The collection runs on the next turn; the observer hears of it a turn or two later.
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    await new Promise((resolve) => setTimeout(resolve, 20));
    observer.disconnect();
    return kinds;
  }

  it('runs one young-generation collection per 8 MiB written, on the next turn', async () => {
    const minor = constants.NODE_PERFORMANCE_GC_MINOR;
    // Many steps' worth within one turn: one collection, not one per step.
    const kinds = await collectionsDuring(() => {
      for (let step = 0; step < 4; step++) bodyBytesWritten(8 * 1024 * 1024);
    });
    expect(kinds.filter((kind) => kind === minor).length).toBeGreaterThanOrEqual(1);
    expect(kinds.filter((kind) => kind === minor).length).toBeLessThanOrEqual(2);
  });
});
