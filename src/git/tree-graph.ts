/** A count's marks: not counted yet, or being summed (on the walk's stack). */
export const UNKNOWN = -1;
export const ON_STACK = -2;
export const NO_SUBTREES: readonly number[] = [];

/**
 * The trees of one count, numbered as they become known: a tree's id is looked up once where it is named, and
 * the count then runs over arrays of numbers. Ids are kept as their raw bytes in a one-byte string (a key): half
 * a hex id's length, and made without formatting; git is asked in hex.
 */
export class TreeGraph {
  readonly keys: string[] = [];
  /** Each tree's entries, once read (`limit + 1` for one too large to expand). */
  readonly entries: number[] = [];
  /** The subtrees each read tree names, by number. */
  readonly subtrees: (number[] | undefined)[] = [];
  /** Each tree's count: a kept one, or one summed here; UNKNOWN, or ON_STACK while being summed. */
  readonly counts: number[] = [];
  private readonly numbers = new Map<string, number>();

  numberOf(key: string): number | undefined {
    return this.numbers.get(key);
  }

  add(key: string): number {
    const tree = this.keys.length;
    this.keys.push(key);
    this.entries.push(UNKNOWN);
    this.subtrees.push(undefined);
    this.counts.push(UNKNOWN);
    this.numbers.set(key, tree);
    return tree;
  }
}
