/**
 * The text side of the user search index (GET /users/search): pure functions, shared by the
 * index writer (user-search.store.ts) and the search query; the migration that backfilled the index keeps a
 * copy of the formula as it stood then.
 *
 * Why grams: the search is a case-insensitive *substring* match on login, full name and (when the caller may
 * see it) e-mail. `LIKE '%q%'` cannot use a B-tree index, so on a large table every keystroke would scan every
 * user. Instead each user gets one row per distinct gram in `user_search_gram(gram, user_id)` (primary key
 * `(gram, user_id)`, so every lookup below is an index range scan on both SQLite and MySQL):
 *
 * - for every position i of a field, the gram is the (up to) three characters starting at i — so the last two
 *   positions give a two- and a one-character "tail" gram; and every distinct character is a gram too;
 * - a query of 3+ characters can only match users who have *every* trigram of the query, so the users of its
 *   least common trigram (found with bounded counts, UserSearchStore.rarestGram) are a complete candidate set:
 *   one index range, as small as the query's trigrams allow;
 * - a query of one character is looked up like a one-trigram query: its own gram lists each user once;
 * - a query of two characters is a substring of a field exactly when some gram of that field *starts* with
 *   it (the tail grams make this true at the end of a field too), so the candidates are one index range,
 *   `gram >= q AND gram < q || U+10FFFF`.
 *
 * Short queries match many users, and the exact `X-Total-Count` must count them all, so their work is
 * proportional to the answer; storing every character as its own gram keeps that work to one pass over an
 * already de-duplicated posting list (a range over the trigrams would list most users several times). No
 * table scan and no separate prefix index are needed.
 *
 * The grams only narrow the candidates; the exact `LIKE` on the lowered texts (user_search_text) then decides,
 * so the gram normalisation below may merge characters (it only ever widens the candidate set).
 */

/** Grams are at most this many characters (code points). */
export const GRAM_LENGTH = 3;

/** A query with more trigrams than this probes an evenly spread subset for the rarest one. */
export const MAX_QUERY_GRAMS = 12;

/**
 * What every whitespace and control character becomes inside a gram. MySQL's `utf8mb4_bin` is a PAD SPACE
 * collation ("ab" = "ab "), and characters below U+0020 sort before the padding; a gram therefore never
 * contains them, so equal-length and prefix comparisons behave the same on both databases.
 */
const GAP = '\u2423';

/** Upper bound of a prefix range: sorts after every character on both databases (code-point order). */
const MAX_CHAR = '\u{10FFFF}';

/** Lower-cases exactly as the stored texts are lowered (JavaScript, locale-independent). */
export function lowerForSearch(text: string): string {
  return text.toLowerCase();
}

function gramCharacters(text: string): string[] {
  return Array.from(lowerForSearch(text).replace(/[\s\u0000-\u001f\u007f]/gu, GAP));
}

/** The distinct grams of a user's searchable fields (login, full name, e-mail). */
export function searchGrams(fields: readonly string[]): string[] {
  const grams = new Set<string>();
  for (const field of fields) {
    const characters = gramCharacters(field);
    for (let i = 0; i < characters.length; i++) grams.add(characters.slice(i, i + GRAM_LENGTH).join(''));
  }
  for (const field of fields) for (const character of gramCharacters(field)) grams.add(character);
  return [...grams];
}

export type GramLookup =
  /** Candidates have a gram in [low, high): queries of two characters. */
  | { kind: 'prefix'; low: string; high: string }
  /** Matches have every one of these grams: queries of one character, or of three and more. */
  | { kind: 'all'; grams: string[] };

/** How to find the candidates of a (trimmed, non-empty) query in the gram table. */
export function gramLookup(query: string): GramLookup {
  const characters = gramCharacters(query);
  if (characters.length === 1) return { kind: 'all', grams: characters };
  if (characters.length < GRAM_LENGTH) {
    const prefix = characters.join('');
    return { kind: 'prefix', low: prefix, high: prefix + MAX_CHAR };
  }
  const all: string[] = [];
  for (let i = 0; i + GRAM_LENGTH <= characters.length; i++) {
    const gram = characters.slice(i, i + GRAM_LENGTH).join('');
    if (!all.includes(gram)) all.push(gram);
  }
  return { kind: 'all', grams: spread(all, MAX_QUERY_GRAMS) };
}

/** At most `max` items, evenly spread and always keeping the first and the last. */
function spread<T>(items: T[], max: number): T[] {
  if (items.length <= max) return items;
  const picked: T[] = [];
  for (let i = 0; i < max; i++) picked.push(items[Math.round((i * (items.length - 1)) / (max - 1))]);
  return [...new Set(picked)];
}

/** The escape character of the exact `LIKE` (written `ESCAPE '!'`: the same on SQLite and MySQL). */
export const LIKE_ESCAPE = '!';

/** `%<lowered query>%` with LIKE's wildcards and the escape character escaped. */
export function containsPattern(query: string): string {
  return `%${lowerForSearch(query).replace(/[!%_]/g, (character) => LIKE_ESCAPE + character)}%`;
}
