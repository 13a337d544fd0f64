/**
 * The glob language of branch protection (docs/branch-protection.md): rule names match branch names with `/` as
 * the separator, file patterns match lower-cased paths with `/` and `.` as separators. `*` matches within one
 * segment, `**` across segments, `?` one character of a segment, `[abc]`, `[!a-z]` one character of a class,
 * `{a,b}` one of the alternatives (which may hold globs themselves), and `\` quotes the next character.
 */

/** The characters that make a rule name a glob; a name without any is a plain branch name. */
const SPECIAL = /[*?\\[\]{}]/;

export class GlobSyntaxError extends Error {}

/** Whether a rule name is a glob (else a plain branch name, compared without regard to case). */
export function isGlob(name: string): boolean {
  return SPECIAL.test(name);
}

/** A compiled glob: `test(text)` answers whether the whole text matches. */
export type Glob = RegExp;

/** Compiled globs by separators, then by pattern. */
const compiled = new Map<string, Map<string, Glob>>();

/**
 * Compiles `pattern` with `separators` (the characters `*` and `?` do not cross); throws GlobSyntaxError on an
 * unclosed class or alternation, an empty class, a stray closing bracket or a trailing `\`. Compiled globs are
 * kept (a bounded number), so a rule costs its compilation once.
 */
export function compileGlob(pattern: string, separators: string): Glob {
  let cache = compiled.get(separators);
  if (!cache) compiled.set(separators, (cache = new Map()));
  const known = cache.get(pattern);
  if (known) return known;
  const parser = new GlobParser(pattern, separators);
  const source = parser.sequence(false);
  if (parser.position < pattern.length) throw new GlobSyntaxError(`unexpected '${pattern[parser.position]}' at ${parser.position + 1}`);
  const glob = new RegExp(`^(?:${source})$`, 'su');
  if (cache.size >= 4096) cache.clear();
  cache.set(pattern, glob);
  return glob;
}

/** Why `pattern` is no valid glob, or null when it is one. */
export function globError(pattern: string, separators: string): string | null {
  try {
    compileGlob(pattern, separators);
    return null;
  } catch (error) {
    if (error instanceof GlobSyntaxError) return error.message;
    throw error;
  }
}

/** `text` as literal characters of a unicode-mode expression (where `\-` is allowed only inside a class). */
function escapeRegExp(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&');
}

/** `text` as literal characters inside a character class. */
function escapeInClass(text: string): string {
  return text.replace(/[\\^[\]/-]/g, '\\$&');
}

class GlobParser {
  position = 0;
  private readonly notSeparator: string;

  constructor(
    private readonly pattern: string,
    separators: string,
  ) {
    this.notSeparator = separators === '' ? '.' : `[^${escapeInClass(separators)}]`;
  }

  /** A run of glob elements up to the end, or (inside `{}`) up to the next `,` or `}`. */
  sequence(inAlternation: boolean): string {
    let out = '';
    const text = this.pattern;
    while (this.position < text.length) {
      const char = text[this.position];
      if (inAlternation && (char === ',' || char === '}')) return out;
      this.position++;
      switch (char) {
        case '*':
          if (text[this.position] === '*') {
            while (text[this.position] === '*') this.position++;
            out += '.*';
          } else out += `${this.notSeparator}*`;
          break;
        case '?':
          out += this.notSeparator;
          break;
        case '\\':
          if (this.position >= text.length) throw new GlobSyntaxError('trailing backslash');
          out += escapeRegExp(text[this.position++]);
          break;
        case '[':
          out += this.characterClass();
          break;
        case '{':
          out += this.alternation();
          break;
        case ']':
        case '}':
          throw new GlobSyntaxError(`unmatched '${char}' at ${this.position}`);
        default:
          out += escapeRegExp(char);
      }
    }
    if (inAlternation) throw new GlobSyntaxError("unclosed '{'");
    return out;
  }

  private characterClass(): string {
    const text = this.pattern;
    const start = this.position - 1;
    let negated = false;
    if (text[this.position] === '!') {
      negated = true;
      this.position++;
    }
    let body = '';
    let count = 0;
    while (this.position < text.length && text[this.position] !== ']') {
      let char = text[this.position++];
      if (char === '\\') {
        if (this.position >= text.length) throw new GlobSyntaxError('trailing backslash');
        char = text[this.position++];
      }
      if (text[this.position] === '-' && this.position + 1 < text.length && text[this.position + 1] !== ']') {
        this.position++;
        let to = text[this.position++];
        if (to === '\\') to = text[this.position++] ?? '';
        if (to === '' || to < char) throw new GlobSyntaxError(`bad range '${char}-${to}' at ${start + 1}`);
        body += `${escapeInClass(char)}-${escapeInClass(to)}`;
      } else body += escapeInClass(char);
      count++;
    }
    if (this.position >= text.length) throw new GlobSyntaxError(`unclosed '[' at ${start + 1}`);
    this.position++;
    if (count === 0) throw new GlobSyntaxError(`empty '[]' at ${start + 1}`);
    return negated ? `[^${body}]` : `[${body}]`;
  }

  private alternation(): string {
    const alternatives: string[] = [];
    for (;;) {
      alternatives.push(this.sequence(true));
      const char = this.pattern[this.position++];
      if (char === '}') break;
      if (char !== ',') throw new GlobSyntaxError("unclosed '{'");
    }
    return `(?:${alternatives.join('|')})`;
  }
}

/** The file patterns of a rule (`;`-separated, compared lower-cased), each compiled; an invalid one is skipped. */
export function filePatterns(patterns: string): Glob[] {
  const globs: Glob[] = [];
  for (const expression of patterns.toLowerCase().split(';')) {
    const trimmed = expression.trim();
    if (trimmed === '' || globError(trimmed, './') !== null) continue;
    globs.push(compileGlob(trimmed, './'));
  }
  return globs;
}

/** Why a `;`-separated file pattern list is invalid (the first bad pattern), or null. */
export function filePatternsError(patterns: string): string | null {
  for (const expression of patterns
    .toLowerCase()
    .split(';')
    .map((part) => part.trim())) {
    if (expression === '') continue;
    const error = globError(expression, './');
    if (error) return `${expression}: ${error}`;
  }
  return null;
}

/** Whether a changed path matches one of the compiled file patterns (paths compare lower-cased, trimmed). */
export function pathMatches(patterns: Glob[], path: string): boolean {
  const lower = path.trim().toLowerCase();
  return patterns.some((pattern) => pattern.test(lower));
}
