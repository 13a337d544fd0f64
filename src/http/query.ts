// Why: every query parameter is read by one rule, Forgejo's: a repeated key counts by its first value.

/** One query parameter's text, or undefined when absent; a repeated key (an array) gives its first value. */
export function queryString(value: unknown): string | undefined {
  const first: unknown = Array.isArray(value) ? value[0] : value;
  return typeof first === 'string' ? first : undefined;
}
