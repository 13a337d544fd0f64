export interface SweepPaceOptions {
  /** After each repository, rest this many times as long as it took: the sweep's share of the loop at most. */
  restFactor: number;
  stepMs: number;
  /** The longest rest, so that a server under constant load still sweeps, one repository per rest. */
  maxRestMs: number;
}

const DEFAULTS: SweepPaceOptions = { restFactor: 1, stepMs: 100, maxRestMs: 2000 };

/**
 * How the start's sweep shares the server with the requests it serves. After each repository it rests as long as
 * that one took (half of the event loop at most), then on, a step at a time, while requests arrived during the
 * rest (`serving`: whether any arrived since it was last asked), up to two seconds: an idle server finishes its
 * share as fast as before, a loaded one gives the sweep one repository every two seconds. With the first rest
 * alone, a start's sweep of repositories whose directories were missing took half a core for over a minute while
 * the requests waited. (The event loop's utilisation, tried first as the signal, is noise over rests of a few
 * milliseconds: it read the sweep's own late callbacks as load.)
 */
export class SweepPace {
  constructor(
    private readonly serving: () => boolean = () => false,
    private readonly options: SweepPaceOptions = DEFAULTS,
    private readonly wait: (ms: number, signal?: AbortSignal) => Promise<void> = pause,
  ) {}

  /** Rests after a repository that took `workedMs`; returns early when `signal` stops the sweep. */
  async rest(workedMs: number, signal?: AbortSignal): Promise<void> {
    const { restFactor, stepMs, maxRestMs } = this.options;
    let rested = Math.min(maxRestMs, Math.max(0, workedMs * restFactor));
    this.serving();
    await this.wait(rested, signal);
    while (!signal?.aborted && rested < maxRestMs && this.serving()) {
      const step = Math.min(stepMs, maxRestMs - rested);
      await this.wait(step, signal);
      rested += step;
    }
  }
}

/** Waits `ms`, or less when `signal` stops the sweep meanwhile. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, Math.ceil(ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}
