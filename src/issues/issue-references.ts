/**
 * Issue references in text (commit messages): `#N`, `!N` (a pull request) and `owner/repo#N`, with the keyword
 * that may come just before one (`Fixes #3`, `reopens: a/b#4`). The same rules as the markdown worker's links
 * (src/markdown/render.worker.mjs) and Forgejo's: a reference starts the text or follows whitespace, a bracket
 * (or, for `#N`, a quote), and ends before whitespace, a closing bracket, the end, or punctuation followed by
 * one of those. A link to an issue or pull request page of this site counts as `owner/repo#N`.
 */

export type ReferenceAction = 'none' | 'closes' | 'reopens';

export interface IssueReference {
  /** Lower-cased; '' for a reference into the repository the text belongs to. */
  owner: string;
  name: string;
  index: number;
  action: ReferenceAction;
}

// `\s` is spelled out: ASCII whitespace only, as the rules were written.
const SPACE = '[\\t\\n\\f\\r ]';
const END = `(?:${SPACE}|$|\\)|\\]|[:;,.?!]${SPACE}|[:;,.?!]$)`;
const ISSUE_NUMERIC = new RegExp(`(?:${SPACE}|^|\\(|\\[|'|")([#!][0-9]+)(?:${SPACE}|$|\\)|\\]|'|"|[:;,.?!]${SPACE}|[:;,.?!]$)`, 'd');
const ISSUE_CROSS = new RegExp(`(?:${SPACE}|^|\\(|\\[)([0-9a-zA-Z_.-]+/[0-9a-zA-Z_.-]+[#!][0-9]+)${END}`, 'd');
const VALID_NAME = /^[a-z0-9_.-]+$/;
const CLOSE_KEYWORD = new RegExp(`(?:${SPACE}|^|\\(|\\[)(close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved):? $`, 'i');
const REOPEN_KEYWORD = new RegExp(`(?:${SPACE}|^|\\(|\\[)(reopen|reopens|reopened):? $`, 'i');
/** At most this many references are read from one text. */
const MAX_REFERENCES = 100;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Links to `{rootUrl}owner/repo/issues/N` (or `/pulls/N`) rewritten as `owner/repo#N` (`!N`). */
function shortenLinks(text: string, rootUrl: string): string {
  const link = new RegExp(`(${SPACE}|^|\\(|\\[)${escapeRegExp(rootUrl.trim())}([0-9a-zA-Z_.-]+/[0-9a-zA-Z_.-]+)/(issues|pulls)/([0-9]+)(?=${END})`, 'g');
  return text.replace(link, (_whole, lead: string, repo: string, kind: string, index: string) => `${lead}${repo}${kind === 'pulls' ? '!' : '#'}${index}`);
}

function actionBefore(text: string, start: number): ReferenceAction {
  const before = text.slice(0, start);
  if (CLOSE_KEYWORD.test(before)) return 'closes';
  if (REOPEN_KEYWORD.test(before)) return 'reopens';
  return 'none';
}

function reference(text: string, start: number, end: number): IssueReference | undefined {
  const whole = text.slice(start, end);
  const separator = whole.search(/[#!]/);
  const digits = whole.slice(separator + 1);
  const index = Number(digits);
  if (!Number.isSafeInteger(index)) return undefined;
  const repo = whole.slice(0, separator);
  if (repo === '') return { owner: '', name: '', index, action: actionBefore(text, start) };
  const parts = repo.toLowerCase().split('/');
  if (parts.length !== 2 || !VALID_NAME.test(parts[0]) || !VALID_NAME.test(parts[1])) return undefined;
  return { owner: parts[0], name: parts[1], index, action: actionBefore(text, start) };
}

/** Every match of `pattern` from left to right, each search starting after the previous reference. */
function scan(text: string, pattern: RegExp, found: IssueReference[]): void {
  let position = 0;
  while (found.length < MAX_REFERENCES) {
    const match = pattern.exec(text.slice(position));
    if (!match?.indices?.[1]) return;
    const [start, end] = match.indices[1].map((offset) => offset + position);
    const parsed = reference(text, start, end);
    if (parsed) found.push(parsed);
    // The next search starts right after the reference, so that what ended it may begin the next (`#1 #2`).
    position = end;
  }
}

/** The references of `text` in Forgejo's order: every `#N` first, then every `owner/repo#N`. */
export function findIssueReferences(text: string, rootUrl: string): IssueReference[] {
  const content = shortenLinks(text, rootUrl);
  const found: IssueReference[] = [];
  scan(content, ISSUE_NUMERIC, found);
  scan(content, ISSUE_CROSS, found);
  return found;
}
