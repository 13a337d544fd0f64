import { applyHeapGrowth, collectGarbage } from './heap-growth';

describe('heap growth', () => {
  it('collects what nothing refers to any more, now', async () => {
    const ref = unreachable();
    // A WeakRef keeps its target for the rest of the job that made or read it: read it only after collecting.
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    expect(ref.deref()).toBeUndefined();
  });

  it('asks for one full collection after the start when it sets a growth, and for none when V8 decides', () => {
    const asked: (() => void)[] = [];
    applyHeapGrowth(0, (collect) => asked.push(collect));
    expect(asked).toEqual([]);
    applyHeapGrowth(30, (collect) => asked.push(collect));
    expect(asked).toEqual([collectGarbage]);
  });
});

/** A WeakRef to an object nothing else refers to once this returns. */
function unreachable(): WeakRef<object> {
  return new WeakRef({ payload: new Array(1000).fill(0) });
}
