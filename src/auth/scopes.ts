import { LRUCache } from 'lru-cache';
/**
 * Access-token scopes (docs/check-order.md). A token holds, per category, no access, read or write; `write:X`
 * implies `read:X`; `all` is every write scope; `public-only` restricts the token to public things.
 */
export const SCOPE_CATEGORIES = ['activitypub', 'admin', 'misc', 'notification', 'organization', 'package', 'issue', 'repository', 'user'] as const;

export type ScopeCategory = (typeof SCOPE_CATEGORIES)[number];
export type ScopeLevel = 'read' | 'write';

const LEVEL_RANK = { none: 0, read: 1, write: 2 } as const;

export class InvalidScopeError extends Error {
  constructor(readonly scope: string) {
    super(`invalid access token scope: ${scope}`);
  }
}

/** Parsed stored scope strings (ScopeSet.fromStored), the least recently used out first. */
const STORED_SCOPES = new LRUCache<string, ScopeSet>({ max: 1000 });

export class ScopeSet {
  private constructor(
    private readonly levels: ReadonlyMap<ScopeCategory, ScopeLevel>,
    readonly publicOnly: boolean,
  ) {}

  /** Parses and normalises scope strings; items may themselves be comma-separated. */
  static parse(items: readonly string[]): ScopeSet {
    const levels = new Map<ScopeCategory, ScopeLevel>();
    let publicOnly = false;
    const grant = (category: ScopeCategory, level: ScopeLevel) => {
      if (LEVEL_RANK[level] > LEVEL_RANK[levels.get(category) ?? 'none']) levels.set(category, level);
    };
    for (const item of items.flatMap((entry) => entry.split(','))) {
      const scope = item.trim();
      if (scope === '' || scope === 'sudo') continue;
      if (scope === 'all') {
        for (const category of SCOPE_CATEGORIES) grant(category, 'write');
        continue;
      }
      if (scope === 'public-only') {
        publicOnly = true;
        continue;
      }
      const match = /^(read|write):([a-z]+)$/.exec(scope);
      if (!match || !(SCOPE_CATEGORIES as readonly string[]).includes(match[2])) throw new InvalidScopeError(scope);
      grant(match[2] as ScopeCategory, match[1] as ScopeLevel);
    }
    return new ScopeSet(levels, publicOnly);
  }

  /** The stored form: comma-joined normalised scopes. */
  static fromStored(stored: string): ScopeSet {
    // Every token-authenticated request reads its token's scopes; a set is immutable, so each stored form is parsed once.
    let set = STORED_SCOPES.get(stored);
    if (set === undefined) {
      try {
        set = ScopeSet.parse(stored === '' ? [] : stored.split(','));
      } catch {
        set = ScopeSet.parse([]);
      }
      STORED_SCOPES.set(stored, set);
    }
    return set;
  }

  get isEmpty(): boolean {
    return this.levels.size === 0 && !this.publicOnly;
  }

  /** True when the set grants at least `level` on `category`. */
  allows(category: ScopeCategory, level: ScopeLevel): boolean {
    return LEVEL_RANK[this.levels.get(category) ?? 'none'] >= LEVEL_RANK[level];
  }

  /**
   * What both sets allow: the lower level of each category, and public-only when either is. A token asking
   * for less than its grant gets what it asked; asking for more never gets more than the grant.
   */
  within(bound: ScopeSet): ScopeSet {
    const levels = new Map<ScopeCategory, ScopeLevel>();
    for (const [category, level] of this.levels) {
      const limit = bound.levels.get(category);
      if (limit) levels.set(category, LEVEL_RANK[level] <= LEVEL_RANK[limit] ? level : limit);
    }
    return new ScopeSet(levels, this.publicOnly || bound.publicOnly);
  }

  /** Normalised list: public-only first, then categories in their fixed order; a full write set is `all`. */
  toList(): string[] {
    const list: string[] = this.publicOnly ? ['public-only'] : [];
    if (SCOPE_CATEGORIES.every((category) => this.levels.get(category) === 'write')) return [...list, 'all'];
    for (const category of SCOPE_CATEGORIES) {
      const level = this.levels.get(category);
      if (level) list.push(`${level}:${category}`);
    }
    return list;
  }

  toStored(): string {
    return this.toList().join(',');
  }
}
