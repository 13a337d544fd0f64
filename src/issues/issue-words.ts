// Why: the word index of issues (issue_word) is written and queried with the same tokenizer, kept pure here.

/** Longest word kept (the column's size); longer words are cut, so a prefix search still finds them. */
export const MAX_WORD_LENGTH = 64;
/** Distinct words indexed per issue: a cap on index rows per write. */
export const MAX_WORDS_PER_ISSUE = 2000;
/** Words of a query used; the rest are ignored. */
export const MAX_QUERY_WORDS = 8;

/**
 * At most MAX_WORD_LENGTH code points a match: a run of letters as long as a 4 MiB body, matched whole, overflows
 * the regular expression engine's stack; a longer run is met as several matches, the first kept.
 */
const WORD = /[\p{L}\p{N}_]{1,64}/gu;
const MENTION = /(?:^|[^\p{L}\p{N}_.-])@([A-Za-z0-9][A-Za-z0-9_.-]{0,39})/gu;

/** The distinct lower-cased words of a text, in order of first appearance, at most `max`. */
export function wordsOf(text: string, max = MAX_WORDS_PER_ISSUE): string[] {
  const words = new Set<string>();
  // Where a match cut at the cap ended: a match starting there continues the same word and is not one.
  let continuesAt = -1;
  for (const match of text.toLowerCase().matchAll(WORD)) {
    const at = match.index ?? 0;
    const word = match[0];
    const capped = word.length >= MAX_WORD_LENGTH && [...word].length === MAX_WORD_LENGTH;
    const continuation = at === continuesAt;
    continuesAt = capped ? at + word.length : -1;
    if (continuation) continue;
    words.add(word.slice(0, MAX_WORD_LENGTH));
    if (words.size >= max) break;
  }
  return [...words];
}

/** The user names a text mentions (`@name`), lower-cased, without a trailing dot. */
export function mentionsOf(text: string): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(MENTION)) names.add(match[1].replace(/[.-]+$/, '').toLowerCase());
  return [...names].filter((name) => name !== '');
}

/** What the index holds for an issue: the words of its title and body (mentions are kept in issue_mention). */
export function indexEntries(title: string, body: string): string[] {
  return wordsOf(`${title}\n${body}`);
}

/** The words of a `q`: each must begin a word of the title or body. */
export function queryWords(q: string): string[] {
  return wordsOf(q, MAX_QUERY_WORDS);
}

/**
 * "Begins with `word`" as a range of the index, [word, next): `next` is `word` with its last character raised by
 * one, so every word that begins with `word` sorts inside it, by code point (SQLite's binary order, MariaDB's
 * utf8mb4_bin) and in a case-insensitive order alike, the words being lower-cased. A range is read through the
 * index on both databases; SQLite reads a LIKE through it only under conditions the index does not meet.
 */
export function prefixRange(word: string): [string, string] {
  const characters = [...word];
  const last = characters.pop()!.codePointAt(0)!;
  return [word, characters.join('') + String.fromCodePoint(last + 1)];
}
