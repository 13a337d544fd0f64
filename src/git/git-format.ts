// Why: the field and record separators and the pathspec environment that the plumbing readers share.

/** Separators of `--format` output: bytes that never occur in names or messages git prints. */
export const FIELD = '\x02';
export const RECORD = '\x01';
/** Paths callers give are names, never pathspec magic or globs. */
export const LITERAL = { GIT_LITERAL_PATHSPECS: '1' };
