// Why: every store that searches by substring escapes the user's text the same way.

/** A LIKE pattern for "contains", with `!` escaping the pattern characters of the input. */
export function likePattern(text: string): string {
  return `%${text.toLowerCase().replace(/[!%_]/g, (character) => `!${character}`)}%`;
}
