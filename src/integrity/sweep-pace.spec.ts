import { SweepPace } from './sweep-pace';

/** A pace whose waits are recorded, not slept, and whose answers to "did requests arrive?" are read from `arrivals`. */
function paced(arrivals: boolean[], onWait: () => void = () => undefined) {
  const waits: number[] = [];
  const pace = new SweepPace(
    () => arrivals.shift() ?? false,
    { restFactor: 1, stepMs: 100, maxRestMs: 2000 },
    async (ms) => {
      waits.push(ms);
      onWait();
    },
  );
  return { pace, waits };
}

describe('SweepPace', () => {
  it('rests as long as the work when no request arrives, and no longer', async () => {
    // The first answer opens the rest (what arrived before it does not count).
    const { pace, waits } = paced([true, false]);
    await pace.rest(20);
    expect(waits).toEqual([20]);
  });

  it('rests on a step at a time while requests arrive, until they stop', async () => {
    const { pace, waits } = paced([false, true, true, false]);
    await pace.rest(10);
    expect(waits).toEqual([10, 100, 100]);
  });

  it('never rests longer than its bound, so a server under constant load still sweeps', async () => {
    const { pace, waits } = paced(Array.from({ length: 100 }, () => true));
    await pace.rest(100);
    expect(waits.reduce((sum, ms) => sum + ms, 0)).toBe(2000);
    expect(waits[0]).toBe(100);
    // A repository that took longer than the bound rests the bound once.
    const long = paced([true, true, true]);
    await long.pace.rest(3000);
    expect(long.waits).toEqual([2000]);
  });

  it('stops resting as soon as the sweep is stopped', async () => {
    const stopper = new AbortController();
    const { pace, waits } = paced(
      Array.from({ length: 100 }, () => true),
      () => waits.length === 2 && stopper.abort(),
    );
    await pace.rest(10, stopper.signal);
    expect(waits).toEqual([10, 100]);
  });
});
