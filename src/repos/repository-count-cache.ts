/**
 * Exact totals of repository keyword searches, reused while the database's search generation
 * (migration 1764500100000: raised by triggers on every write a search total depends on) is unchanged.
 *
 * Why: the index finds a keyword's candidates quickly, but an exact `X-Total-Count` of a common keyword has to
 * test every match (visibility and the exact LIKE), which costs about as much as the scan. The same keyword is
 * asked again and again (typing, paging, popular words), while the rows it counts change rarely; a stored total
 * keyed by the generation read *before* counting is never older than a write that committed before that read.
 *
 * Per process, bounded (least recently used out), and one count per key and generation at a time: concurrent
 * requests for the same total wait for the one count instead of each running it.
 */
export class RepositoryCountCache {
  private readonly entries = new Map<string, { generation: number; total: Promise<number> }>();

  constructor(private readonly capacity: number) {}

  /** The total for `key` at `generation`: the stored one, the one being counted, or `count()`'s. */
  get(key: string, generation: number, count: () => Promise<number>): Promise<number> {
    const entry = this.entries.get(key);
    if (entry) this.entries.delete(key);
    if (entry && entry.generation === generation) {
      this.entries.set(key, entry);
      return entry.total;
    }
    const total = count();
    const fresh = { generation, total };
    this.entries.set(key, fresh);
    // A failed count is not kept: the next request counts again.
    total.catch(() => {
      if (this.entries.get(key) === fresh) this.entries.delete(key);
    });
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value as string);
    return total;
  }

  get size(): number {
    return this.entries.size;
  }
}
