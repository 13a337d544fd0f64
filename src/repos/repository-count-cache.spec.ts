import { RepositoryCountCache } from './repository-count-cache';

describe('RepositoryCountCache', () => {
  it('counts once per key and generation, also for concurrent requests', async () => {
    const cache = new RepositoryCountCache(10);
    let counts = 0;
    const count = async () => {
      counts += 1;
      return 42;
    };
    expect(await Promise.all([cache.get('q', 1, count), cache.get('q', 1, count), cache.get('q', 1, count)])).toEqual([42, 42, 42]);
    expect(counts).toBe(1);
    expect(await cache.get('other', 1, count)).toBe(42);
    expect(counts).toBe(2);
  });

  it('counts again when the generation moved', async () => {
    const cache = new RepositoryCountCache(10);
    expect(await cache.get('q', 1, async () => 1)).toBe(1);
    expect(await cache.get('q', 2, async () => 2)).toBe(2);
    expect(await cache.get('q', 2, async () => 3)).toBe(2);
  });

  it('forgets a failed count', async () => {
    const cache = new RepositoryCountCache(10);
    await expect(cache.get('q', 1, async () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(await cache.get('q', 1, async () => 7)).toBe(7);
  });

  it('keeps at most `capacity` keys, dropping the least recently used', async () => {
    const cache = new RepositoryCountCache(2);
    await cache.get('a', 1, async () => 1);
    await cache.get('b', 1, async () => 2);
    await cache.get('a', 1, async () => -1); // a is used again: b is now the oldest
    await cache.get('c', 1, async () => 3);
    expect(cache.size).toBe(2);
    expect(await cache.get('a', 1, async () => -1)).toBe(1);
    expect(await cache.get('b', 1, async () => 20)).toBe(20);
  });
});
