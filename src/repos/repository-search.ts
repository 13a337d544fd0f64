/**
 * The repository search index (GET /repos/search `q`): how a keyword finds its candidate
 * repositories. Pure functions; RepositoryStore runs them.
 *
 * The search is a case-insensitive substring match (`r.lower_name LIKE '%q%'`, and `LOWER(r.description)`
 * with includeDesc), which no B-tree index can serve. The migration 1764500000000 therefore keeps a
 * trigram index, maintained by database triggers in the same statement as every write of a repository row
 * (so it is right even for rows written by SQL from outside Anvil, and it needs no backfill at start-up):
 *
 * - SQLite: the FTS5 tables `repository_name_search(lower_name)` and `repository_description_search(description)`
 *   with the `trigram` tokenizer. A phrase query `"abc…"` lists the rows whose (case-folded) text contains
 *   the phrase: all its trigrams, consecutive.
 * - MariaDB/MySQL: `repository_search_gram(source, gram, repo_id)`, one row per distinct three-character
 *   substring of `lower_name` (source 0) and of `LOWER(description)` (source 1). A match contains every
 *   trigram of the keyword, so the repositories holding its least common trigram are a complete candidate set.
 *
 * Either way the index only narrows: the exact LIKE conditions stay in the query as the final filter, so the
 * answers (items, order and `X-Total-Count`) are those of the plain scan. A term shorter than three characters
 * has no trigram: then the search scans, as it always did (short keywords match much of the table anyway).
 */

/** Index sources of the MariaDB gram table. */
export const NAME_SOURCE = 0;
export const DESCRIPTION_SOURCE = 1;

/** Grams are this many characters (code points), on both databases. */
export const TRIGRAM = 3;

/** One substring condition of a keyword: the lowered text, and whether descriptions are searched too. */
export interface SearchTerm {
  text: string;
  includeDescription: boolean;
}

export type CandidateLookup =
  /** Some term is too short for the index: the exact conditions alone decide (a scan). */
  | { kind: 'scan' }
  /** SQLite: the candidates are the rows of these FTS5 MATCH expressions (names; descriptions, if any). */
  | { kind: 'fts'; names: string; descriptions?: string }
  /** MariaDB/MySQL: per term, its distinct trigrams and the sources to look them up in. */
  | { kind: 'grams'; terms: { grams: string[]; sources: number[] }[] };

/**
 * The substring terms of a keyword search: each comma-separated alternative (in names, and in descriptions
 * with includeDesc), and the name part of the `owner/name` form (a match of that form contains it).
 */
export function searchTerms(alternatives: readonly string[], includeDescription: boolean, ownerAndName?: readonly [string, string]): SearchTerm[] {
  const terms = alternatives.map((alternative) => ({ text: alternative.toLowerCase(), includeDescription }));
  if (ownerAndName) terms.push({ text: ownerAndName[1].toLowerCase(), includeDescription: false });
  return terms;
}

/** How to find the candidates of `terms` on the given database. */
export function candidateLookup(terms: readonly SearchTerm[], database: 'sqlite' | 'mysql'): CandidateLookup {
  if (terms.length === 0 || terms.some((term) => Array.from(term.text).length < TRIGRAM)) return { kind: 'scan' };
  if (database === 'sqlite') {
    // FTS5 parses its query as a C string: a NUL would end it.
    if (terms.some((term) => term.text.includes('\u0000'))) return { kind: 'scan' };
    const inDescriptions = terms.filter((term) => term.includeDescription);
    return { kind: 'fts', names: ftsMatch(terms), ...(inDescriptions.length > 0 ? { descriptions: ftsMatch(inDescriptions) } : {}) };
  }
  return {
    kind: 'grams',
    terms: terms.map((term) => ({
      grams: trigrams(term.text),
      sources: term.includeDescription ? [NAME_SOURCE, DESCRIPTION_SOURCE] : [NAME_SOURCE],
    })),
  };
}

/** The distinct trigrams of a (lowered) text, in order of first occurrence. */
export function trigrams(text: string): string[] {
  const characters = Array.from(text);
  const grams: string[] = [];
  for (let i = 0; i + TRIGRAM <= characters.length; i++) {
    const gram = characters.slice(i, i + TRIGRAM).join('');
    if (!grams.includes(gram)) grams.push(gram);
  }
  return grams;
}

/**
 * An FTS5 query: each term a phrase (the trigram tokenizer makes it "contains this substring"), the terms
 * joined by OR. Inside a phrase only `"` is special (doubled).
 */
export function ftsMatch(terms: readonly SearchTerm[]): string {
  return terms.map((term) => `"${term.text.replace(/"/g, '""')}"`).join(' OR ');
}
